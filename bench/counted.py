#!/usr/bin/env python3
"""Turn a counted boot into instructions per event.

usage: counted.py --log GUEST_LOG --marks KCOUNT_LOG [--obj KERNEL_OBJ]
                  [--own-obj KERNEL_OBJ] [--doc FILE] [--smoke --tap FILE]

The guest's kbench prints a "COUNT key=value ..." line after each
counted phase; bench/kcount.c, the QEMU plugin, logs a "MARK ..." line
with its counts at each marker, and with a System.map the "PROF ..."
lines of the kernel functions that ran.  The n-th COUNT line goes with
the n-th pair of markers (MARK_BEGIN, MARK_END).  Every figure is the
minimum over the repetitions: what else runs in a one-vCPU guest
(interrupts, timers) only ever adds.  A mechanism's own instructions
are its count less that of the null round, which makes the same writes
and reads without a mechanism.  Every count leaves out the pipes'
inode time stamps (CLOCK_FUNCTIONS), whose updates follow the clock.

With --doc the tables go between "<!-- counted:begin -->" and
"<!-- counted:end -->" of that file.  With --smoke the checks of make
check are written as TAP to --tap: the plugin saw markers, every phase
counted kernel and user instructions, every COUNT line has its markers,
and nothing failed (kbench fails on a lost or doubled event).  Exit 1
when anything failed.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

# bench/report.py's table(): no __pycache__ left in bench/ for it.
sys.dont_write_bytecode = True
from report import table  # noqa: E402

BEGIN = '<!-- counted:begin -->'
END = '<!-- counted:end -->'

HARVEST = [
    ('null', 'null round (writes and reads alone)'),
    ('epoll-et', 'epoll, EPOLLET'),
    ('uring', 'io_uring multishot poll, DEFER_TASKRUN'),
    ('uring-nodt', 'io_uring multishot poll, default task work'),
    ('getev', 'kevent_get_events, KEVENT_REQ_ET'),
    ('ring', 'kevent ring (kevent_wait + kevent_commit), ET'),
    ('direct', 'kevent direct ring (KEVENT_INIT_DIRECT), ET'),
    ('epoll-lt', 'epoll, level-triggered'),
    ('getev-lt', 'kevent_get_events, level-triggered'),
    ('ring-lt', 'kevent ring, level-triggered'),
]
HTTP = [
    ('epoll', 'kbench httpd, epoll'),
    ('uring', 'kbench httpd, io_uring multishot poll'),
    ('ring', 'kbench httpd, kevent ring'),
    ('getev', 'kbench httpd, kevent_get_events'),
    ('direct', 'kbench httpd, kevent direct ring'),
]
CHURN = [
    ('epoll', 'epoll_ctl ADD + DEL, one call each'),
    ('kevent-1', 'kevent_ctl, 1 entry a call'),
    ('kevent-8', 'kevent_ctl, 8 entries a call'),
    ('kevent-64', 'kevent_ctl, 64 entries a call'),
    ('kevent-1024', 'kevent_ctl, 1,024 entries a call'),
    ('kevent-poll-64', 'kevent_ctl, 64 a call, KEVENT_POLL'),
    ('uring-1', 'io_uring, 1 SQE a submit (POLL_ADD, POLL_REMOVE)'),
    ('uring-8', 'io_uring, 8 SQEs a submit'),
    ('uring-64', 'io_uring, 64 SQEs a submit'),
]
# The descriptors of the churn, in the order of the tables: kbench's
# kind, what they are, and kevent's source for them.
CHURN_KINDS = [('pipe', 'pipes', 'KEVENT_PIPE'),
               ('unix', 'AF_UNIX stream sockets', 'KEVENT_SOCKET'),
               ('eventfd', 'eventfds', 'KEVENT_POLL')]
# Which kernel functions are a mechanism's own: those its objects
# define (inlined ones count in their callers), and kevent's hooks in
# the rest of the kernel, whose names have kevent as a word of their
# own (pipe_kevent_notify, not clockevents_program_event).
KEVENT_HOOK = re.compile(r'(^|_)kevent')
OWN_OBJS = {
    'kevent': ['kernel/kevent/*.o'],
    'epoll': ['fs/eventpoll.o'],
    'io_uring': ['io_uring/*.o'],
}
# The kernel functions that update a pipe's inode time stamps, from
# its write (file_update_time()) and its read (touch_atime()).  Each
# round makes the same writes and reads, but how many of them find the
# clock ticked since the pipe's last, and update the stamps, depends on
# where the ticks fall ("The clock" in doc/benchmarks.md measures it).
# Every count leaves these functions out.
CLOCK_FUNCTIONS = frozenset([
    'file_update_time', 'inode_needs_update_time', 'touch_atime',
    'atime_needs_update', 'current_time', 'ktime_get_coarse_real_ts64',
    'timestamp_truncate', 'inode_update_time', 'generic_update_time',
    '__mark_inode_dirty', '__mnt_want_write_file', '__mnt_drop_write_file',
    '__mnt_want_write', '__mnt_drop_write', '__mnt_is_readonly',
])
MECH_OWNER = {'ring': 'kevent', 'getev': 'kevent', 'direct': 'kevent',
              'kevent': 'kevent',
              'epoll': 'epoll', 'uring': 'io_uring'}


def kv(text):
    return dict(t.split('=', 1) for t in text.split() if '=' in t)


class Phase:
    def __init__(self, count, begin, end, prof):
        self.info = count
        self.clock = sum(n for fn, n in prof if fn in CLOCK_FUNCTIONS)
        self.kernel = (int(end['kernel']) - int(begin['kernel']) -
                       self.clock)
        self.user = int(end['user']) - int(begin['user'])
        self.syscalls = int(end['syscalls']) - int(begin['syscalls'])
        self.prof = prof
        self.events = int(count['events'])

    @property
    def total(self):
        return self.kernel + self.user


def parse(log_path, marks_path, problems):
    counts, fails, done, qemu = [], [], False, None
    with open(log_path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\r\n')
            if line.startswith('COUNT '):
                counts.append(kv(line[6:]))
            elif line.startswith('FAIL'):
                fails.append(line)
            elif line.startswith('### DONE'):
                done = True
            elif line.startswith('### HOST qemu-exit'):
                qemu = int(line.split()[3])
    header, marks, prof = None, [], {}
    try:
        with open(marks_path) as f:
            for line in f:
                word, _, rest = line.partition(' ')
                if word == 'KCOUNT':
                    header = kv(rest)
                elif word == 'MARK':
                    marks.append(kv(rest))
                elif word == 'PROF':
                    p = kv(rest)
                    prof.setdefault(int(p['n']), []).append(
                        (p['fn'], int(p['insns'])))
    except OSError as err:
        problems.append(f'no plugin log: {err}')
    for line in fails:
        problems.append(line)
    if not done:
        problems.append('the guest did not reach ### DONE')
    if qemu not in (0, None):
        problems.append(f'QEMU ended with status {qemu}')
    if header is None:
        problems.append('the plugin did not load (no KCOUNT line)')
    phases = []
    pairs = []
    begin = None
    for m in marks:
        if m['id'] == '1':
            if begin is not None:
                # kbench died inside a phase: it printed no COUNT line.
                problems.append(f'the phase begun at marker {begin["n"]} '
                                'never ended')
            begin = m
        elif m['id'] == '2' and begin is not None:
            pairs.append((begin, m))
            begin = None
        else:
            problems.append(f'marker {m["n"]} (id {m["id"]}) ends no phase')
    if len(pairs) != len(counts):
        problems.append(f'{len(counts)} COUNT lines but {len(pairs)} pairs '
                        'of markers')
    for c, (b, e) in zip(counts, pairs):
        phases.append(Phase(c, b, e, prof.get(int(e['n']), [])))
    return header, phases


def own_functions(obj):
    """The names each mechanism's objects define, from nm."""
    own = {}
    for owner, pats in OWN_OBJS.items():
        names = set()
        files = [p for pat in pats for p in glob.glob(os.path.join(obj, pat))]
        if files:
            out = subprocess.run(['nm', '--defined-only'] + files,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[1] in 'tTwW':
                    names.add(parts[2])
        own[owner] = names
    return own


def owner_of(mech):
    return MECH_OWNER.get(mech.split('-')[0])


def in_own(phase, own, mech):
    owner = owner_of(mech)
    if owner is None or not phase.prof:
        return None
    names = own.get(owner, set())
    return sum(n for fn, n in phase.prof
               if fn in names or (owner == 'kevent' and
                                  KEVENT_HOOK.search(fn)))


def best(phases):
    """The repetition with the fewest instructions, and max/min."""
    b = min(phases, key=lambda p: p.total)
    w = max(phases, key=lambda p: p.total)
    return b, w.total / b.total if b.total else float('inf')


def f0(v):
    return f'{v:.0f}'


def clock_lines(phases):
    """What the pipes' time stamps, left out of every count, came to."""
    per_ev = [p.clock / p.events for p in phases
              if p.info.get('wl') == 'harvest' and
              p.info.get('kind') == 'pipe']
    if not per_ev:
        return []
    return [f'Every count leaves out the pipes\' inode time stamps '
            f'(file_update_time(), touch_atime() and what they call): '
            f'how many of a round\'s writes and reads update them '
            f'depends on where the clock\'s ticks fall.  In this boot '
            f'they came to {min(per_ev):.0f} to {max(per_ev):.0f} '
            f'instructions per event of a pipe harvest.', '']


def report(phases, own):
    lines = clock_lines(phases)
    harvest = {}
    for p in phases:
        i = p.info
        if i.get('wl') == 'harvest':
            key = (i['kind'], int(i['n']), int(i['ready']), i['mech'])
            harvest.setdefault(key, []).append(p)
    churn = {}
    for p in phases:
        i = p.info
        if i.get('wl') == 'churn':
            churn.setdefault((i['kind'], int(i['n']), i['mech']),
                             []).append(p)
    reps = max((len(v) for v in list(harvest.values()) +
                list(churn.values())), default=0)
    for kind, n in sorted({(k[0], k[1]) for k in harvest}):
        readies = sorted({k[2] for k in harvest if k[:2] == (kind, n)})
        mechs = [m for m, _ in HARVEST
                 if any((kind, n, r, m) in harvest for r in readies)]
        rounds = {}
        for key, ps in harvest.items():
            rounds[key[2]] = int(ps[0].info['rounds'])

        def per_ev(m, r):
            ps = harvest.get((kind, n, r, m))
            if not ps:
                return None
            b, spread = best(ps)
            return b, spread

        null = {r: per_ev('null', r) for r in readies}
        lines.append(f'**Own instructions per event** (harvest, {kind}, '
                     f'{n:,} registered, {rounds[readies[0]]} rounds of k '
                     f'ready; the mechanism\'s count less the null '
                     f'round\'s, minimum of {reps}):')
        lines.append('')
        rows = []
        for m in mechs:
            if m == 'null':
                continue
            row = [dict(HARVEST)[m]]
            for r in readies:
                x, z = per_ev(m, r), null[r]
                if x is None or z is None:
                    row.append('-')
                    continue
                ev = x[0].events
                row.append(f0((x[0].total - z[0].total) / ev))
            rows.append(row)
        lines += table(['mechanism'] + [f'k={r}' for r in readies], rows)
        lines.append('')
        lines.append('Per event, whole round (kernel + user), its '
                     'system calls, the instructions in the mechanism\'s '
                     'own kernel functions (profile), and the spread '
                     'over the repetitions (max/min of the round\'s '
                     'count):')
        lines.append('')
        rows = []
        for r in readies:
            for m in mechs:
                x = per_ev(m, r)
                if x is None:
                    continue
                b, spread = x
                ev = b.events
                mine = in_own(b, own, m)
                rows.append([r, m, f0(b.total / ev), f0(b.kernel / ev),
                             f0(b.user / ev), f'{b.syscalls / ev:.2f}',
                             '-' if mine is None else f0(mine / ev),
                             f'{spread:.3f}'])
        lines += table(['k', 'mechanism', 'total', 'kernel', 'user',
                        'syscalls', 'in own functions', 'max/min'], rows)
        lines.append('')
        waits = sum(int(p.info.get('retries', 0)) for r in readies
                    for p in harvest.get((kind, n, r, 'null'), []))
        if waits:
            lines.append(f'The null rounds found a byte not there yet '
                         f'{waits} times (read again after '
                         f'sched_yield(); counted in them).')
            lines.append('')
    order = [c[0] for c in CHURN_KINDS]
    for kind, n in sorted({k[:2] for k in churn},
                          key=lambda k: (order.index(k[0]), k[1])):
        _, what, source = CHURN_KINDS[order.index(kind)]
        lines.append(f'**Instructions per add + remove** ({n:,} {what} '
                     f'registered and removed, never ready; kevent_ctl '
                     f'with {source} unless said; minimum of {reps}):')
        lines.append('')
        rows = []
        for m, title in CHURN:
            ps = churn.get((kind, n, m))
            if not ps:
                continue
            b, spread = best(ps)
            ev = b.events
            mine = in_own(b, own, m)
            rows.append([title, f0(b.total / ev), f0(b.kernel / ev),
                         f0(b.user / ev), f'{b.syscalls / ev:.3f}',
                         '-' if mine is None else f0(mine / ev),
                         f'{spread:.3f}'])
        lines += table(['mechanism', 'total', 'kernel', 'user', 'syscalls',
                        'in own functions', 'max/min'], rows)
        lines.append('')
    lines += http_lines(phases, own, reps)
    scale = {}
    for p in phases:
        i = p.info
        if i.get('wl') == 'scale':
            scale.setdefault((int(i['idle']), i['mech']), []).append(p)
    if scale:
        idles = sorted({k[0] for k in scale})
        ready = next(iter(scale.values()))[0].info['ready']
        lines.append(f'**Instructions per event beside idle registrations** '
                     f'({ready} of {ready} pipes ready a round, beside idle '
                     f'eventfds, KEVENT_POLL for kevent; whole round, '
                     f'minimum of {reps}; last column: the largest over '
                     f'the smallest):')
        lines.append('')
        rows = []
        for m, title in HARVEST:
            if not any((i, m) in scale for i in idles):
                continue
            vals = []
            for i in idles:
                ps = scale.get((i, m))
                vals.append(best(ps)[0].total / ps[0].events if ps
                            else None)
            got = [v for v in vals if v]
            rows.append([title] + ['-' if v is None else f0(v)
                                   for v in vals] +
                        [f'{max(got) / min(got):.3f}' if got else '-'])
        lines += table(['mechanism'] + [f'{i:,} idle' for i in idles] +
                       ['spread'], rows)
        lines.append('')
    return lines


def http_lines(phases, own, reps):
    """Per request: the whole system's count, and the mechanism's."""
    http = {}
    for p in phases:
        i = p.info
        if i.get('wl') == 'http':
            http.setdefault((int(i['conns']), i['mech']), []).append(p)
    lines = []
    for conns in sorted({k[0] for k in http}):
        n = next(ps for (c, _), ps in http.items() if c == conns)[0].events
        lines.append(f'**Instructions per HTTP request** ({n:,} '
                     f'keep-alive requests on {conns} connection'
                     f'{"s" if conns > 1 else ""}, one at a time on each, '
                     f'kbench httpc against each server, both in the '
                     f'guest: the whole system\'s count per request, and '
                     f'the instructions in the mechanism\'s own kernel '
                     f'functions; minimum of {reps}):')
        lines.append('')
        base = {}
        rows = []
        for m, title in HTTP:
            ps = http.get((conns, m))
            if not ps:
                continue
            b, spread = best(ps)
            ev = b.events
            mine = in_own(b, own, m)
            if m == 'epoll':
                base = {'total': b.total / ev, 'own': mine and mine / ev}
            rows.append([title, f0(b.total / ev), f0(b.kernel / ev),
                         f0(b.user / ev), f'{b.syscalls / ev:.2f}',
                         '-' if mine is None else f0(mine / ev),
                         f'{b.total / ev / base["total"]:.2f}'
                         if base else '-',
                         f'{mine / ev / base["own"]:.2f}'
                         if mine is not None and base.get('own') else '-',
                         f'{spread:.3f}'])
        lines += table(['server', 'total', 'kernel', 'user', 'syscalls',
                        'in own functions', 'total / epoll\'s',
                        'own / epoll\'s', 'max/min'], rows)
        lines.append('')
    return lines


def profile_lines(phases, top=12):
    """The functions of the ET cells of the first set at its largest k."""
    out = []
    cells = {}
    first = None
    for p in phases:
        i = p.info
        if i.get('wl') != 'harvest':
            continue
        first = first or (i['kind'], i['n'])
        if (i['kind'], i['n']) == first and i['mech'] in (
                'getev', 'ring', 'direct', 'epoll-et', 'uring'):
            cells.setdefault((int(i['ready']), i['mech']), []).append(p)
    most = max((k[0] for k in cells), default=0)
    for key in sorted(k for k in cells if k[0] == most):
        b, _ = best(cells[key])
        if not b.prof:
            continue
        out.append(f'Profile, harvest of {first[0]}s, n={first[1]}, '
                   f'k={key[0]}, {key[1]}: kernel instructions per event '
                   f'by function, top {top}:')
        out.append('')
        out += table(['function', 'per event'],
                     [[fn, f'{n / b.events:.1f}']
                      for fn, n in b.prof[:top]])
        out.append('')
    return out


def write_doc(path, block):
    text = ''
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    new = BEGIN + '\n' + '\n'.join(block).rstrip() + '\n' + END
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + '.*?' + re.escape(END),
                      lambda m: new, text, flags=re.S)
    else:
        text = text.rstrip() + '\n\n' + new + '\n'
    with open(path, 'w') as f:
        f.write(text)


