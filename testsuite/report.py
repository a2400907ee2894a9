#!/usr/bin/env python3
"""Turn the TAP of the host checks and the guest's serial log into one
report: a line per test point, per program and per kernel-log check, and
a last line "N passed, N failed[, N skipped]".  Exit 1 if anything failed.

usage: report.py [--expected FILE] [--host HOST_TAP] [--trace]
                 [--variant NAME] GUEST_LOG

--expected names the programs the build made, one "NAME KIND" a line
(KIND tap or example; the Makefile writes build/guest/expected): each
must appear in the log, or it fails as "not run".  A TAP program must
print its plan before its first point and run exactly the points it
planned; an example must exit 0.

The guest's /init (testsuite/guest/init) frames everything: ### BEGIN,
### ENV, ### LIST, ### TEST/### EXIT per program, and after each program
### KLOG NAME ... ### KLOG END, the kernel log since the previous dump
with the markers "kevent-test: start/end NAME".  A kernel splat is
blamed on the program during which (by kernel time) it appeared; the
console shows WARNING and above, so a splat survives a guest that dies.

TAP points may carry a tag "[cell SOURCE FLAG PATH]"; the passing points
per cell make the flag x source matrix, printed before the summary.

--trace (make check) adds the traceability report of
scripts/traceability.py: every ERRORS entry of the manual, every
command and flag page (man2const) and every statement marked TESTED
must be named by the tag of a passing point ("[kevent_wait.2 EINVAL
no-ring]", "[KEVENT_REQ_ET.2const]", "[kevent_socket.7
end-of-stream]"), or it fails.  --variant (normal or debug; default: debug when the log has
a kmemleak report) says whether the ENOMEM entries must be shown by
the fault injection of this run or may be left to the debug variant.

--conformance (make conformance: a kernel of one's own) reports what the
kernel lacks (debugfs, kmemleak, fault injection, a second CPU) as
skipped; a kernel without kevent (### NOKEVENT) fails, with nothing run.
"""
import argparse
import os
import re
import signal
import sys
import traceback

# guestlog.py, and scripts/traceability.py (imported for --trace) and
# kernel_sources.py, without a __pycache__.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'scripts'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestlog  # noqa: E402
import kernel_sources  # noqa: E402

# A kernel log line: "[    3.141592] text", from the console or a dump.
KTIME = re.compile(r'\[\s*(\d+\.\d+)\] ?')
# What a kernel splat begins with, one literal string a line: the
# conformance bundle's runner greps dmesg for the same (grep -F -f).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       'splats')) as _f:
    SPLATS = re.compile('|'.join(re.escape(l) for l in _f.read().split('\n')
                                 if l))
# Shown with a splat to place it, not a splat by themselves.
CONTEXT = re.compile(r'^RIP: |^ \? |^ [a-z_0-9.]+\+0x')
MARKER = re.compile(r'^kevent-test: (start|end) (\S+)\s*$')
TAP_POINT = re.compile(r'^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$')
TAP_PLAN = re.compile(r'^1\.\.(\d+)\s*(#.*)?$')
EXIT_LINE = re.compile(r'^### EXIT (\S+) (-?\d+)\s*(.*)$')
CELL = re.compile(r'\[cell\s+([^\]\s]+)\s+([^\]\s]+)\s+([^\]\s]+)\s*\]')
# The rows of the matrix: every source of the kernel's table.
SOURCES = tuple(name for name, _ in kernel_sources.sources())
FLAGS = ('ONESHOT', 'ET', 'WAKEUP_ALL', 'LAST_CHECK', 'ALWAYS_QUEUE')
PATHS = ('get_events', 'ring')
MIN_CPUS = 2


class Report:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def result(self, status, name, detail=()):
        print(f'{status} {name}')
        for line in detail:
            print(f'    {line}')
        if status == 'PASS':
            self.passed += 1
        elif status == 'FAIL':
            self.failed += 1
        else:
            self.skipped += 1

    def summary(self):
        text = f'{self.passed} passed, {self.failed} failed'
        if self.skipped:
            text += f', {self.skipped} skipped'
        return text


