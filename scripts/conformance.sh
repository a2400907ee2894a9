#!/bin/sh
# The suite against a kernel of one's own (doc/testing.md):
#
#   scripts/conformance.sh boot [NAME...]   make conformance KERNEL=PATH
#   scripts/conformance.sh bundle        make conformance-bundle
#   scripts/conformance.sh bundle-test [NAME...]
#   scripts/conformance.sh tap NAME...   both of them, as TAP (make check)
#
# boot: the programs and an initramfs (nothing else of a kernel is
# built), then KERNEL, an x86-64 bzImage (ARCH=arm64: an arm64 Image),
# booted in QEMU with kevent.require=1, and report.py --conformance:
# what the kernel lacks is a skip, no kevent is a failure with nothing
# run; NAMEs (make conformance T="...") run those programs alone.  bundle: $BUILD/kevent-conformance.tar.gz, the programs, a POSIX
# sh runner, tests.list and a README, to run on a machine booted with a
# kevent kernel.  bundle-test: the bundle unpacked into /tmp of the guest
# (KERNEL, default the kernel of build/obj) and its ./run run there with
# the NAMEs given, as a user runs it; it prints the runner's output and
# passes when the runner's verdict is the one wanted (CONFORMANCE_WANT,
# pass by default; fail for a kernel without kevent).
#
# Environment: BUILD, ARCH, KERNEL, CONFORMANCE_LIMIT (seconds a boot
# may take, default 1500), CONFORMANCE_DIR (the folder of the lists,
# initramfs and logs, default build/conformance).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
build=${BUILD:-build}
arch=${ARCH:-x86_64}
guest=$build/guest
suffix=
if [ "$arch" != x86_64 ]; then
	guest=$build/guest-$arch
	suffix=-$arch
	export BUSYBOX="$build/$arch/bin/busybox"
fi
dir=${CONFORMANCE_DIR:-$build/conformance$suffix}
limit=${CONFORMANCE_LIMIT:-1500}
. testsuite/guest/suite.sh

# tests.list for a kernel of one's own: the guest's lines whose program
# is built for this architecture, without those flagged tree (the
# kernel's own kselftests, which run the same programs from this tree's
# kernel build).
suite_list() {
	SUITE_WITHOUT=tree scripts/suite-list.sh guest |
		while read -r name cmd args; do
			case "$name" in
			'#heavy') echo "$name $cmd${args:+ $args}" ;;
			*) [ ! -f "$guest/$cmd" ] || echo "$name $cmd${args:+ $args}" ;;
			esac
		done
}