def smoke(header, phases, problems, tap_path):
    points = []

    def point(ok, desc):
        points.append(('ok' if ok else 'not ok', desc))

    point(header is not None, 'the plugin loaded (KCOUNT line)')
    point(len(phases) > 0, f'the plugin saw {len(phases)} counted phases '
          'between markers')
    zero = [p for p in phases if p.kernel <= 0 or p.user <= 0]
    point(phases and not zero, 'every phase counted kernel and user '
          'instructions' + (f' ({len(zero)} did not)' if zero else ''))
    mechs = [p for p in phases if p.info.get('mech') != 'null']
    nosys = [p for p in mechs if p.syscalls <= 0]
    point(mechs and not nosys, 'every mechanism\'s phase made system calls')
    noprof = [p for p in phases if not p.prof]
    point(phases and not noprof, 'every phase has a kernel profile')
    point(not problems, 'every COUNT line has its markers; no event lost '
          'or doubled; the guest finished' +
          (': ' + '; '.join(problems[:3]) if problems else ''))
    with open(tap_path, 'w') as f:
        f.write(f'1..{len(points)}\n')
        for i, (res, desc) in enumerate(points, 1):
            f.write(f'{res} {i} - counted bench smoke: {desc}\n')
    for res, desc in points:
        print(f'  counted: {res} - {desc}')
    return all(res == 'ok' for res, _ in points)