def describe(status):
    """What an exit status says, e.g. 'killed by SIGSEGV (status 139)'."""
    if status is None:
        return 'did not finish'
    if 128 < status < 128 + 65:
        sig = status - 128
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f'signal {sig}'
        why = {
            signal.SIGKILL: ': the time limit per program, or the OOM killer',
            signal.SIGSEGV: ': a crash',
            signal.SIGBUS: ': a crash',
            signal.SIGABRT: ': abort()',
        }.get(sig, '')
        return f'killed by {name} (exit status {status}){why}'
    if status == 127:
        return 'exit status 127: the program was not found'
    if status == 126:
        return 'exit status 126: the program could not be run'
    return f'exit status {status}'


class Run:
    """One program's stretch of the log."""

    def __init__(self, name):
        self.name = name
        self.out = []
        self.status = None
        self.exited = False
        self.klog = None        # the kernel lines of its ### KLOG section


class Guest:
    """The guest's serial log, taken apart."""

    def __init__(self):
        self.begun = self.done = False
        self.env = {}
        self.listed = []
        self.runs = []
        self.sections = {}      # KLOG name -> kernel texts (boot, final)
        self.kernel = []        # (time, text, run open on the console)
        self.seen = set()
        self.kmemleak = None
        self.qemu = {}
        self.malformed = []
        self.nokevent = None    # why, when kevent.require=1 found none


def console_items(lines):
    """Split the serial log into ('user', text) and ('kernel', time, text).

    A kernel message may land in the middle of a line a program was
    writing: "ok 5 - fo[   3.2] WARNING: ...", then "o" on the next line
    after the kernel's.  The user text is put back together.
    """
    pending = None
    for line in lines:
        m = KTIME.search(line)
        if m and m.start() == 0:
            yield ('kernel', float(m.group(1)), line[m.end():].rstrip())
            continue
        if m:
            user, ktext = line[:m.start()], line[m.end():]
            if pending is not None:
                yield ('user', pending)
            pending = user
            yield ('kernel', float(m.group(1)), ktext.rstrip())
            continue
        if pending is not None:
            if line.startswith('###'):
                yield ('user', pending)
            else:
                line = pending + line
            pending = None
        yield ('user', line)
    if pending is not None:
        yield ('user', pending)


def parse_file(path):
    """The guest of the serial log at path; OSError if it cannot be read."""
    return parse(guestlog.read(path))


def parse(text_lines):
    g = Guest()
    run = None
    section = None          # the KLOG section being read, and its name
    section_name = None
    in_kmemleak = False
    for item in console_items(text_lines):
        if item[0] == 'kernel':
            _, when, text = item
            key = (when, text)
            if section is not None:
                section.append(text)
            if key not in g.seen:
                g.seen.add(key)
                g.kernel.append((when, text, run.name if run else None))
            continue
        line = item[1]
        if line.endswith('### BEGIN'):
            g.begun = True
        elif line.startswith('### ENV '):
            parts = line.split(None, 3)
            if len(parts) >= 3:
                g.env[parts[2]] = parts[3].strip() if len(parts) > 3 else ''
        elif line.startswith('### LIST '):
            g.listed.extend(line.split()[2:3])
        elif line.startswith('### TEST '):
            parts = line.split()
            if run is not None:
                g.malformed.append(f'{run.name}: no ### EXIT line before '
                                   f'the next program')
            run = Run(parts[2] if len(parts) > 2 else '?')
            g.runs.append(run)
        elif line.startswith('### EXIT '):
            m = EXIT_LINE.match(line)
            if run is None or not m or m.group(1) != run.name:
                g.malformed.append(f'malformed or misplaced line: {line!r}')
                if run is not None and m is None:
                    run.exited = True   # unknown status, still ended
                    run = None
                continue
            run.status = int(m.group(2))
            run.exited = True
            run = None
        elif line.startswith('### KLOG END'):
            section = section_name = None
        elif line.startswith('### KLOG '):
            name = line.split()[2] if len(line.split()) > 2 else '?'
            section, section_name = [], name
            target = [r for r in g.runs if r.name == name and r.klog is None]
            if target:
                target[-1].klog = section
            else:
                g.sections[name] = section
        elif line.startswith('### KMEMLEAK END'):
            in_kmemleak = False
        elif line.startswith('### KMEMLEAK'):
            in_kmemleak = True
            g.kmemleak = []
        elif line.startswith('### HOST '):
            parts = line.split()
            for i in range(2, len(parts) - 1, 2):
                g.qemu[parts[i]] = parts[i + 1]
        elif line.startswith('### NOKEVENT'):
            g.nokevent = line[len('### NOKEVENT'):].strip() or 'no reason'
        elif line == '### DONE':
            g.done = True
        elif in_kmemleak:
            if line.strip():
                g.kmemleak.append(line)
        elif section is not None:
            # Not a kernel line: no time stamp (CONFIG_PRINTK_TIME?).
            section.append(line)
            g.kernel.append((None, line, section_name))
        elif run is not None:
            run.out.append(line)
    return g