# The programs, and the list of those NAMEs alone if any are given.
programs() {
	make -s --no-print-directory programs
	mkdir -p "$dir"
	suite_list >"$dir/tests.list"
	if [ $# -gt 0 ]; then
		suite_lines "$dir/tests.list" "$@" >"$dir/tests.list.tmp"
		mv "$dir/tests.list.tmp" "$dir/tests.list"
	fi
	awk 'NR == FNR { if ($1 !~ /^#/) in_list[$1] = 1; next }
		$1 in in_list' "$dir/tests.list" "$guest/expected" >"$dir/expected"
}

boot() {
	[ -n "${KERNEL:-}" ] ||
		die "name the kernel: make conformance KERNEL=PATH (a bzImage; with ARCH=arm64 an Image)"
	[ -f "$KERNEL" ] || die "KERNEL=$KERNEL: no such file"
	programs "$@"
	scripts/initramfs.sh "$guest/bin" "$dir/tests.list" "$dir/initramfs.cpio"
	rm -f "$dir/guest.log"
	# The per-program limit of the debug kernel: a kernel of one's own may
	# be as slow; /init stretches the watchdogs when it finds KASAN.
	INITRD=$dir/initramfs.cpio APPEND="kevent.require=1 kevent.timeout=300" \
		scripts/boot.sh check "$dir/guest.log" "$limit" || true
	testsuite/report.py --conformance --expected "$dir/expected" \
		"$dir/guest.log"
}

bundle() {
	programs
	name=kevent-conformance-$(git describe --always --dirty 2>/dev/null || echo unknown)$suffix
	stage=$dir/stage
	rm -rf "$stage"
	mkdir -p "$stage/$name/bin" "$stage/$name/lib"
	# socket runs evserver; the runner asks kevent-probe first.  The
	# debug information would be of no use on another machine.
	{ awk '$1 !~ /^#/ { print $2 }' "$dir/tests.list"
	  echo bin/evserver; echo bin/kevent-probe; } | sort -u | while read -r cmd; do
		strip --strip-debug -o "$stage/$name/$cmd" "$guest/$cmd"
	done
	cp testsuite/bundle/run "$stage/$name/run"
	cp testsuite/bundle/README "$stage/$name/README"
	cp testsuite/guest/suite.sh testsuite/splats "$stage/$name/lib/"
	cp "$dir/tests.list" "$stage/$name/tests.list"
	tar -C "$stage" --owner=0 --group=0 -czf "$build/kevent-conformance$suffix.tar.gz.tmp" "$name"
	mv "$build/kevent-conformance$suffix.tar.gz.tmp" "$build/kevent-conformance$suffix.tar.gz"
	echo "conformance: $build/kevent-conformance$suffix.tar.gz ($name, $(du -h "$build/kevent-conformance$suffix.tar.gz" | cut -f1))"
}

# The runner of the bundle in the guest, as a user runs it.
bundle_test() {
	bundle
	kernel=${KERNEL:-$build/obj$suffix/arch/x86/boot/bzImage}
	[ "$arch" = x86_64 ] || kernel=${KERNEL:-$build/obj$suffix/arch/$arch/boot/Image}
	: >"$dir/empty.list"
	BUNDLE=$build/kevent-conformance$suffix.tar.gz scripts/initramfs.sh \
		"$dir/stage" "$dir/empty.list" "$dir/bundle.cpio"
	args=$(echo "$*" | tr ' ' ,)
	KERNEL=$kernel INITRD=$dir/bundle.cpio \
		APPEND="kevent.bundle=$args" \
		scripts/boot.sh bundle "$dir/bundle.log" "$limit" >/dev/null || true
	# The runner's output, between /init's markers, as it printed it.
	tr -d '\r' <"$dir/bundle.log" |
		sed -n '/^### TEST bundle/,/^### EXIT bundle/p' |
		grep -v '^###\|^\[ *[0-9]*\.[0-9]*\]' | sed 's/^/  bundle: /'
	status=$(tr -d '\r' <"$dir/bundle.log" | sed -n 's/^### EXIT bundle \([0-9]*\).*/\1/p')
	want=${CONFORMANCE_WANT:-pass}
	case "$want:$status" in
	pass:0|fail:[1-9]*)
		echo "PASS conformance bundle: ./run in the guest's /tmp ${args:+($*) }gives $want (exit status $status)" ;;
	*)
		echo "FAIL conformance bundle: ./run in the guest's /tmp ${args:+($*) }should $want, exit status ${status:-none} (log: $dir/bundle.log)"
		return 1 ;;
	esac
}

# For make check: both ways on KERNEL with the NAMEs alone, as TAP.
tap() {
	echo "1..2"
	status=0
	out=$(boot "$@" 2>&1) || status=$?
	summary=$(echo "$out" | tail -n 1)
	if [ "$status" -eq 0 ]; then
		echo "ok 1 - make conformance KERNEL=$KERNEL T=\"$*\": $summary"
	else
		echo "not ok 1 - make conformance KERNEL=$KERNEL T=\"$*\": $summary"
		echo "$out" | grep -v '^PASS ' | sed 's/^/# /'
	fi
	status=0
	out=$(bundle_test "$@" 2>&1) || status=$?
	if [ "$status" -eq 0 ]; then
		echo "ok 2 - $(echo "$out" | tail -n 1 | sed 's/^PASS //')"
	else
		echo "not ok 2 - $(echo "$out" | tail -n 1 | sed 's/^FAIL //')"
		echo "$out" | sed 's/^/# /'
	fi
}

case "${1:-}" in
tap) shift; tap "$@" ;;
boot) shift; boot "$@" ;;
bundle) bundle ;;
bundle-test) shift; bundle_test "$@" ;;
*) die "usage: $0 boot|bundle|bundle-test|tap [NAME...]" ;;
esac
