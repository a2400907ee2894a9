#!/bin/sh
# What the kevent hooks cost a program that does not use kevent: boot the
# kevent kernel and the same config without CONFIG_KEVENT (VARIANT=
# nokevent) in turn, run bench/hooks/hookcost in each, and print the
# medians side by side (doc/benchmarks.md, "What the hooks cost when
# kevent is unused").
#
#   scripts/hookcost.sh          (make hookcost)
#
# Environment: HOOKCOST_BOOTS (boots of each kernel, alternating,
# default 2), HOOKCOST_REPS and HOOKCOST_SECS (hookcost's arguments,
# default 5 and 0.5).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
dir=$build/hookcost
boots=${HOOKCOST_BOOTS:-2}
reps=${HOOKCOST_REPS:-5}
secs=${HOOKCOST_SECS:-0.5}

scripts/deps.sh
scripts/kernel.sh
VARIANT=nokevent scripts/kernel.sh
mkdir -p "$dir/bin"
${CC:-cc} -static -O2 -Wall -Wextra -Werror -pthread \
	-o "$dir/bin/hookcost" bench/hooks/hookcost.c
printf 'hookcost\tbin/hookcost %s %s\n' "$reps" "$secs" >"$dir/tests.list"
scripts/initramfs.sh "$dir/bin" "$dir/tests.list" "$dir/initramfs.cpio"

rm -f "$dir"/*.log
for i in $(seq "$boots"); do
	for v in kevent nokevent; do
		variant=
		[ "$v" = kevent ] || variant=$v
		# The TSC as the clock: jiffies would round every run.
		VARIANT=$variant INITRD=$dir/initramfs.cpio \
			APPEND="tsc=reliable clocksource=tsc" \
			scripts/boot.sh check "$dir/$v-$i.log" 300 >/dev/null
		grep -q '^hookcost ' "$dir/$v-$i.log" ||
			{ echo "hookcost: no results in $dir/$v-$i.log" >&2; exit 1; }
	done
done

# Median ns per operation of each workload on each kernel.
for v in kevent nokevent; do
	cat "$dir/$v"-*.log | tr -d '\r' | awk -v v="$v" '$1 == "hookcost" { print v, $2, $3 }'
done | python3 -c '
import sys, statistics
runs = {}
for line in sys.stdin:
    v, w, ns = line.split()
    runs.setdefault(w, {}).setdefault(v, []).append(float(ns))
print("| path | with kevent, ns | without CONFIG_KEVENT, ns | with / without |")
print("|---|---:|---:|---:|")
for w, r in runs.items():
    a, b = statistics.median(r["kevent"]), statistics.median(r["nokevent"])
    print("| %s | %.0f (%.0f-%.0f) | %.0f (%.0f-%.0f) | %.3f |" % (
        w, a, min(r["kevent"]), max(r["kevent"]),
        b, min(r["nokevent"]), max(r["nokevent"]), a / b))
'
echo "hookcost: $boots boots of each kernel, $reps runs of ${secs}s a boot; logs in $dir"