def score_tap(report, name, lines, status, host=False):
    """Score the TAP of one program that exited with status (or None)."""
    failed_before = report.failed
    points = 0
    plan = plan_at = None
    first_point_at = None
    numbering = None
    bails = []
    pending = None
    for i, line in enumerate(lines):
        m = TAP_POINT.match(line)
        if m:
            if pending:
                report.result(*pending)
            points += 1
            if first_point_at is None:
                first_point_at = i
            if (m.group(2) is not None and int(m.group(2)) != points and
                    numbering is None):
                numbering = f'point {m.group(2)} where {points} was due'
            desc = m.group(3)
            full = f'{name}: {desc}'
            if m.group(1) == 'ok' and re.search(r'#\s*skip', desc, re.I):
                pending = ('SKIP', full, [])
            elif m.group(1) == 'ok':
                pending = ('PASS', full, [])
            else:
                pending = ('FAIL', full, [])
            continue
        if pending and pending[0] == 'FAIL' and line.startswith('#'):
            pending[2].append(line)
            continue
        if line.startswith('Bail out!'):
            bails.append(line)
            continue
        m = TAP_PLAN.match(line)
        if m and plan is None:
            plan, plan_at = int(m.group(1)), i
    if pending:
        report.result(*pending)
    how = describe(status)
    tail = [l for l in lines[-10:]
            if not TAP_POINT.match(l) and not TAP_PLAN.match(l)]
    if points == 0:
        report.result('FAIL', f'{name}: no TAP points ({how})',
                      bails + tail)
    elif plan is None:
        report.result('FAIL', f'{name}: no TAP plan ({how})', bails + tail)
    else:
        if not host and plan_at > first_point_at:
            report.result('FAIL', f'{name}: the plan comes after the first '
                          'point (call plan() before any point)')
        if plan != points:
            report.result('FAIL', f'{name}: planned {plan} points, ran '
                          f'{points} ({how})')
    if numbering:
        report.result('FAIL', f'{name}: points out of order: {numbering}')
    for line in bails:
        report.result('FAIL', f'{name}: {line}')
    if report.failed == failed_before:
        if status is None:
            report.result('FAIL', f'{name}: did not finish', tail)
        elif status != 0:
            report.result('FAIL', f'{name}: {how}', tail)
    elif status not in (0, 1) and points and plan == points:
        # tap_done() exits 1 after a failed point; anything else says more
        report.result('FAIL', f'{name}: {how}', tail)


def score_example(report, name, lines, status):
    tail = [l.rstrip() for l in lines[-15:]]
    if status == 0:
        report.result('PASS', f'{name}: runs and exits 0')
    else:
        report.result('FAIL', f'{name}: runs and exits 0: {describe(status)}',
                      tail)


def is_tap(lines):
    return any(TAP_POINT.match(l) or TAP_PLAN.match(l) for l in lines)


def cpu_count(spec):
    """'0-1' or '0,2-3' (sysfs cpu/online) -> number of CPUs, or None."""
    n = 0
    try:
        for part in spec.split(','):
            lo, _, hi = part.strip().partition('-')
            n += int(hi or lo) - int(lo) + 1
    except ValueError:
        return None
    return n


def windows_of(g):
    """[name, start, end] of each program, from the kernel's markers."""
    windows = []
    for t, text, _ in g.kernel:
        m = MARKER.match(text)
        if not m:
            continue
        if m.group(1) == 'start':
            windows.append([m.group(2), t, None])
        else:
            for w in reversed(windows):
                if w[0] == m.group(2) and w[2] is None:
                    w[2] = t
                    break
    return windows


def where(windows, when, pos_run):
    """The program during which a kernel line of time when appeared."""
    if not windows or when is None:
        return pos_run or 'boot', 'during'
    last = None
    for w in windows:
        if w[1] <= when:
            last = w
    if last is None:
        return 'boot', 'during'
    if last[2] is None or when <= last[2]:
        return last[0], 'during'
    return last[0], 'after'


