#!/bin/sh
# make check: install what is missing, build the kernel and the test
# programs, run the host checks, boot the guest to run the tests, and
# report.  The last line is "N passed, N failed[, N skipped]"; the exit
# status is nonzero when anything failed.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
build=${BUILD:-build}
# ARCH=arm64: the arm64 kernel and programs (doc/testing.md); the series
# check and libevent are x86's, and run in make check alone.
arch=${ARCH:-x86_64}
guest=$build/guest
log=$build/guest.log
if [ "$arch" != x86_64 ]; then
	guest=$build/guest-$arch
	log=$build/guest-$arch.log
fi

# A step that must work for anything to run: when it fails, the report
# is one failure, still ending with the summary line.
step() {
	what=$1
	shift
	"$@" && return 0
	status=$?
	echo "FAIL build: $what failed (exit status $status; its output is above)"
	echo "0 passed, 1 failed"
	exit 1
}

stage "packages"
step "installing the packages (scripts/deps.sh)" scripts/deps.sh
stage "kernel"
step "the kernel (scripts/kernel.sh)" scripts/kernel.sh
stage "test programs"
rm -f "$guest/expected"
step "the test programs (make programs)" \
	make -s --no-print-directory programs
# The series as git format-patch output (make patchset) and its checks:
# git am, checkpatch, kernel-doc, docutils, sparse and W=1.
series=
if [ "$arch" = x86_64 ]; then
	stage "the series: make patchset and its checks"
	scripts/series-check.sh tap >"$build/series.tap" 2>&1 || true
	series="--host $build/series.tap"
fi
stage "initramfs"
step "the initramfs (make initramfs)" \
	make -s --no-print-directory initramfs
stage "host checks"
testsuite/host-checks.sh >"$build/host.tap" 2>&1 || true
stage "guest: boot and run the tests"
rm -f "$log"
scripts/boot.sh check "$log" "${CHECK_TIME_LIMIT:-1500}" || true
# The event libraries' own suites on kevent and on epoll, each in a boot
# of its own (doc/libevent.md, doc/libuv.md); one test of the summary
# each, skipped when its tarball is missing; not on the debug kernel.
# peers holds LIBRARY:STATUS words, STATUS that of scripts/peers.sh.
peers=
if [ -z "${VARIANT:-}" ] && [ "$arch" = x86_64 ]; then
	for lib in libevent libuv; do
		# peers.sh names its log when the boot ends.
		stage "$lib on kevent (scripts/peers.sh $lib)"
		st=0
		PEERS_BENCH=0 scripts/peers.sh "$lib" all || st=$?
		[ "$st" != 2 ] || echo "SKIP $lib: no $lib release tarball in ${PEERS:-../shared/peers}"
		peers="$peers $lib:$st"
	done
fi
# The counted bench, small (scripts/counted.sh smoke): a boot of one
# vCPU with the instruction-counting plugin, so that it cannot rot.
counted=
if [ "$arch" = x86_64 ]; then
	stage "counted bench smoke (scripts/counted.sh, log: $build/counted-smoke/guest.log)"
	scripts/counted.sh smoke || true
	counted="--host $build/counted-smoke/counted.tap"
fi
# make conformance and the conformance bundle (scripts/conformance.sh)
# on the kernel just built, each with a few programs in a boot of its
# own: the whole suite has run above, these keep both ways working.
conformance=
if [ "$arch" = x86_64 ]; then
	stage "conformance: make conformance and the bundle in the guest"
	KERNEL=$(kernel_obj "$build")/arch/x86/boot/bzImage \
		scripts/conformance.sh tap evtest init ctl-m32 \
		>"$build/conformance.tap" 2>&1 || true
	conformance="--host $build/conformance.tap"
fi
stage "report (guest log: $log)"
# --trace: every ERRORS entry and flag page needs a passing tagged point
# (scripts/traceability.py); the debug variant must show ENOMEM itself.
status=0
# shellcheck disable=SC2086
testsuite/report.py --expected "$guest/expected" \
	--host "$build/host.tap" $series $counted $conformance --trace \
	--variant "${VARIANT:-normal}" \
	"$log" >"$build/report.txt" || status=$?
sed '$d' "$build/report.txt"
for p in $peers; do
	case "${p#*:}" in 0|2) ;; *) status=1
		echo "FAIL ${p%:*}: kevent fails a test that epoll passes (make peers)" ;;
	esac
done
# The summary line, with each library's run as one test.
tail -n 1 "$build/report.txt" | awk -v peers="$peers" '{
	n = split($0, a, /, /); pass = a[1] + 0; fail = a[2] + 0
	skip = n > 2 ? a[3] + 0 : 0
	m = split(peers, p, / /)
	for (i = 1; i <= m; i++) {
		if (p[i] == "") continue
		st = substr(p[i], index(p[i], ":") + 1)
		if (st == "0") pass++; else if (st == "2") skip++; else fail++
	}
	printf "%d passed, %d failed", pass, fail
	if (skip) printf ", %d skipped", skip
	printf "\n" }'
exit "$status"
