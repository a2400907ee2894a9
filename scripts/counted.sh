#!/bin/sh
# The counted bench: one boot of one vCPU with bench/kcount.c (a QEMU
# TCG plugin) loaded, in which kbench runs fixed counts of rounds
# between markers; bench/counted.py turns the plugin's counts into
# instructions per event (doc/benchmarks.md).
#
#   scripts/counted.sh full|smoke
#
# full (make bench): the bench kernel (build/obj-bench), 5 repetitions,
# the tables printed and written into BENCH_DOC (default
# doc/benchmarks.md; empty: print only).  smoke (make check): the
# kernel and kbench that make check built, small counts, once; TAP in
# build/counted-smoke/counted.tap, which fails when the plugin saw no
# marker, counted nothing, or kbench lost or doubled an event.  The
# kernel is built by the caller.  The exit status is nonzero when
# anything failed.
#
# Environment: COUNTED_TIME_LIMIT (seconds the guest may run, default
# 1800 for full, 300 for smoke); for a shorter run, COUNTED_SETS (the
# harvest's sets, default 1,000 and 10,000 of pipe, unix and tcp)
# and COUNTED_SCALE (the idle sizes, default "100,1000,10000,100000";
# none: no idle registrations).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
profile=${1:-full}
build=${BUILD:-build}
case "$profile" in
full)
	out=$build/counted
	obj=$build/obj-bench
	variant=bench
	kbench=$build/bench/bin/kbench
	guest=counted
	limit=${COUNTED_TIME_LIMIT:-1800}
	;;
smoke)
	out=$build/counted-smoke
	variant=${VARIANT:-}
	obj=$build/obj${variant:+-$variant}
	kbench=$build/guest/bin/kbench
	guest=counted-smoke
	limit=${COUNTED_TIME_LIMIT:-300}
	;;
*)
	echo "counted.sh: full or smoke, not $profile" >&2
	exit 2
	;;
esac
plugin=$build/bench/kcount.so
rm -f "$out/counted.tap"

make -s --no-print-directory "$kbench" "$plugin"
mkdir -p "$out/bin"
cp "$kbench" "$out/bin/kbench"
: >"$out/tests.list"
VARIANT=$variant scripts/initramfs.sh "$out/bin" "$out/tests.list" \
	"$out/base.cpio"
echo "file /kevent/bench.sh $top/bench/guest.sh 755 0 0" >"$out/extra.list"
"$obj/usr/gen_init_cpio" "$out/extra.list" >"$out/extra.cpio"
cat "$out/base.cpio" "$out/extra.cpio" >"$out/initramfs.cpio"

# TCG even where KVM would boot: plugins see only what TCG translates.
# One vCPU: QEMU 7.2's inline counters are not per vCPU, and a single
# thread of kbench needs no second.  nokaslr: the profile maps kernel
# addresses with System.map as linked.
rm -f "$out/kcount.log"
sizes="${COUNTED_SETS:+kevent.csets=$COUNTED_SETS}"
sizes="$sizes${COUNTED_SCALE:+ kevent.cscale=$COUNTED_SCALE}"
set +e
ACCEL=tcg KERNEL=$obj/arch/x86/boot/bzImage INITRD=$out/initramfs.cpio \
	QEMU_SMP=1 QEMU_MEM=2G QEMU_ARGS="-plugin $plugin,out=$out/kcount.log,map=$obj/System.map" \
	APPEND="nokaslr kevent.bench=$guest $sizes" \
	scripts/boot.sh bench "$out/guest.log" "$limit" |
	awk '/^### STAGE|^FAIL/ { print "  guest: " $0; fflush() }'
set -e

if [ "$profile" = smoke ]; then
	exec python3 bench/counted.py --log "$out/guest.log" \
		--marks "$out/kcount.log" --obj "$obj" --smoke \
		--tap "$out/counted.tap"
fi
doc=${BENCH_DOC-doc/benchmarks.md}
exec python3 bench/counted.py --log "$out/guest.log" \
	--marks "$out/kcount.log" --obj "$obj" ${doc:+--doc "$doc"}