def kernel_checks(report, g):
    boot = g.sections.get('boot')
    if boot is None or not any('Linux version' in t for t in boot):
        report.result('FAIL', 'guest kernel log: the boot log is missing '
                      "(no 'Linux version' line in ### KLOG boot)")
    for run in g.runs:
        if not run.exited:
            continue
        if run.klog is None:
            report.result('FAIL', f'{run.name}: no kernel log section '
                          '(### KLOG) after it')
            continue
        have = {MARKER.match(t).groups() for t in run.klog
                if MARKER.match(t)}
        if ('start', run.name) not in have or ('end', run.name) not in have:
            report.result('FAIL', f'{run.name}: its kernel log section lacks '
                          'the start/end markers (empty or lost)')
    if g.done and 'final' not in g.sections:
        report.result('FAIL', 'guest kernel log: no final section '
                      '(### KLOG final)')
    if g.kmemleak:
        report.result('FAIL', 'kmemleak: unreferenced objects',
                      g.kmemleak[:40])
    blamed = {}
    windows = windows_of(g)
    for i, (when, text, pos_run) in enumerate(g.kernel):
        if not SPLATS.search(text) or MARKER.match(text):
            continue
        key = where(windows, when, pos_run)
        if key[0] == 'boot' and pos_run:
            key = (pos_run, 'during')   # on the console while it ran
        lines = blamed.setdefault(key, set())
        lines.add(i)
        # the lines that place it: RIP and the first frames
        for j in range(i + 1, min(i + 8, len(g.kernel))):
            if CONTEXT.search(g.kernel[j][1]):
                lines.add(j)
    for (prog, how), indexes in blamed.items():
        if prog == 'boot':
            what = 'during boot'
        elif prog == 'final':
            what = 'after the last program (final checks, kmemleak)'
        elif how == 'during':
            what = f'while {prog} ran'
        else:
            what = f'after {prog} ended, before the next program'
        name = prog if prog not in ('boot', 'final') else 'guest'
        detail = []
        for i in sorted(indexes)[:40]:
            when, text, _ = g.kernel[i]
            stamp = '[    no time ]' if when is None else f'[{when:12.6f}]'
            detail.append(f'{stamp} {text}')
        report.result('FAIL', f'{name}: kernel splat {what}', detail)
    if not blamed:
        report.result('PASS', 'guest kernel log: no BUG, WARNING, Oops, '
                      'lockdep, KASAN, UBSAN, hung task, soft lockup, RCU '
                      'stall or kmemleak report')


# What a kernel of one's own may lack (make conformance): the ENV fact
# of /init, and what the run then cannot check.
FEATURES = (
    ('debugfs', 'no debugfs: kmemleak cannot be read'),
    ('kmemleak', 'no kmemleak (CONFIG_DEBUG_KMEMLEAK): leaks are not '
     'looked for'),
    ('fail-nth', 'no fault injection (/proc/thread-self/fail-nth): the '
     'ENOMEM paths are not provoked (faults skips its points)'),
)


def identity(report, g, conformance):
    """The kernel the run saw; in conformance, a skip per missing part."""
    print(f'kernel: {g.env.get("uname") or g.env.get("kernel") or "unknown"}')
    print(f'kevent: {g.nokevent or g.env.get("kevent") or "unknown"}')
    facts = [f'{k} {g.env[k]}' for k, _ in FEATURES if k in g.env]
    if 'config' in g.env:
        facts.append(g.env['config'])
    if facts:
        print('needed: ' + ', '.join(facts))
    if not conformance:
        return
    for key, why in FEATURES:
        if g.env.get(key) == 'no':
            report.result('SKIP', f'kernel: {why}')


def env_check(report, g, conformance=False):
    cpus = g.env.get('cpus')
    n = cpu_count(cpus) if cpus else None
    accel = g.env.get('accel', 'unknown').upper()
    info = (f'accelerator {accel}, clocksource '
            f'{g.env.get("clocksource") or "unknown"}, kernel '
            f'{g.env.get("kernel") or "unknown"}')
    if n is None:
        report.result('FAIL', f'guest: online CPUs unknown ({info})')
    elif n < MIN_CPUS:
        # Another kernel may be built without SMP: the races then run on
        # one CPU and prove less, which is a skip, never a pass.
        report.result('SKIP' if conformance else 'FAIL',
                      f'guest: {n} CPU online ({cpus}), the tests '
                      f'need {MIN_CPUS}; {info}')
    else:
        report.result('PASS', f'guest: {n} CPUs online ({cpus}); {info}')


