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
rm -f "$build/guest/expected"
step "the test programs (make programs)" \
	make -s --no-print-directory programs
stage "initramfs"
step "the initramfs (make initramfs)" \
	make -s --no-print-directory initramfs
stage "host checks"
testsuite/host-checks.sh >"$build/host.tap" 2>&1 || true
stage "guest: boot and run the tests"
rm -f "$build/guest.log"
scripts/boot.sh check "$build/guest.log" "${CHECK_TIME_LIMIT:-1500}" || true
stage "report (guest log: $build/guest.log)"
# --trace: every ERRORS entry and flag page needs a passing tagged point
# (scripts/traceability.py); the debug variant must show ENOMEM itself.
exec testsuite/report.py --expected "$build/guest/expected" \
	--host "$build/host.tap" --trace --variant "${VARIANT:-normal}" \
	"$build/guest.log"
