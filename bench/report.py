#!/usr/bin/env python3
"""Turn the serial log of the bench guest into tables and plots.

usage: report.py --log GUEST_LOG [--host-load FILE] [--plots DIR]
                 [--doc FILE]

Reads the "BENCH key=value ..." lines of bench/kbench.c and the
"### HTTP ... ### HTTP-END" blocks of bench/guest.sh, checks them
(every workload ran, nothing failed, every HTTP run's counts agree on
both sides), and prints the tables: median, min and max over the
repetitions, and the ratios of kevent to epoll and to io_uring, always
as a speed-up (above 1: kevent is faster).  With --plots it draws PNGs
with gnuplot; with --doc it writes the tables between the markers
"<!-- kbench:begin -->" and "<!-- kbench:end -->" of that file (made if
missing), leaving the rest of the file alone.  Exit 1 if anything
failed.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

BEGIN = '<!-- kbench:begin -->'
END = '<!-- kbench:end -->'

MECHS = ['ring', 'getev', 'direct', 'epoll-lt', 'epoll-et', 'uring', 'poll']
MECH_TITLE = {
    'ring': 'kevent ring (kevent_wait + kevent_commit)',
    'getev': 'kevent_get_events',
    'direct': 'kevent direct ring (KEVENT_INIT_DIRECT)',
    'epoll-lt': 'epoll, level-triggered',
    'epoll-et': 'epoll, EPOLLET',
    'uring': 'io_uring multishot poll',
    'poll': 'poll(2)',
    'read': 'blocking read(2) (floor)',
}
CHURN = ['kevent-1', 'kevent-64', 'kevent-1024', 'kevent-poll-64', 'epoll',
         'uring-64']
CHURN_TITLE = {
    'kevent-1': 'kevent_ctl, 1 entry a call (KEVENT_PIPE)',
    'kevent-64': 'kevent_ctl, 64 entries a call (KEVENT_PIPE)',
    'kevent-1024': 'kevent_ctl, 1,024 entries a call (KEVENT_PIPE)',
    'kevent-poll-64': 'kevent_ctl, 64 entries a call (KEVENT_POLL)',
    'epoll': 'epoll_ctl, one call each',
    'uring-64': 'io_uring, 64 SQEs a submit',
}
SERVERS = ['ring', 'epoll', 'uring', 'evserver']
SERVER_TITLE = {
    'ring': 'kbench httpd, kevent ring',
    'epoll': 'kbench httpd, epoll',
    'uring': 'kbench httpd, io_uring',
    'evserver': 'examples/evserver (HTTP/1.0, closes)',
}
TIMERS = ['kevent-timer', 'timerfd', 'posix-signal', 'posix-kevent']
TIMER_TITLE = {
    'kevent-timer': 'KEVENT_TIMER',
    'timerfd': 'timerfd',
    'posix-signal': 'POSIX timer, SIGEV_SIGNAL + sigtimedwait',
    'posix-kevent': 'POSIX timer, SIGEV_KEVENT',
}


class Log:
    def __init__(self):
        self.env = {}
        self.bench = []
        self.http = []
        self.fails = []
        self.stages = []
        self.begun = self.done = False


def parse_kv(text):
    out = {}
    for tok in text.split():
        if '=' in tok:
            k, v = tok.split('=', 1)
            out[k] = v
    return out


def parse(path):
    log = Log()
    with open(path, errors='replace') as f:
        lines = [l.rstrip('\r\n') for l in f]
    block = None
    for line in lines:
        if line.startswith('### BEGIN'):
            log.begun = True
        elif line.startswith('### DONE'):
            log.done = True
        elif line.startswith('### ENV '):
            parts = line.split(None, 3)
            if len(parts) >= 3:
                log.env[parts[2]] = parts[3] if len(parts) > 3 else ''
        elif line.startswith('### STAGE '):
            log.stages.append(line[10:])
        elif line.startswith('BENCH '):
            log.bench.append(parse_kv(line[6:]))
        elif line.startswith('FAIL'):
            log.fails.append(line)
        elif re.search(r'BUG:|WARNING:|Oops|Kernel panic|soft lockup', line):
            log.fails.append('kernel: ' + line.strip())
        elif line.startswith('### HTTP '):
            block = {'head': parse_kv(line[9:]), 'out': []}
        elif line.startswith('### HTTP-END'):
            if block is not None:
                log.http.append(block)
                block['server_out'] = []
        elif block is not None and line.startswith(('httpd: ', 'evserver')):
            block.setdefault('server_out', []).append(line)
        elif block is not None and 'server_out' not in block:
            block['out'].append(line)
    return log


def to_ms(text):
    m = re.match(r'([\d.]+)(us|ms|s)$', text)
    if not m:
        return None
    v = float(m.group(1))
    return {'us': v / 1000, 'ms': v, 's': v * 1000}[m.group(2)]


def parse_wrk(out):
    r = {'errors': 0}
    for line in out:
        s = line.strip()
        m = re.match(r'Requests/sec:\s+([\d.]+)', s)
        if m:
            r['rps'] = float(m.group(1))
        m = re.match(r'99%\s+(\S+)', s)
        if m:
            r['p99'] = to_ms(m.group(1))
        m = re.match(r'50%\s+(\S+)', s)
        if m:
            r['p50'] = to_ms(m.group(1))
        m = re.match(r'(\d+) requests in', s)
        if m:
            r['requests'] = int(m.group(1))
        m = re.match(r'Socket errors: connect (\d+), read (\d+), '
                     r'write (\d+), timeout (\d+)', s)
        if m:
            r['errors'] += int(m.group(2)) + int(m.group(3))
            r['backlog'] = int(m.group(1)) + int(m.group(4))
            r['socket_errors'] = s
        m = re.match(r'Non-2xx or 3xx responses: (\d+)', s)
        if m:
            r['errors'] += int(m.group(1))
    return r


def parse_httperf(out):
    r = {'errors': 0}
    for line in out:
        m = re.match(r'Total: connections (\d+) requests (\d+) replies (\d+) '
                     r'test-duration ([\d.]+) s', line)
        if m:
            r['requests'] = int(m.group(3))
            r['rps'] = int(m.group(3)) / float(m.group(4))
        m = re.match(r'Reply time \[ms\]: response ([\d.]+)', line)
        if m:
            r['p50'] = float(m.group(1))
        m = re.match(r'Errors: total (\d+)', line)
        if m:
            r['errors'] += int(m.group(1))
        m = re.match(r'Reply status: 1xx=\d+ 2xx=(\d+)', line)
        if m:
            r['ok'] = int(m.group(1))
    return r


def served(block):
    for line in block.get('server_out', []):
        m = re.search(r'served=(\d+)', line)
        if m:
            return int(m.group(1))
    return None


class Stats:
    def __init__(self, values):
        self.values = sorted(values)
        self.median = statistics.median(values)
        self.min = self.values[0]
        self.max = self.values[-1]
        self.n = len(values)


def group(rows, keys, metric):
    out = {}
    for r in rows:
        if metric not in r:
            continue
        k = tuple(r.get(x) for x in keys)
        out.setdefault(k, []).append(float(r[metric]))
    return {k: Stats(v) for k, v in out.items()}


def fmt(v, digits=3):
    if v is None:
        return '-'
    if v >= 1e6:
        return f'{v / 1e6:.{digits}g}M'
    if v >= 1e3:
        return f'{v / 1e3:.{digits}g}k'
    return f'{v:.{digits}g}'


def cell(s, digits=3):
    if s is None:
        return '-'
    if s.n == 1:
        return fmt(s.median, digits)
    return f'{fmt(s.median, digits)} ({fmt(s.min, digits)}-{fmt(s.max, digits)})'


def ratio(a, b):
    if a is None or b is None or not b.median:
        return '-'
    return f'{a.median / b.median:.2f}x'


def inv_ratio(a, b):
    """Speed-up of a over b when the metric is a cost."""
    if a is None or b is None or not a.median:
        return '-'
    return f'{b.median / a.median:.2f}x'


def inv_ratio_min(a, b):
    """Speed-up of a over b from their smallest costs."""
    if a is None or b is None or not a.min:
        return '-'
    return f'{b.min / a.min:.2f}x'


def table(head, rows):
    out = ['| ' + ' | '.join(head) + ' |',
           '|' + '|'.join('---' for _ in head) + '|']
    out += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return out


class Report:
    def __init__(self, log, plots):
        self.log = log
        self.md = []
        self.plots = plots
        self.problems = list(log.fails)
        self.notes = []
        self.targets = []

    def need(self, what, got):
        stage = what.split()[0].lower().replace('wake-up', 'wake')
        params = self.log.env.get('params', '')
        if 'stages:' in params and stage not in params.split('stages:')[1]:
            return
        if not got:
            self.problems.append(f'missing: {what}')

    def harvest(self):
        allrows = [r for r in self.log.bench if r.get('wl') == 'harvest']
        rows = [r for r in allrows if r.get('ready') == '100']
        evs = group(rows, ['kind', 'n', 'mech'], 'evs')
        hevs = group(rows, ['kind', 'n', 'mech'], 'hevs')
        confs = sorted({(r['kind'], r['n']) for r in rows},
                       key=lambda c: (c[0] != 'pipe', int(c[1])))
        self.need('harvest results', confs)
        md = self.md
        md += ['## 1. Harvest', '',
               'Events per second of a whole round (write a byte into 100 '
               'of N descriptors, harvest, read each reported byte), '
               'median (min-max) over the repetitions.  In brackets '
               'after the configuration: the rate of the harvest calls '
               'alone (see "What is measured").', '']
        head = ['mechanism'] + [f'{k} N={int(n):,}' for k, n in confs]
        body = []
        for m in MECHS:
            if not any((k, n, m) in evs for k, n in confs):
                continue
            body.append([MECH_TITLE[m]] +
                        [f'{cell(evs.get((k, n, m)))} '
                         f'[{fmt(hevs[(k, n, m)].median) if (k, n, m) in hevs else "-"}]'
                         for k, n in confs])
        md += table(head, body) + ['']
        head = ['speed-up of the kevent ring over'] + \
               [f'{k} N={int(n):,}' for k, n in confs]
        body = []
        for peer in ['epoll-lt', 'epoll-et', 'uring', 'poll']:
            body.append([MECH_TITLE[peer]] +
                        [ratio(evs.get((k, n, 'ring')), evs.get((k, n, peer)))
                         for k, n in confs])
        body.append(['(kevent_get_events over epoll-et)'] +
                    [ratio(evs.get((k, n, 'getev')),
                           evs.get((k, n, 'epoll-et'))) for k, n in confs])
        md += table(head, body) + ['']
        # The fastest round and call over every repetition: the cost with
        # the least interference from the host.
        rmin = {}
        hmin = {}
        for r in rows:
            if 'rmin' not in r:
                continue
            key = (r['kind'], r['n'], r['mech'])
            a = int(r['ready'])
            rmin[key] = min(rmin.get(key, 1e30), int(r['rmin']) / a)
            if int(r['hmin']) < 2 ** 63:
                hmin[key] = min(hmin.get(key, 1e30), int(r['hmin']) / a)
        if rmin:
            md += ['Nanoseconds per event in the fastest round over all '
                   'repetitions [in the fastest harvest call]: the host\'s '
                   'load only ever adds time, so these are the costs with '
                   'the least interference.', '']
            head = ['mechanism'] + [f'{k} N={int(n):,}' for k, n in confs]
            body = []
            for m in MECHS:
                if not any((k, n, m) in rmin for k, n in confs):
                    continue
                body.append([MECH_TITLE[m]] + [
                    f'{fmt(rmin[(k, n, m)])} [{fmt(hmin.get((k, n, m)))}]'
                    if (k, n, m) in rmin else '-' for k, n in confs])
            md += table(head, body) + ['']
            self.rmin = rmin
        for k, n in confs:
            ring = evs.get((k, n, 'ring'))
            best = max((evs[(k, n, e)] for e in ('epoll-lt', 'epoll-et')
                        if (k, n, e) in evs), key=lambda s: s.median,
                       default=None)
            ur = evs.get((k, n, 'uring'))
            if ring and best:
                self.targets.append(
                    (f'harvest {k} N={int(n):,}: ring >= 1.5x epoll_wait '
                     f'(the better of LT and ET)',
                     ring.median / best.median, 1.5))
            if ring and ur:
                self.targets.append(
                    (f'harvest {k} N={int(n):,}: ring >= io_uring',
                     ring.median / ur.median, 1.0))
        if self.plots is not None:
            data = []
            for m in MECHS:
                vals = [evs[(k, n, m)].median / 1e3 if (k, n, m) in evs
                        else 0 for k, n in confs]
                data.append((m, vals))
            self.plots.bars('harvest', 'Harvest: events/s (thousands), '
                            'whole round', [f'{k} N={int(n)}'
                                            for k, n in confs], data)
        self.decompose(allrows)

    def decompose(self, rows):
        """Cost of a harvest call and of each event in it, from the
        rounds of 1, 10 and 100 events over 1,000 pipes."""
        rows = [r for r in rows if r.get('kind') == 'pipe' and
                r.get('n') == '1000']
        # ns in the fastest call that took a whole round's events (the
        # least disturbed by the host), else the mean of the round
        per_round = {}
        for r in rows:
            a = int(r['ready'])
            calls_per_round = int(r['calls']) / int(r['rounds'])
            ns = 1e9 * a / float(r['hevs'])
            if 'hmin' in r and int(r['hmin']) < 2 ** 63:
                ns = int(r['hmin'])
            per_round.setdefault((r['mech'], a), []).append(
                (ns, calls_per_round))
        sizes = sorted({a for _, a in per_round})
        if len(sizes) < 2:
            return
        md = self.md
        md += ['### What a harvest call costs, and each event in it', '',
               'Nanoseconds of the fastest harvest call that took a whole '
               'round of 1, 10 and 100 ready pipes (of 1,000), over all '
               'repetitions, and the straight line through them: the cost '
               'of a call that returns nothing more than its first event, '
               'and of each further event.', '']
        body = []
        for m in MECHS:
            pts = []
            cells = []
            for a in sizes:
                v = per_round.get((m, a))
                if not v:
                    cells.append('-')
                    continue
                med = min(x[0] for x in v)
                cpr = statistics.median(x[1] for x in v)
                pts.append((a, med))
                cells.append(f'{fmt(med)}' + (f' ({cpr:.1f} calls)'
                                               if cpr > 1.05 else ''))
            if len(pts) < 2:
                continue
            n = len(pts)
            mx = sum(p[0] for p in pts) / n
            my = sum(p[1] for p in pts) / n
            sxx = sum((p[0] - mx) ** 2 for p in pts)
            slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
            base = my - slope * mx
            body.append([MECH_TITLE[m]] + cells +
                        [fmt(base + slope), fmt(slope)])
        md += table(['mechanism'] + [f'{a} a round' for a in sizes] +
                    ['first event (call)', 'each further event'],
                    body) + ['']

    def churn(self):
        rows = [r for r in self.log.bench if r.get('wl') == 'churn']
        ops = group(rows, ['mech'], 'ops')
        nspo = group(rows, ['mech'], 'nspo')
        best = group(rows, ['mech'], 'minnspo')
        self.need('churn results', ops)
        md = self.md
        md += ['## 2. Registration churn', '',
               'Registrations added and removed per second (one add plus '
               'one remove counts once), 1,024 empty pipes, median '
               '(min-max); ns per add+remove; speed-up over epoll_ctl and '
               'over io_uring with 64 SQEs a submit.', '']
        body = []
        for v in CHURN:
            s = ops.get((v,))
            if not s:
                continue
            body.append([CHURN_TITLE[v], cell(s),
                         fmt(nspo[(v,)].median) if (v,) in nspo else '-',
                         fmt(best[(v,)].min) if (v,) in best else '-',
                         ratio(s, ops.get(('epoll',))),
                         ratio(s, ops.get(('uring-64',))),
                         inv_ratio_min(best.get((v,)), best.get(('epoll',)))])
        md += table(['how', 'add+remove/s', 'ns each', 'ns each, best '
                     'cycle', 'vs epoll', 'vs io_uring',
                     'vs epoll, best cycles'], body) + ['']
        for v in ('kevent-64', 'kevent-1024'):
            if (v,) in ops and ('epoll',) in ops:
                self.targets.append(
                    (f'churn: {v} >= 3x epoll_ctl',
                     ops[(v,)].median / ops[('epoll',)].median, 3.0))
        if self.plots is not None:
            self.plots.bars('churn', 'Registration churn: add+remove/s '
                            '(thousands)', [v for v in CHURN if (v,) in ops],
                            [('rate', [ops[(v,)].median / 1e3 for v in CHURN
                                       if (v,) in ops])])

    def scale(self):
        rows = [r for r in self.log.bench if r.get('wl') == 'scale']
        ns = group(rows, ['idle', 'mech'], 'nspe')
        hns = group(rows, ['idle', 'mech'], 'hnspe')
        best = group(rows, ['idle', 'mech'], 'rminpe')
        sizes = sorted({int(r['idle']) for r in rows})
        self.need('scale results', sizes)
        md = self.md
        md += ['## 3. Scaling with idle registrations', '',
               'Nanoseconds per delivered event (100 pipes made ready per '
               'round; write, harvest and read), with 10 to 100,000 idle '
               'registrations (eventfds that never fire) in the same '
               'instance, median (min-max) [harvest calls alone].  '
               '"spread" is the largest median over the smallest.', '']
        head = ['mechanism'] + [f'{s:,} idle' for s in sizes] + ['spread']
        body = []
        mechs = [m for m in MECHS if any((str(s), m) in ns for s in sizes)]
        for m in mechs:
            meds = [ns[(str(s), m)].median for s in sizes if (str(s), m) in ns]
            spread = max(meds) / min(meds) if meds else None
            body.append([MECH_TITLE[m]] +
                        [f'{cell(ns.get((str(s), m)))} '
                         f'[{fmt(hns[(str(s), m)].median) if (str(s), m) in hns else "-"}]'
                         for s in sizes] +
                        [f'{spread:.2f}' if spread else '-'])
            if m == 'ring' and spread:
                self.targets.append(
                    ('scale: ring cost per event flat within 10% from '
                     f'{sizes[0]:,} to {sizes[-1]:,} idle (spread <= 1.10)',
                     spread, -1.10))
        md += table(head, body) + ['']
        if best:
            md += ['Nanoseconds per event in the fastest round of all '
                   'repetitions:', '']
            body = []
            for m in mechs:
                mins = [best[(str(s), m)].min for s in sizes
                        if (str(s), m) in best]
                body.append([MECH_TITLE[m]] +
                            [fmt(best[(str(s), m)].min)
                             if (str(s), m) in best else '-'
                             for s in sizes] +
                            [f'{max(mins) / min(mins):.2f}' if mins
                             else '-'])
                if m == 'ring' and mins:
                    self.targets.append(
                        ('scale: ring cost per event, fastest rounds, flat '
                         'within 10% (spread <= 1.10)',
                         max(mins) / min(mins), -1.10))
            md += table(head, body) + ['']
        head = ['speed-up of the kevent ring over'] + \
               [f'{s:,} idle' for s in sizes]
        body = [[MECH_TITLE[p]] + [inv_ratio(ns.get((str(s), 'ring')),
                                             ns.get((str(s), p)))
                                   for s in sizes]
                for p in ('epoll-lt', 'epoll-et', 'uring') if p in mechs]
        md += table(head, body) + ['']
        if self.plots is not None:
            # The fastest rounds: the medians move with the host's load
            # from one size to the next, which is not the mechanism's.
            src, what = (best, 'fastest round') if best else (ns, 'median')
            self.plots.lines('scale', f'Cost per event (ns, {what}) '
                             'against idle registrations', sizes,
                             [(m, [(src[(str(s), m)].min if best else
                                    src[(str(s), m)].median)
                                   if (str(s), m) in src else None
                                   for s in sizes]) for m in mechs],
                             logx=True)

    def http(self):
        blocks = self.log.http
        self.need('HTTP results', blocks)
        rows = []
        for b in blocks:
            h = b['head']
            r = parse_wrk(b['out']) if h.get('tool') == 'wrk' else \
                parse_httperf(b['out'])
            srv = served(b)
            what = (f"{h.get('tool')} {h.get('server')} "
                    f"c={h.get('conns')} rep {h.get('rep')}")
            if 'rps' not in r:
                self.problems.append(f'http {what}: no result '
                                     f'({" / ".join(b["out"][-3:])})')
                continue
            if r['errors']:
                self.problems.append(f'http {what}: {r["errors"]} errors '
                                     f'({r.get("socket_errors", "")})')
            if r.get('backlog'):
                # Connections refused or timed out: a server that closes
                # every connection (evserver, a backlog of 128) sheds
                # them; one of kbench's must not.
                note = (f'http {what}: {r["backlog"]} connections not '
                        f'made or timed out ({r["socket_errors"]})')
                if h.get('server') == 'evserver':
                    self.notes.append(note)
                else:
                    self.problems.append(note)
            if h.get('server') != 'evserver':
                conns = int(h.get('conns', 1))
                if srv is None:
                    self.problems.append(f'http {what}: the server did not '
                                         'report its count')
                elif h.get('tool') == 'wrk' and not (
                        0 <= srv - 1 - r['requests'] <= conns):
                    self.problems.append(
                        f'http {what}: server served {srv} (1 for the '
                        f'check), wrk counted {r["requests"]}: lost or '
                        'duplicated responses')
                elif h.get('tool') == 'httperf' and srv - 1 != r['requests']:
                    self.problems.append(
                        f'http {what}: server served {srv}, httperf '
                        f'counted {r["requests"]} replies')
            rows.append({'tool': h.get('tool'), 'server': h.get('server'),
                         'conns': h.get('conns'), 'rps': r['rps'],
                         'p99': r.get('p99'), 'p50': r.get('p50')})
        wrk = [r for r in rows if r['tool'] == 'wrk']
        rps = group(wrk, ['server', 'conns'], 'rps')
        p99 = group([r for r in wrk if r['p99'] is not None],
                    ['server', 'conns'], 'p99')
        hp = group([r for r in rows if r['tool'] == 'httperf'],
                   ['server'], 'rps')
        conns = sorted({r['conns'] for r in wrk}, key=int)
        md = self.md
        md += ['## 4. HTTP', '',
               'Requests per second from wrk (keep-alive, 2 threads; 1 '
               'thread for 1 connection), median (min-max), and wrk\'s '
               '99th percentile latency in ms; httperf makes a new '
               'connection per request, one at a time, as the 2006 '
               'measurements did.  Server and client share the guest\'s '
               'two CPUs.', '']
        head = ['server'] + [f'{int(c):,} conn req/s' for c in conns] + \
               [f'{int(c):,} conn p99 ms' for c in conns] + \
               ['httperf req/s']
        body = []
        for s in SERVERS:
            if not any((s, c) in rps for c in conns):
                continue
            body.append([SERVER_TITLE[s]] +
                        [cell(rps.get((s, c))) for c in conns] +
                        [fmt(p99[(s, c)].median) if (s, c) in p99 else '-'
                         for c in conns] +
                        [cell(hp.get((s,)))])
        md += table(head, body) + ['']
        head = ['speed-up of the kevent ring server over'] + \
               [f'{int(c):,} conn' for c in conns] + ['httperf']
        body = [[SERVER_TITLE[p]] +
                [ratio(rps.get(('ring', c)), rps.get((p, c))) for c in conns] +
                [ratio(hp.get(('ring',)), hp.get((p,)))]
                for p in ('epoll', 'uring', 'evserver')]
        md += table(head, body) + ['']
        top = conns[-1] if conns else None
        if top and ('ring', top) in rps:
            for p, want in (('epoll', 1.3), ('uring', 1.0)):
                if (p, top) in rps:
                    self.targets.append(
                        (f'HTTP {int(top):,} connections: ring >= {want}x '
                         f'{p}', rps[('ring', top)].median /
                         rps[(p, top)].median, want))
        if self.plots is not None:
            self.plots.bars('http', 'HTTP requests/s (thousands), wrk',
                            [f'{int(c)} conn' for c in conns],
                            [(s, [rps[(s, c)].median / 1e3
                                  if (s, c) in rps else 0 for c in conns])
                             for s in SERVERS])

    def latency(self):
        rows = [r for r in self.log.bench if r.get('wl') == 'wake']
        med = group(rows, ['mech'], 'med_us')
        p99 = group(rows, ['mech'], 'p99_us')
        self.need('wake-up latency results', med)
        md = self.md
        md += ['## 5. Latency', '',
               '### Pipe write to wake-up of a waiting thread', '',
               'Microseconds from before the write (one thread) to the '
               'return of the wait (another thread, on the other CPU): '
               'median of the repetitions\' medians (min-max), and of '
               'their 99th percentiles.', '']
        body = []
        for m in MECHS + ['read']:
            if (m,) in med:
                body.append([MECH_TITLE[m], cell(med[(m,)]),
                             fmt(p99[(m,)].median)])
        md += table(['wait', 'median us', 'p99 us'], body) + ['']
        rows = [r for r in self.log.bench if r.get('wl') == 'timer']
        tm = group(rows, ['mode', 'mech'], 'med_us')
        tp = group(rows, ['mode', 'mech'], 'p99_us')
        tx = group(rows, ['mode', 'mech'], 'max_us')
        self.need('timer results', tm)
        md += ['### Timer precision', '',
               'How late a 1 ms timer\'s report arrives, in microseconds: '
               'one-shot (armed, waited for, again), and periodic (each '
               'report against the expiry it reports).  Median (min-max) '
               'over the repetitions of the median, and the medians of '
               'the 99th percentiles and maxima.', '']
        body = []
        for mode in ('oneshot', 'periodic'):
            for t in TIMERS:
                if (mode, t) in tm:
                    body.append([TIMER_TITLE[t], mode, cell(tm[(mode, t)]),
                                 fmt(tp[(mode, t)].median),
                                 fmt(tx[(mode, t)].median)])
        md += table(['timer', 'mode', 'median us', 'p99 us', 'max us'],
                    body) + ['']
        if self.plots is not None:
            names = [m for m in MECHS + ['read'] if (m,) in med]
            self.plots.bars('wake', 'Wake-up latency, median us',
                            names, [('median', [med[(m,)].median
                                                for m in names])])

    def targets_md(self):
        md = ['## Targets against epoll and io_uring', '',
              'Ratios measured in this boot, against the targets.', '']
        body = []
        for what, got, want in self.targets:
            if want < 0:
                ok = got <= -want
                body.append([what, f'{got:.2f}', 'met' if ok else
                             f'missed by {got / -want - 1:.0%}'])
            else:
                ok = got >= want
                body.append([what, f'{got:.2f}x', 'met' if ok else
                             f'missed (reaches {got / want:.0%} of it)'])
        return md + table(['target', 'measured', ''], body) + ['']

    def setup_md(self, host_load):
        env = self.log.env
        md = ['## Setup of this run', '']
        try:
            cpu = next(l.split(':', 1)[1].strip()
                       for l in open('/proc/cpuinfo')
                       if l.startswith('model name'))
        except (OSError, StopIteration):
            cpu = 'unknown'
        try:
            qemu = subprocess.run(['qemu-system-x86_64', '--version'],
                                  capture_output=True, text=True,
                                  check=False).stdout.splitlines()[0]
        except (OSError, IndexError):
            qemu = 'unknown'
        try:
            head = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'],
                                  capture_output=True, text=True,
                                  check=False).stdout.strip()
        except OSError:
            head = 'unknown'
        try:
            dirty = subprocess.run(
                ['git', 'status', '--porcelain', '--untracked-files=no',
                 '--', 'kernel',
                 'include/uapi'], capture_output=True, text=True,
                check=False).stdout.split()[1::2]
        except OSError:
            dirty = []
        if dirty:
            head += (' with uncommitted changes to ' + ', '.join(dirty) +
                     ' (the kernel is built from the working tree)')
        md += [f'- kevent tree: commit {head}; guest kernel '
               f'{env.get("kernel", "?")} built from tinyconfig + '
               'kernel/config/kevent.config + kernel/config/bench.config '
               '(SLUB, PREEMPT_NONE, HZ=250; the lockup detectors are '
               'turned off at run time)',
               f'- QEMU: {qemu}, accelerator {env.get("accel", "?")}, '
               f'CPUs online {env.get("cpus", "?")}, memory '
               f'{env.get("memory", "?")}, clocksource '
               f'{env.get("clocksource", "?")}, timer resolution '
               f'{env.get("timer-resolution", "?")}',
               f'- host: {cpu}, {os.cpu_count()} CPUs, shared with other '
               'jobs; load average before and after: ' +
               ' / '.join(l.split('load average:')[-1].strip()
                          for l in host_load),
               f'- profile {env.get("profile", "?")}: '
               f'{env.get("params", "?")} (T: seconds per run, R: '
               'repetitions, mechanisms interleaved within each; HT, HR: '
               'the same for HTTP)', '']
        return md


class Plots:
    def __init__(self, outdir):
        self.outdir = outdir
        self.made = []
        os.makedirs(outdir, exist_ok=True)

    def run(self, name, script):
        path = os.path.join(self.outdir, name + '.png')
        full = (f'set terminal pngcairo size 800,450 font "sans,10"\n'
                f'set output "{path}"\n' + script)
        try:
            subprocess.run(['gnuplot'], input=full, text=True, check=True,
                           capture_output=True)
            self.made.append((name, path))
        except (OSError, subprocess.CalledProcessError) as err:
            print(f'report: gnuplot {name}: {err}', file=sys.stderr)

    def bars(self, name, title, groups, series):
        with tempfile.NamedTemporaryFile('w', suffix='.dat',
                                         delete=False) as f:
            for i, g in enumerate(groups):
                f.write(f'"{g}" ' + ' '.join(f'{s[1][i]:.3f}'
                                             for s in series) + '\n')
            data = f.name
        cols = ', '.join(
            f'"{data}" using {i + 2}:xtic(1) title "{s[0]}"'
            for i, s in enumerate(series))
        self.run(name, f'set title "{title}"\nset style data histograms\n'
                 'set style histogram clustered gap 1\n'
                 'set style fill solid 0.8 border -1\nset grid ytics\n'
                 'set yrange [0:*]\nset key outside right\n'
                 f'plot {cols}\n')
        os.unlink(data)

    def lines(self, name, title, xs, series, logx=False):
        with tempfile.NamedTemporaryFile('w', suffix='.dat',
                                         delete=False) as f:
            for i, x in enumerate(xs):
                f.write(f'{x} ' + ' '.join(
                    f'{s[1][i]:.3f}' if s[1][i] is not None else 'NaN'
                    for s in series) + '\n')
            data = f.name
        cols = ', '.join(f'"{data}" using 1:{i + 2} with linespoints '
                         f'title "{s[0]}"' for i, s in enumerate(series))
        self.run(name, f'set title "{title}"\n' +
                 ('set logscale x\n' if logx else '') +
                 'set grid\nset yrange [0:*]\nset key outside right\n'
                 f'plot {cols}\n')
        os.unlink(data)


def write_doc(path, block):
    text = ''
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    new = BEGIN + '\n' + '\n'.join(block) + '\n' + END
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + new + \
               text[text.index(END) + len(END):]
    else:
        text = (text.rstrip() + '\n\n' if text else
                '# kevent benchmarks\n\n') + new + '\n'
    with open(path, 'w') as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--log', required=True)
    ap.add_argument('--host-load')
    ap.add_argument('--plots')
    ap.add_argument('--doc', default='')
    args = ap.parse_args()
    log = parse(args.log)
    host_load = []
    if args.host_load and os.path.exists(args.host_load):
        host_load = open(args.host_load).read().splitlines()
    plots = Plots(args.plots) if args.plots else None
    rep = Report(log, plots)
    if not log.begun:
        rep.problems.append('the bench guest did not start')
    elif not log.done:
        rep.problems.append('the bench guest did not finish (stages: ' +
                            ', '.join(log.stages) + ')')
    rep.harvest()
    rep.churn()
    rep.scale()
    rep.http()
    rep.latency()
    md = rep.setup_md(host_load) + rep.targets_md() + rep.md
    if plots and plots.made:
        md += ['## Plots', '']
        docdir = os.path.dirname(os.path.abspath(args.doc or '.'))
        for name, path in plots.made:
            rel = os.path.relpath(os.path.abspath(path), docdir)
            md += [f'![{name}]({rel})', '']
    if rep.notes:
        md += ['## Notes on this run', ''] + \
              [f'- {p}' for p in rep.notes] + ['']
    if rep.problems:
        md += ['## Problems of this run', ''] + \
              [f'- {p}' for p in rep.problems] + ['']
    print('\n'.join(md))
    if args.doc:
        write_doc(args.doc, md)
    for p in rep.problems:
        print(f'FAIL {p}')
    print(f'bench: {len(rep.problems)} problems' if rep.problems else
          'bench: every workload ran, and every count agreed')
    return 1 if rep.problems else 0


if __name__ == '__main__':
    sys.exit(main())