def stop_reason(g):
    for _, text, _ in g.kernel:
        if 'Kernel panic' in text:
            return text[text.index('Kernel panic'):][:100]
    status = g.qemu.get('qemu-exit')
    if status == '124':
        return f'the boot time limit of {g.qemu.get("limit", "?")} s ran out'
    if status:
        return f'QEMU ended with status {status}'
    return 'panic, time limit or a lost console'


def guest(report, path, expected, matrix, trace=None, conformance=False):
    try:
        text = guestlog.read(path)
    except OSError as err:
        report.result('FAIL', f'guest: no serial log ({err})')
        text = []
    g = parse(text)
    kinds = dict(expected or [])
    if not g.begun:
        report.result('FAIL', 'guest: the testsuite did not start')
    else:
        identity(report, g, conformance)
        env_check(report, g, conformance)
    if g.nokevent:
        report.result('FAIL', f'kernel: it has no kevent ({g.nokevent}); '
                      'no test was run, no kevent system call was made')
        return g
    for line in g.malformed:
        report.result('FAIL', f'guest log: {line}')
    for run in g.runs:
        out = run.out
        kind = kinds.get(run.name) or ('tap' if is_tap(out) else 'example')
        status = run.status if run.exited else None
        if run.exited and run.status is None:
            # the malformed ### EXIT line is reported; score the rest
            report.result('FAIL', f'{run.name}: exit status unreadable')
            status = 0
        if kind == 'tap':
            score_tap(report, run.name, out, status)
            matrix.collect(run.name, out)
            if trace is not None:
                trace.collect(run.name, out)
        else:
            score_example(report, run.name, out, status)
    ran = {r.name for r in g.runs}
    names = [n for n, _ in expected or []]
    names += [n for n in g.listed if n not in names]
    for name in names:
        if name in ran:
            continue
        if not g.begun:
            why = 'the testsuite did not start'
        elif expected is not None and g.listed and name not in g.listed:
            why = 'built, but not in testsuite/tests.list'
        elif not g.done:
            why = f'the guest stopped before it: {stop_reason(g)}'
        else:
            why = 'listed, but the log has no ### TEST line for it'
        report.result('FAIL', f'{name}: not run ({why})')
    if g.begun and not g.done:
        if g.runs and not g.runs[-1].exited:
            report.result('FAIL', f'guest: stopped while {g.runs[-1].name} '
                          f'ran ({stop_reason(g)})')
        else:
            report.result('FAIL', f'guest: did not finish ({stop_reason(g)})')
    if g.begun:
        kernel_checks(report, g)
    return g


class Matrix:
    """Passing points per (source, flag, path) from their [cell ...] tags."""

    def __init__(self, mandatory):
        self.count = {}
        self.tagged = 0
        self.bad = []
        self.mandatory = mandatory

    def collect(self, prog, lines):
        for line in lines:
            m = TAP_POINT.match(line)
            if not m:
                continue
            for cell in CELL.finditer(m.group(3)):
                src, flag, path = cell.groups()
                self.tagged += 1
                if (src not in SOURCES or flag not in FLAGS or
                        path not in PATHS):
                    self.bad.append(f'{prog}: {cell.group(0)}')
                    continue
                if m.group(1) == 'ok' and not re.search(r'#\s*skip',
                                                        m.group(3), re.I):
                    key = (src, flag, path)
                    self.count[key] = self.count.get(key, 0) + 1

    def report(self, report):
        if not self.tagged and not self.mandatory:
            # Mandatory once testsuite/tests/matrix.c is built (its name
            # is then in the expected list) or any point carries a tag.
            print('matrix: no [cell ...] tagged points yet')
            return
        print('matrix: passing points per cell, kevent_get_events / ring')
        print(f'  {"":12}' + ''.join(f'{f:>12}   ' for f in FLAGS).rstrip())
        for src in SOURCES:
            row = ''.join(
                f'{self.count.get((src, f, "get_events"), 0):>10}/'
                f'{self.count.get((src, f, "ring"), 0):<4}' for f in FLAGS)
            print(f'  {src:12}{row}'.rstrip())
        for tag in self.bad:
            report.result('FAIL', f'matrix: malformed tag {tag}')
        empty, detail = 0, []
        for src in SOURCES:
            cells = [f'{f} {p}' for f in FLAGS for p in PATHS
                     if not self.count.get((src, f, p))]
            empty += len(cells)
            if cells:
                detail.append(f'{src}: ' + ', '.join(cells))
        total = len(SOURCES) * len(FLAGS) * len(PATHS)
        if empty:
            report.result('FAIL', f'matrix: {empty} of {total} cells have '
                          'no passing point', detail)
        else:
            report.result('PASS', f'matrix: all {total} source x flag x '
                          'path cells have a passing point')


