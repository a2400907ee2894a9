#!/usr/bin/env python3
"""Compare the kernel's own selftests on the kevent kernel and on the
same config without CONFIG_KEVENT: one line per program, with its result
on each kernel (pass, fail, skip, and the counts of its TAP points or
[OK]/[FAIL] lines), then the verdict.

usage: selftests-compare.py [--timings FILE] KEVENT_LOG NOKEVENT_LOG

The logs are the serial logs of two boots of scripts/selftests-compare.sh
(the guest's /init in check mode; testsuite/report.py reads them apart).
It exits 1 when:
  - the kevent kernel fails (or skips) a program that the other passes,
    or passes fewer of its points;
  - a program of testsuite/nokevent.list does not pass, with no point
    skipped, on the kernel without kevent, or passes on the kevent
    kernel (it must tell the two apart);
  - a boot did not finish, had fewer than two CPUs, or its kernel log
    has a splat (BUG, WARNING, Oops, lockdep, hung task...).
"""
import argparse
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    'report', os.path.join(HERE, 'report.py'))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

# kselftest exit codes (tools/testing/selftests/kselftest.h)
KSFT = {0: 'pass', 1: 'fail', 2: 'pass', 3: 'fail', 4: 'skip'}
TOTALS = re.compile(r'^# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) '
                    r'xpass:(\d+) skip:(\d+) error:(\d+)')
OK_LINE = re.compile(r'\[(OK|PASS)\]|^PASS$')
FAIL_LINE = re.compile(r'\[(FAIL|FAILED)\]|^FAIL: ')
SKIP_LINE = re.compile(r'\[(SKIP|UNSUPPORTED)\]')


class Result:
    def __init__(self, status, passed=0, failed=0, skipped=0, why=''):
        self.status = status        # pass, fail, skip, not run
        self.passed, self.failed, self.skipped = passed, failed, skipped
        self.why = why

    def cell(self):
        counts = f'{self.passed}/{self.failed}/{self.skipped}'
        text = f'{self.status} {counts}'
        if self.why:
            text += f' ({self.why})'
        return text


def counts(lines):
    """pass, fail, skip counts: from kselftest's Totals line, else from
    TAP points, else from [OK]/[FAIL]/[SKIP] lines (the timers tests
    print those, and Totals of 0 from ksft_exit_pass())."""
    for line in reversed(lines):
        m = TOTALS.match(line)
        if m:
            p, f, xf, xp, s, e = map(int, m.groups())
            bail = sum(1 for l in lines if l.startswith('Bail out!'))
            if p + f + xf + xp + s + e + bail:
                return p + xf, f + xp + e + bail, s
            break
    p = f = s = 0
    tap = False
    for line in lines:
        if line.startswith('Bail out!'):   # ksft_exit_fail_msg()
            f += 1
            continue
        m = report.TAP_POINT.match(line)
        if m:
            tap = True
            if m.group(1) == 'not ok':
                f += 1
            elif re.search(r'#\s*skip', m.group(3), re.I):
                s += 1
            else:
                p += 1
    if tap:
        return p, f, s
    for line in lines:
        if FAIL_LINE.search(line):
            f += 1
        elif SKIP_LINE.search(line):
            s += 1
        elif OK_LINE.search(line):
            p += 1
    return p, f, s


def result_of(run, limit):
    if run is None:
        return Result('not run')
    p, f, s = counts(run.out)
    if not run.exited or run.status is None:
        return Result('fail', p, f, s, 'did not finish')
    status = run.status
    if status == 137:
        return Result('fail', p, f, s, f'killed: time limit {limit} s'
                      if limit else 'killed')
    if status in KSFT:
        verdict = KSFT[status]
        if verdict == 'pass' and f:
            verdict = 'fail'
        return Result(verdict, p, f, s)
    return Result('fail', p, f, s, report.describe(status))


def load(path):
    try:
        return report.parse_file(path)
    except OSError:
        return None


def splats(g):
    found = []
    for when, text, _ in g.kernel:
        if report.SPLATS.search(text) and not report.MARKER.match(text):
            found.append(f'[{when}] {text}' if when is not None else text)
    return found


