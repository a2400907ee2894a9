#!/usr/bin/env python3
"""libevent's bench and bench_cascade on kevent, epoll and poll.

    testsuite/peers/bench.py LOG [--markdown FILE] [--plot PNG]

LOG is the guest's serial log with the output of
testsuite/peers/libevent/bench.sh.  Prints, per benchmark and descriptor
count, the median time of the runs for each backend and the ratio
kevent/epoll; --markdown writes the same table in Markdown, --plot a PNG
(gnuplot) of the time per event against the number of descriptors.
Exit status 1 when a configuration failed or ran with another backend
than the one asked for.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import guestlog  # noqa: E402  (testsuite/guestlog.py)

ORDER = ["kevent", "epoll", "poll", "kevent-poll", "kevent-ring"]
METHOD = {"kevent": "kevent", "kevent-poll": "kevent", "kevent-ring": "kevent",
          "epoll": "epoll", "poll": "poll"}


def parse(path):
    """{(prog, args, n): {backend: [us, ...]}}, list of problems."""
    res, problems = {}, []
    for begin, body, end in guestlog.frames(guestlog.read(path), "BENCH"):
        if end is None:     # the boot ended inside this run
            continue
        backend, prog, args = begin[0], begin[1], begin[2:]
        n = int(args[args.index("-n") + 1])
        rest = " ".join(a for i, a in enumerate(args)
                        if a != "-n" and (i == 0 or args[i - 1] != "-n"))
        key = (prog, rest)
        status = int(end[2])
        words = [line.strip() for line in body]
        vals = [int(s) for s in words if s.isdigit()]
        used = [s.split("using:")[1].strip() for s in words
                if not s.isdigit() and "using:" in s]
        if status != 0 or not vals:
            problems.append("%s %s -n %d: exit %d" % (backend, " ".join(key), n, status))
        elif any(u != METHOD[backend] for u in used):
            problems.append("%s %s -n %d ran on %s" % (backend, " ".join(key), n, used))
        else:
            res.setdefault((key, n), {}).setdefault(backend, []).extend(vals)
    return res, problems


def events_per_run(key, n):
    prog, rest = key
    if prog.startswith("bench_cascade"):
        return n
    a = rest.split()
    return int(a[a.index("-a") + 1]) + int(a[a.index("-w") + 1])


def label(key):
    prog, rest = key
    if prog == "bench_cascade":
        return "bench_cascade (socket pairs)"
    what = "pipes" if prog == "bench-pipes" else "socket pairs"
    return "bench %s (%s)" % (rest, what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--markdown")
    ap.add_argument("--plot")
    args = ap.parse_args()
    res, problems = parse(args.log)
    backends = [b for b in ORDER if any(b in v for v in res.values())]
    keys = []
    for (key, n) in sorted(res, key=lambda k: (k[0], k[1])):
        if key not in keys:
            keys.append(key)
    sizes = sorted({n for (_, n) in res})

    md = []
    hdr = ["descriptors"] + ["%s µs" % b for b in backends] + \
        ["kevent/epoll", "ns/event kevent", "ns/event epoll"]
    for key in keys:
        md.append("")
        md.append("**%s**, median of %s runs:" % (label(key), "/".join(
            sorted({str(len(v)) for n in sizes
                    for v in res.get((key, n), {}).values()}))))
        md.append("")
        md.append("| " + " | ".join(hdr) + " |")
        md.append("|" + "---:|" * len(hdr))
        print(label(key))
        for n in sizes:
            r = res.get((key, n))
            if not r:
                continue
            med = {b: statistics.median(r[b]) for b in backends if b in r}
            ev = events_per_run(key, n)
            ratio = med["kevent"] / med["epoll"] if "kevent" in med and \
                "epoll" in med and med["epoll"] else float("nan")
            cells = ["%d" % n] + ["%.0f" % med[b] if b in med else "-"
                                  for b in backends]
            cells += ["%.2f" % ratio]
            cells += ["%.0f" % (med[b] * 1000 / ev) if b in med else "-"
                      for b in ("kevent", "epoll")]
            md.append("| " + " | ".join(cells) + " |")
            print("  " + "  ".join("%12s" % c for c in cells))
    for p in problems:
        print("bench: FAIL %s" % p)

    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md).lstrip("\n") + "\n")
    if args.plot:
        plot(res, keys, sizes, backends, args.plot)
    return 1 if problems else 0


def plot(res, keys, sizes, backends, png):
    d = tempfile.mkdtemp()
    script = ['set terminal pngcairo size 1200,%d font ",10"' % (330 * ((len(keys) + 1) // 2)),
              'set output "%s"' % os.path.abspath(png),
              'set multiplot layout %d,2' % ((len(keys) + 1) // 2),
              'set termoption noenhanced', 'set logscale xy', 'set grid',
              'set xlabel "descriptors"', 'set ylabel "ns per event (median)"',
              'set key top left', 'set xrange [70:14000]']
    for i, key in enumerate(keys):
        files = []
        for b in backends:
            fn = os.path.join(d, "%d-%s.dat" % (i, b))
            with open(fn, "w") as f:
                for n in sizes:
                    r = res.get((key, n), {})
                    if b in r:
                        f.write("%d %f\n" % (n, statistics.median(r[b]) * 1000
                                            / events_per_run(key, n)))
            files.append('"%s" using 1:2 with linespoints title "%s"' % (fn, b))
        script.append('set title "%s"' % label(key))
        script.append("plot " + ", ".join(files))
    script.append("unset multiplot")
    sp = os.path.join(d, "plot.gp")
    with open(sp, "w") as f:
        f.write("\n".join(script) + "\n")
    subprocess.run(["gnuplot", sp], check=True)


if __name__ == "__main__":
    sys.exit(main())