def trace_report(report, trace):
    """The traceability report: what no passing tagged point checks."""
    import traceability
    good, summary, _, uncovered, lint, bad = \
        traceability.report_lines(trace)
    for line in summary:
        print(line)
    def count(n, one, many):
        return f'{n} {one if n == 1 else many}'

    if lint:
        report.result('FAIL', 'traceability: ' +
                      count(len(lint), 'problem', 'problems') +
                      ' with the ERRORS-ID lines of the manual', lint[:60])
    if bad:
        report.result('FAIL', 'traceability: ' +
                      count(len(bad), 'tag that names', 'tags that name') +
                      ' no statement, or several',
                      [f'{w}: {m}' for w, m in bad[:60]])
    if uncovered:
        report.result('FAIL', 'traceability: ' +
                      count(len(uncovered), 'statement', 'statements') +
                      ' of the manual that no passing tagged point checks',
                      [traceability.describe(st) for st in uncovered])
    if good:
        report.result('PASS', 'traceability: every ERRORS entry, every '
                      'command and flag page and every statement marked '
                      'TESTED is checked by a passing tagged point')


def read_expected(report, path):
    try:
        with open(path, errors='replace') as f:
            rows = [l.split() for l in f.read().splitlines() if l.strip()]
    except OSError as err:
        report.result('FAIL', f'expected programs: cannot read ({err})')
        return []
    expected, bad = [], []
    for row in rows:
        if len(row) != 2 or row[1] not in ('tap', 'example'):
            bad.append(' '.join(row)[:80])
            continue
        expected.append((row[0], row[1]))
    if bad:
        report.result('FAIL', f'expected programs: {len(bad)} bad lines in '
                      f'{path} (want "NAME tap|example")', bad[:10])
    if not expected:
        report.result('FAIL', f'expected programs: {path} lists none')
    return expected


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--host', action='append', default=[])
    ap.add_argument('--expected')
    ap.add_argument('--trace', action='store_true',
                    help='the traceability report (scripts/traceability.py)')
    ap.add_argument('--variant', help='normal or debug, for --trace')
    ap.add_argument('--conformance', action='store_true',
                    help='a kernel of one\'s own: what it lacks is skipped')
    ap.add_argument('guest_log')
    args = ap.parse_args()
    report = Report()
    try:
        for path in args.host:
            try:
                with open(path, errors='replace') as f:
                    lines = f.read().splitlines()
            except OSError as err:
                report.result('FAIL', f'host: no host checks ({err})')
                continue
            status = 1 if any(l.startswith('not ok') for l in lines) else 0
            score_tap(report, 'host', lines, status, host=True)
        expected = None
        if args.expected:
            expected = read_expected(report, args.expected)
        names = {n for n, _ in expected or []}
        matrix = Matrix('matrix' in names)
        trace = None
        if args.trace:
            import traceability
            trace = traceability.Trace(variant=args.variant)
        g = guest(report, args.guest_log, expected, matrix, trace,
                  args.conformance)
        if not g.nokevent:      # one failure says it all: nothing ran
            matrix.report(report)
        if trace is not None and not g.nokevent:
            if not args.variant:
                trace.variant = ('debug' if g.kmemleak is not None
                                 else 'normal')
            trace_report(report, trace)
    except Exception as err:    # never end without the summary line
        report.result('FAIL', f'report.py: internal error: {err!r}',
                      traceback.format_exc().splitlines()[-6:])
    print(report.summary())
    return 1 if report.failed else 0


if __name__ == '__main__':
    sys.exit(main())
