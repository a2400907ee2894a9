#!/bin/sh
# make check: install what is missing, build the kernel and the test
# programs, run the host checks, boot the guest to run the tests, and
# report.  The last line is "N passed, N failed[, N skipped]"; the exit
# status is nonzero when anything failed.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
start=$(date +%s)

stage() {
	printf '== [%4ds] %s\n' "$(($(date +%s) - start))" "$*"
}

stage "packages"
scripts/deps.sh
stage "kernel"
scripts/kernel.sh
stage "test programs"
make -s --no-print-directory programs
stage "initramfs"
make -s --no-print-directory initramfs
stage "host checks"
testsuite/host-checks.sh >"$build/host.tap" 2>&1 || true
stage "guest: boot and run the tests"
rm -f "$build/guest.log"
scripts/boot.sh check "$build/guest.log" "${CHECK_TIME_LIMIT:-1500}" || true
stage "report (guest log: $build/guest.log)"
exec testsuite/report.py --host "$build/host.tap" "$build/guest.log"
