#!/usr/bin/env python3
"""libuv's benchmarks on kevent and on epoll.

    testsuite/peers/libuv/bench.py LOG [--markdown FILE]

LOG is the guest's serial log with the output of
testsuite/peers/libuv/bench.sh.  Each benchmark prints a rate (round
trips, accepts, datagrams, bits or loop ticks per second); this prints,
per benchmark, the median rate of the runs for each backend and the ratio
kevent/epoll (above 1: kevent does more in the same time); --markdown
writes the same table in Markdown.  Exit status 1 when a run failed or
printed no rate.
"""
import argparse
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
import guestlog  # noqa: E402  (testsuite/guestlog.py)

BACKENDS = ("kevent", "epoll")
# A rate: a number, then "/s" or a unit per second.
RATE = re.compile(r"([0-9][0-9.,]*) ?((?:roundtrips|accepts|gbit)?/s)")


def rate(name, body):
    """The rate a benchmark printed: on the line naming it if there is
    one (the pumps print the server's rate too), else the first."""
    found = None
    for line in body:
        m = RATE.search(line)
        if not m:
            continue
        value = (float(m.group(1).replace(",", "")), m.group(2))
        if name in line:
            return value
        if found is None:
            found = value
    return found


def parse(path):
    """{benchmark: {backend: [rate, ...]}}, {benchmark: unit}, problems."""
    res, units, problems = {}, {}, []
    for begin, body, end in guestlog.frames(guestlog.read(path), "BENCH"):
        backend, name = begin[0], begin[1]
        status = int(end[2]) if end else -1
        r = rate(name, body)
        if status != 0 or r is None:
            problems.append("%s %s: exit %d%s" % (
                backend, name, status, "" if r else ", no rate"))
            continue
        res.setdefault(name, {}).setdefault(backend, []).append(r[0])
        units[name] = r[1]
    return res, units, problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    res, units, problems = parse(args.log)

    hdr = ["benchmark", "unit", "runs"] + list(BACKENDS) + ["kevent/epoll"]
    md = ["| " + " | ".join(hdr) + " |", "|---|---|---:" + "|---:" * 3 + "|"]
    print("%-20s %-12s %4s %14s %14s %12s" % tuple(hdr))
    for name in res:
        med = {b: statistics.median(res[name][b])
               for b in BACKENDS if b in res[name]}
        runs = "/".join(str(len(res[name][b])) for b in BACKENDS
                        if b in res[name])
        ratio = med["kevent"] / med["epoll"] if len(med) == 2 and \
            med["epoll"] else float("nan")
        cells = [name, units[name], runs] + \
            ["%.4g" % med[b] if b in med else "-" for b in BACKENDS] + \
            ["%.2f" % ratio]
        print("%-20s %-12s %4s %14s %14s %12s" % tuple(cells))
        md.append("| " + " | ".join(cells) + " |")
    for p in problems:
        print("bench: FAIL %s" % p)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
