#!/usr/bin/env python3
"""Turn the TAP of the host checks and of the guest's serial log into one
report: a line per test, the guest kernel's splats as failures, and a
last line "N passed, N failed, N skipped".  Exit 1 if anything failed.

usage: report.py [--host HOST_TAP] GUEST_LOG
"""
import argparse
import re
import sys

KERNEL_LINE = re.compile(r'^\[\s*\d+\.\d+\]\s?(.*)$')
SPLATS = re.compile(
    r'BUG:|WARNING:|Oops|Kernel panic|general protection fault|'
    r'KASAN:|UBSAN:|possible recursive locking|'
    r'possible circular locking|inconsistent lock state|'
    r'suspicious RCU usage|blocked for more than|'
    r'unreferenced object|suspected memory leak|rcu_sched self-detected|'
    r'self-detected stall|Call Trace:|kernel BUG')
TAP_POINT = re.compile(r'^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$')
TAP_PLAN = re.compile(r'^1\.\.(\d+)')


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

    def program(self, prog, lines, status):
        """Score the output of one program that exited with status."""
        points = 0
        failed_before = self.failed
        plan = None
        pending = None
        for raw in lines:
            line = raw.rstrip('\r\n')
            m = TAP_POINT.match(line)
            if m:
                if pending:
                    self.result(*pending)
                points += 1
                desc = m.group(3)
                name = f'{prog}: {desc}'
                if '# SKIP' in desc or '# skip' in desc:
                    pending = ('SKIP', name, [])
                elif m.group(1) == 'ok':
                    pending = ('PASS', name, [])
                else:
                    pending = ('FAIL', name, [])
                continue
            if pending and pending[0] == 'FAIL' and line.startswith('#'):
                pending[2].append(line)
                continue
            m = TAP_PLAN.match(line)
            if m:
                plan = int(m.group(1))
        if pending:
            self.result(*pending)
        if status is None:
            self.result('FAIL', f'{prog}: did not finish')
        elif points == 0:
            # An example: one test, passed when it exits 0.
            tail = [l.rstrip() for l in lines[-15:]]
            self.result('PASS' if status == 0 else 'FAIL',
                        f'{prog}: runs and exits 0',
                        [] if status == 0 else tail + [f'exit {status}'])
        else:
            if plan is not None and plan != points:
                self.result('FAIL', f'{prog}: planned {plan} tests, ran {points}')
            if plan is None:
                self.result('FAIL', f'{prog}: no TAP plan')
            if status != 0 and self.failed == failed_before:
                self.result('FAIL', f'{prog}: exited with status {status}')


def guest(report, path):
    try:
        text = open(path, errors='replace').read().splitlines()
    except OSError as err:
        report.result('FAIL', f'guest: no serial log ({err})')
        return
    prog, lines, done, begun = None, [], False, False
    splats = []
    for line in text:
        line = line.rstrip('\r')
        if line.endswith('### BEGIN'):
            begun = True
        elif line.startswith('### TEST '):
            prog, lines = line.split()[2], []
        elif line.startswith('### EXIT ') and prog:
            report.program(prog, lines, int(line.split()[3]))
            prog = None
        elif line == '### DONE':
            done = True
        elif prog is not None:
            lines.append(line)
        m = KERNEL_LINE.match(line)
        if m and SPLATS.search(m.group(1)) and m.group(1) not in splats:
            splats.append(m.group(1))
    if prog is not None:
        report.program(prog, lines, None)
    if not begun:
        report.result('FAIL', 'guest: the testsuite did not start')
    elif not done:
        report.result('FAIL', 'guest: did not finish (time limit or panic)')
    if splats:
        report.result('FAIL', 'guest kernel log: splats', splats[:40])
    else:
        report.result('PASS', 'guest kernel log: no BUG, WARNING, Oops, '
                      'lockdep, KASAN, UBSAN or hung task report')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--host', action='append', default=[])
    ap.add_argument('guest_log')
    args = ap.parse_args()
    report = Report()
    for path in args.host:
        with open(path, errors='replace') as f:
            lines = f.read().splitlines()
        status = 1 if any(l.startswith('not ok') for l in lines) else 0
        report.program('host', lines, status)
    guest(report, args.guest_log)
    summary = f'{report.passed} passed, {report.failed} failed'
    if report.skipped:
        summary += f', {report.skipped} skipped'
    print(summary)
    return 1 if report.failed else 0


if __name__ == '__main__':
    sys.exit(main())
