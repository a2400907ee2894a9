#!/usr/bin/env python3
"""Report of make peers: a library's own tests, kevent and epoll.

    testsuite/peers/report.py [--dumpevents-check SCRIPT] LOG

LOG is the guest's serial log; testsuite/peers/LIBRARY/run.sh put each
program's output between "### PEER BEGIN BACKEND PROGRAM" and
"### PEER END BACKEND PROGRAM STATUS CENTISECONDS".  libevent's regress
is counted test by test (tinytest's lines), as is libuv's uv_run_tests_a
(its TAP lines); every other program counts as one test.

Prints a table, passed/failed/skipped per program and backend, then each
test that kevent fails and epoll passes, and a last line
"peers: N passed, N failed" where a failure is a test that kevent fails
and epoll passes (a test both fail is listed, not counted).  Exit status
1 when there is such a failure or a backend's run is missing.
"""
import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import guestlog  # noqa: E402  (testsuite/guestlog.py)

ORDER = ("kevent", "epoll", "kevent-ring", "kevent-poll")
BACKENDS = ORDER[:2]    # always expected
TEST_START = re.compile(r"^([A-Za-z0-9_]+/[A-Za-z0-9_.\-]+): (.*)$")
FAILED = re.compile(r"^\s*\[([A-Za-z0-9_.\-]+) FAILED\]\s*$")
TAP = re.compile(r"^(not )?ok \d+ - (\S+)(\s+# SKIP\b.*)?$")


def parse_regress(text):
    """{test: 'pass'|'fail'|'skip'} from tinytest's output."""
    results = {}
    current = None
    for line in text.splitlines():
        line = line.rstrip("\r")
        m = TEST_START.match(line)
        if m:
            current = m.group(1)
            rest = m.group(2).strip()
            if rest.endswith("SKIPPED") or rest.endswith("DISABLED"):
                results[current] = "skip"
                current = None
            elif rest.endswith("OK"):
                results[current] = "pass"
                current = None
            else:
                results[current] = "fail"   # until it says OK
            continue
        if current is None:
            continue
        m = FAILED.match(line)
        if m and current.endswith("/" + m.group(1)):
            results[current] = "fail"
            current = None
        elif line.strip().endswith("OK") and not line.strip().startswith("OK "):
            results[current] = "pass"
            current = None
        elif line.strip() == "SKIPPED":
            results[current] = "skip"
            current = None
    return results


def parse_tap(text):
    """{test: 'pass'|'fail'|'skip'} from TAP lines (libuv's runner)."""
    results = {}
    for line in text.splitlines():
        m = TAP.match(line.rstrip("\r"))
        if m:
            results[m.group(2)] = ("skip" if m.group(3) else
                                   "fail" if m.group(1) else "pass")
    return results


# The programs counted test by test, and how.
PARSERS = {"regress": parse_regress, "uv_run_tests_a": parse_tap}


def parse_log(path):
    runs = {}      # (backend, program) -> (status, centis, text)
    methods = {}
    retries = []
    lines = guestlog.read(path)
    for line in lines:
        if line.startswith("### PEER METHOD "):
            parts = line.split(None, 4)
            methods[parts[3]] = parts[4] if len(parts) > 4 else ""
        elif line.startswith("### PEER RETRY "):
            parts = line.split()
            retries.append("%s %s (exit %s)" % (parts[3], parts[4], parts[5]))
    for begin, body, end in guestlog.frames(lines, "PEER"):
        # end: BACKEND PROGRAM STATUS CENTISECONDS; none if the boot
        # ended inside the program
        status, centis = (int(end[2]), int(end[3])) if end else (-1, 0)
        runs[(begin[0], begin[1])] = (status, centis, "\n".join(body))
    return runs, methods, retries


def check_dumpevents(script, text):
    if not script:
        return True
    # test-dumpevents' output is what the checker reads on stdin.
    p = subprocess.run([sys.executable, script], input=(text + "\n").encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dumpevents-check")
    ap.add_argument("log")
    args = ap.parse_args()

    runs, methods, retries = parse_log(args.log)
    programs = []
    for (b, p) in runs:
        if p not in programs:
            programs.append(p)

    # The backends that ran: kevent and epoll always, and the other
    # modes of the kevent backend if run.sh was asked for them.
    backends = list(BACKENDS) + [b for b in ORDER[2:]
                                 if any(k[0] == b for k in runs)]
    # results[backend][program] = {test: outcome}
    results = {b: {} for b in backends}
    times = {b: {} for b in backends}
    for (b, p), (status, centis, text) in runs.items():
        if b not in results:
            continue
        times[b][p] = centis / 100.0
        if p in PARSERS:
            r = PARSERS[p](text)
            if status != 0 and not any(v == "fail" for v in r.values()):
                r["%s(exit %d)" % (p, status)] = "fail"
            results[b][p] = r
        else:
            ok = status == 0
            if p == "test-dumpevents" and ok:
                ok = check_dumpevents(args.dumpevents_check, text)
            results[b][p] = {p: "pass" if ok else "fail"}

    for b in backends:
        print("peers: %-6s %s" % (b, methods.get(b, "(no run)").strip()))
    print("%-22s" % "" + "".join(" %26s  " % b for b in backends))
    print("%-22s" % "program" + "".join(
        " %8s %8s %8s %7s  " % ("passed", "failed", "skipped", "time")
        for b in backends))
    tot = {b: [0, 0, 0] for b in backends}
    for p in programs:
        row = "%-22s" % p
        for b in backends:
            r = results[b].get(p)
            if r is None:
                row += " %8s %8s %8s %7s  " % ("-", "-", "-", "-")
                continue
            c = [sum(1 for v in r.values() if v == k)
                 for k in ("pass", "fail", "skip")]
            for i in range(3):
                tot[b][i] += c[i]
            row += " %8d %8d %8d %6.1fs  " % (c[0], c[1], c[2],
                                             times[b].get(p, 0))
        print(row.rstrip())
    row = "%-22s" % "total"
    for b in backends:
        row += " %8d %8d %8d %7s  " % (tot[b][0], tot[b][1], tot[b][2], "")
    print(row.rstrip())

    regressions, both = [], []
    missing = [b for b in BACKENDS if not results[b]]
    for kb in [b for b in backends if b != "epoll"]:
        for p in programs:
            k = results[kb].get(p, {})
            e = results["epoll"].get(p, {})
            for t in sorted(set(k) | set(e)):
                if k.get(t) == "fail" and e.get(t) == "pass":
                    regressions.append((kb, t))
                elif k.get(t) == "fail":
                    both.append((kb, t))
                elif e.get(t) == "pass" and t not in k and k:
                    regressions.append((kb, t + " (not run)"))
    for r in retries:
        print("peers: failed once and ran again (a timing test): %s" % r)
    for kb, t in both:
        print("peers: fails under %s and epoll: %s" % (kb, t))
    for kb, t in regressions:
        print("peers: FAIL under %s, passes under epoll: %s" % (kb, t))
    for b in missing:
        print("peers: FAIL: no run of the %s backend in the log" % b)
    passed = sum(1 for p in programs
                 for t, v in results["kevent"].get(p, {}).items()
                 if v == "pass")
    failed = len(regressions) + len(missing)
    print("peers: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