def setup_lines(obj, header):
    """What was measured: the tree, the kernel's allocator, QEMU."""
    commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'],
                            capture_output=True, text=True).stdout.strip()
    slab = 'unknown allocator'
    try:
        with open(os.path.join(obj, '.config')) as f:
            config = f.read()
        for name in ('SLUB', 'SLOB', 'SLAB'):
            if f'CONFIG_{name}=y' in config:
                slab = name
    except (OSError, TypeError):
        pass
    qemu = subprocess.run(['qemu-system-x86_64', '--version'],
                          capture_output=True, text=True).stdout
    qemu = qemu.splitlines()[0] if qemu else 'QEMU'
    name = os.path.basename(os.path.normpath(obj or '?'))
    kind = {'obj': 'the test kernel', 'obj-bench': 'the bench kernel'}.get(
        name, 'kernel')
    return [f'Measured in one boot: kevent tree {commit}, {kind} '
            f'(build/{name}, {slab}), '
            f'{qemu}, TCG, one vCPU, plugin in {header.get("mode", "?")} '
            'mode.', '']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--log', required=True)
    ap.add_argument('--marks', required=True)
    ap.add_argument('--obj')
    ap.add_argument('--own-obj', help='the objects that tell a mechanism\'s '
                    'own functions (default: --obj)')
    ap.add_argument('--doc', default='')
    ap.add_argument('--smoke', action='store_true')
    ap.add_argument('--partial', action='store_true',
                    help='write --doc even when something failed, with '
                    'the problems listed')
    ap.add_argument('--tap')
    args = ap.parse_args()
    problems = []
    header, phases = parse(args.log, args.marks, problems)
    if args.smoke:
        return 0 if smoke(header, phases, problems, args.tap) else 1
    own_obj = args.own_obj or args.obj
    own = own_functions(own_obj) if own_obj else {}
    block = setup_lines(args.obj, header or {}) + report(phases, own)
    block += profile_lines(phases)
    print('\n'.join(block))
    for p in problems:
        print(f'FAIL counted: {p}')
    if args.doc and problems and args.partial:
        block += ['Problems of this run:', '']
        block += [f'- {p}' for p in problems]
    if args.doc and (args.partial or not problems):
        write_doc(args.doc, block)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
