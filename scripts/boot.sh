#!/bin/bash
# Boot the patched kernel in QEMU with the test initramfs.
#
#   scripts/boot.sh MODE LOG [SECONDS]
#
# MODE is check, run, shell or bench (see testsuite/guest/init).  The
# serial console goes to the terminal and to LOG.  TCG is used unless a
# short probe shows that KVM boots this kernel; every boot has a time
# limit.  QEMU_MEM sets the guest's memory (default 512M; make bench
# needs more for its 100,000 registrations).  QEMU_SMP sets the x86
# guest's vCPUs (default 2; the counted bench boots one), QEMU_ARGS adds
# to QEMU's command line (the counted bench's -plugin).  ARCH=arm64
# boots the arm64 kernel (build/obj-arm64) on QEMU's virt machine,
# always with TCG.
set -eu -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
mode=$1
log=$2
limit=${3:-900}
case "${ARCH:-x86_64}" in
arm64)
	kernel=${KERNEL:-$build/obj-arm64${VARIANT:+-$VARIANT}/arch/arm64/boot/Image}
	initrd=${INITRD:-$build/initramfs-arm64.cpio}
	qemu="qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 2"
	console=ttyAMA0
	ACCEL=tcg
	;;
*)
	kernel=${KERNEL:-$build/obj${VARIANT:+-$VARIANT}/arch/x86/boot/bzImage}
	initrd=${INITRD:-$build/initramfs.cpio}
	smp=${QEMU_SMP:-2}
	qemu="qemu-system-x86_64 -smp $smp,sockets=$smp"
	console=ttyS0
	;;
esac
mem=${QEMU_MEM:-512M}
# loglevel=5: the console shows KERN_WARNING and above, so a WARNING
# reaches the log even if the guest dies before /init dumps the log.
# The debug kernel runs everything about three times slower, and runs
# the stress test and the fuzzer longer.
# QEMU emulates arm64 on x86 more slowly still: the heavy tests (200,000
# timers, a million-entry ADD) need the stretched watchdogs too.
variant_args=
[ "${VARIANT:-}" != debug ] || variant_args="kevent.timeout=300 kevent.time_scale=4 kevent.run_seconds=40"
[ "${ARCH:-x86_64}" = x86_64 ] || [ -n "$variant_args" ] ||
	variant_args="kevent.timeout=300 kevent.time_scale=4"
append="console=$console panic=-1 oops=panic loglevel=5 kevent.mode=$mode $variant_args ${APPEND:-}"

accel() {
	if [ -n "${ACCEL:-}" ]; then
		echo "$ACCEL"
		return
	fi
	if [ -w /dev/kvm ] && [ "$mode" != shell ]; then
		probe=$build/kvm-probe.log
		if timeout 20 qemu-system-x86_64 -accel kvm -smp 2,sockets=2 -m 256 \
			-kernel "$kernel" -initrd "$initrd" -nographic \
			-no-reboot -append "console=ttyS0 panic=-1 kevent.mode=probe" \
			</dev/null >"$probe" 2>&1 &&
		   grep -q 'reboot: Restarting system' "$probe"; then
			echo kvm
			return
		fi
	fi
	echo tcg
}

a=$(accel)
# /init prints it for the report (### ENV accel).
append="$append kevent.accel=$a"
echo "boot: $mode with $a, limit ${limit}s, log ${log#"$top"/}" >&2
if [ "$mode" = shell ]; then
	# shellcheck disable=SC2086
	exec $qemu -accel "$a" -m "$mem" -kernel "$kernel" \
		-initrd "$initrd" -nographic -no-reboot -append "$append"
fi
# In check mode the terminal gets one line per test, the log everything.
show() {
	if [ "$mode" = check ]; then
		awk '/^### TEST / { print "  guest: " $3; fflush() }'
	else
		cat
	fi
}
set +e
# shellcheck disable=SC2086
timeout "$limit" $qemu -accel "$a" -m "$mem" ${QEMU_ARGS:-} \
	-kernel "$kernel" -initrd "$initrd" -nographic -no-reboot \
	-append "$append" </dev/null 2>&1 | tee "$log" | show
status=${PIPESTATUS[0]}
set -e
# For the report: how QEMU ended (124: the time limit ran out).
echo "### HOST qemu-exit $status limit $limit" >>"$log"
[ "$status" -eq 0 ] || echo "boot: QEMU ended with status $status" >&2
exit "$status"