def boot_problems(name, g):
    problems = []
    if g is None:
        return [f'{name}: no serial log']
    if not g.begun:
        problems.append(f'{name}: the guest did not start the run')
    elif not g.done:
        problems.append(f'{name}: the guest did not finish '
                        f'({report.stop_reason(g)})')
    cpus = report.cpu_count(g.env.get('cpus', '')) or 0
    if cpus < report.MIN_CPUS:
        problems.append(f'{name}: {cpus} CPU online, want '
                        f'{report.MIN_CPUS}')
    for line in splats(g)[:10]:
        problems.append(f'{name}: kernel log: {line}')
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--timings')
    ap.add_argument('--list', default=os.path.join(HERE, 'selftests.list'))
    # testsuite/nokevent.list as scripts/suite-list.sh guest expands it,
    # with the twins.
    ap.add_argument('--nokevent-list', required=True)
    ap.add_argument('kevent_log')
    ap.add_argument('nokevent_log')
    args = ap.parse_args()

    names, limits = [], {}
    for path in (args.list, args.nokevent_list):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if not parts or parts[0].startswith('#'):
                    continue
                names.append(parts[0])
                if len(parts) > 2 and parts[1] == 'bin/kselftest':
                    limits[parts[0]] = parts[2]
    with open(args.nokevent_list) as f:
        probes = {l.split()[0] for l in f if l.split() and
                  not l.startswith('#')}

    logs = {'kevent': load(args.kevent_log),
            'nokevent': load(args.nokevent_log)}
    runs = {}
    for k, g in logs.items():
        runs[k] = {}
        for run in (g.runs if g else []):
            runs[k].setdefault(run.name, run)

    failures = []
    for k, g in logs.items():
        failures += boot_problems(f'{k} kernel', g)

    rows = []
    for name in names:
        a = result_of(runs['kevent'].get(name), limits.get(name))
        b = result_of(runs['nokevent'].get(name), limits.get(name))
        mark = ''
        if name in probes:
            # nokevent.c: passes without kevent, fails with it.
            if b.status != 'pass' or b.skipped:
                failures.append(f'{name}: must pass with no skipped point '
                                f'on the kernel without kevent, got '
                                f'{b.cell()}')
                mark = '<- FAIL'
            elif a.status == 'pass':
                failures.append(f'{name}: passes on the kevent kernel too: '
                                f'it does not tell the kernels apart')
                mark = '<- FAIL'
            else:
                mark = '(expected: fails with kevent)'
        elif (b.status == 'pass' and a.status != 'pass') or \
                a.passed < b.passed:
            failures.append(f'{name}: regression: {a.cell()} with kevent, '
                            f'{b.cell()} without')
            mark = '<- REGRESSION'
        rows.append((name, a.cell(), b.cell(), mark))

    w1 = max(len(r[0]) for r in rows + [('test',)]) + 2
    w2 = max(len(r[1]) for r in rows + [('', 'kevent kernel')]) + 2
    w3 = max(len(r[2]) for r in rows + [('', '', 'nokevent kernel')]) + 2
    head = f'{"test":{w1}}{"kevent kernel":{w2}}nokevent kernel'
    print('selftests-compare: result, then passed/failed/skipped points, '
          'per kernel')
    print(head)
    print('-' * (w1 + w2 + w3))
    for name, a, b, mark in rows:
        print(f'{name:{w1}}{a:{w2}}{b:{w3}}{mark}'.rstrip())
    print('-' * (w1 + w2 + w3))
    for k in logs:
        g = logs[k]
        if g:
            print(f'{k} kernel: {g.env.get("kernel", "?")}, '
                  f'{g.env.get("accel", "?")}, CPUs {g.env.get("cpus", "?")}')
    if args.timings:
        try:
            with open(args.timings) as f:
                t = ', '.join(f'{a} {b} s' for a, b in
                              (l.split() for l in f if len(l.split()) == 2))
            print(f'wall times: {t}')
        except OSError:
            pass
    for line in failures:
        print(f'FAIL {line}')
    if failures:
        print(f'selftests-compare: {len(failures)} problems')
        return 1
    print('selftests-compare: no regression: the kevent kernel passes '
          'every selftest that the kernel without kevent passes, and '
          'nokevent.c tells the two apart')
    return 0


if __name__ == '__main__':
    sys.exit(main())
