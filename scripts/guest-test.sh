#!/bin/sh
# Run a few programs of the testsuite in the guest, on the kernel that is
# built already (scripts/kernel.sh is run only when there is none, as in
# a fresh clone: nothing else is rebuilt but the programs named).
#
#   scripts/guest-test.sh NAME...        (make guest-test T="NAME...")
#
# NAME is a test of testsuite/tests/ (it runs with its -m32 twin; name
# ctl-m32 alone for the twin only), an example of examples/, or a line of
# testsuite/tests.list (limits-huge).  Each runs as testsuite/tests.list
# says, with its arguments.  The guest boots with an initramfs of only
# these programs (and the helpers of tests.list: evserver, which socket
# runs), and report.py reports on them alone: no traceability report,
# which needs the whole suite.
#
# Environment: BUILD, VARIANT (the kernel: build/obj or build/obj-VARIANT),
# GUEST_TEST_LIMIT (the boot's time limit in seconds, default 600).
# The serial log is $BUILD/guest-test/guest.log.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
dir=$build/guest-test
bin=$build/guest/bin
helpers=$(scripts/suite-list.sh flag helper)
# The guest's lines of testsuite/tests.list, twins expanded.
lines=$(scripts/suite-list.sh guest | grep -v '^#')

if [ $# -eq 0 ]; then
	echo 'usage: make guest-test T="NAME..."  (a test, an example, or a name of testsuite/tests.list)' >&2
	exit 2
fi

# The tests.list line of a program, or "NAME bin/NAME" if it has none.
list_line() {
	echo "$lines" | awk -v n="$1" '$1 == n { print; found = 1; exit }
		END { if (!found) print n "\tbin/" n }'
}

# The program a tests.list line runs.
binary_of() {
	list_line "$1" | awk '{ sub(/^bin\//, "", $2); print $2 }'
}

names=
for n in "$@"; do
	case $n in
	*-m32)	src=testsuite/tests/${n%-m32}.c ;;
	*)	src=testsuite/tests/$n.c ;;
	esac
	if [ -f "$src" ] && [ "${n%-m32}" = "$n" ]; then
		names="$names $n $n-m32"
	elif [ -f "$src" ] || [ -f "examples/$n.c" ] ||
	     echo "$lines" | awk -v n="$n" '$1 == n { f = 1 } END { exit !f }'; then
		names="$names $n"
	else
		echo "guest-test: $n is neither a test, an example nor a line of testsuite/tests.list" >&2
		exit 2
	fi
done

obj=$build/obj${VARIANT:+-$VARIANT}
[ -f "$obj/arch/x86/boot/bzImage" ] && [ -x "$obj/usr/gen_init_cpio" ] ||
	scripts/kernel.sh

targets=
for n in $names $helpers; do
	targets="$targets $bin/$(binary_of "$n")"
done
# shellcheck disable=SC2086
make -s --no-print-directory $targets

rm -rf "$dir"
mkdir -p "$dir/bin"
: >"$dir/tests.list"
: >"$dir/expected"
for n in $names; do
	b=$(binary_of "$n")
	cp "$bin/$b" "$dir/bin/"
	list_line "$n" >>"$dir/tests.list"
	if [ -f "testsuite/tests/${b%-m32}.c" ]; then
		echo "$n tap" >>"$dir/expected"
	else
		echo "$n example" >>"$dir/expected"
	fi
done
for h in $helpers; do
	cp "$bin/$h" "$dir/bin/"
done

scripts/initramfs.sh "$dir/bin" "$dir/tests.list" "$dir/initramfs.cpio"
INITRD=$dir/initramfs.cpio scripts/boot.sh check "$dir/guest.log" \
	"${GUEST_TEST_LIMIT:-600}" || true
exec testsuite/report.py --expected "$dir/expected" "$dir/guest.log"
