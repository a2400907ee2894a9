#!/bin/sh
# make bench: build the bench guest, boot it once, run every workload of
# bench/ for every mechanism, and turn the log into the tables and plots
# of doc/benchmarks.md.
#
#   scripts/bench.sh [full|quick|kernel|tiny|counted]
#
# full (the default) is what doc/benchmarks.md reports; quick runs
# shorter and fewer repetitions, to try a change; kernel only the
# workloads of kevent's own paths (harvest, churn, scaling), for the
# before and after of a kernel change; tiny only tries the chain.
# Every profile but tiny first boots the counted bench
# (scripts/counted.sh: instructions per event, in a boot of one vCPU
# with bench/kcount.c loaded); counted boots it alone.
# The guest's serial log is build/bench/guest.log.  The exit status is
# nonzero when a workload failed, lost or duplicated an event, or did
# not run.
#
# Environment: BENCH_TIME_LIMIT (seconds the guest may run, default
# 1500), BENCH_MEM (guest memory, default 2G), BENCH_DOC (default
# doc/benchmarks.md; empty: print the table, write nothing).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
profile=${1:-full}
build=${BUILD:-build}
out=$build/bench
bin=$out/bin
limit=${BENCH_TIME_LIMIT:-1500}

stage "packages"
scripts/deps.sh
stage "bench kernel (build/obj-bench)"
VARIANT=bench scripts/kernel.sh
stage "bench programs"
make -s --no-print-directory bench-programs

counted=0
if [ "$profile" != tiny ]; then
	stage "counted bench: one vCPU, instructions (log: $build/counted/guest.log)"
	scripts/counted.sh full || counted=$?
	[ "$profile" != counted ] || exit "$counted"
fi

# The load generators are Debian's, dynamically linked: copy them and
# the libraries they load into a second archive, which the kernel
# unpacks after the first.
stage "initramfs"
gen=$build/obj-bench/usr/gen_init_cpio
: >"$out/tests.list"
VARIANT=bench scripts/initramfs.sh "$bin" "$out/tests.list" "$out/base.cpio"
spec=$out/extra.list
{
	for d in /lib /lib64 /lib/x86_64-linux-gnu; do
		echo "dir $d 755 0 0"
	done
	echo "file /kevent/bench.sh $top/bench/guest.sh 755 0 0"
	for tool in wrk httperf; do
		echo "file /kevent/bin/$tool /usr/bin/$tool 755 0 0"
	done
	# "libx.so => /lib/.../libx.so (0x...)" and "/lib64/ld-linux... (0x...)"
	ldd /usr/bin/wrk /usr/bin/httperf |
	awk '/\(0x/ { if ($2 == "=>") print $3; else if ($1 ~ /^\//) print $1 }' |
	sort -u | while read -r lib; do
		echo "file $lib $(readlink -f "$lib") 755 0 0"
	done
} >"$spec"
"$gen" "$spec" >"$out/extra.cpio"
cat "$out/base.cpio" "$out/extra.cpio" >"$out/initramfs.cpio"

# The clock: the TSC.  Under TCG, QEMU's TSC is the host's, which the
# guest often fails to calibrate against the emulated PIT, and does not
# trust across two vCPUs: tell it the frequency, and that it is good.
khz=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)
clock="tsc=reliable${khz:+ tsc_early_khz=$khz}"

stage "guest: boot and run the benchmarks ($profile; log: $out/guest.log)"
uptime >"$out/host-load"
set +e
KERNEL=$build/obj-bench/arch/x86/boot/bzImage INITRD=$out/initramfs.cpio \
	QEMU_MEM=${BENCH_MEM:-2G} APPEND="$clock kevent.bench=$profile" \
	scripts/boot.sh bench "$out/guest.log" "$limit" |
	awk '/^### STAGE|^FAIL/ { print "  guest: " $0; fflush() }'
set -e
uptime >>"$out/host-load"

stage "report"
doc=${BENCH_DOC-doc/benchmarks.md}
# Without the page, the plots stay in the build folder too.
plots=$out/plots
[ -z "$doc" ] || plots=$(dirname "$doc")/bench
python3 bench/report.py --log "$out/guest.log" \
	--host-load "$out/host-load" --plots "$plots" --doc "$doc" || exit $?
exit "$counted"
