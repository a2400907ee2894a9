#!/bin/sh
# make selftests-compare: the kernel's own selftests for what kevent
# hooks (epoll, timers, pipes through splice, signals), on the kevent
# kernel (build/obj) and on the same config without CONFIG_KEVENT
# (build/obj-nokevent), in one table.
#
#   scripts/selftests-compare.sh
#
# It builds both kernels (scripts/kernel.sh, VARIANT=nokevent), checks
# that their .configs differ in CONFIG_KEVENT alone, builds the
# selftests of testsuite/selftests.list statically with their own
# Makefiles from the pristine tree (build/linux-source-6.1, which is
# not written: every output goes to build/selftests), adds the programs
# of testsuite/nokevent.list, packs one initramfs, boots each kernel
# once with it (scripts/boot.sh check, a time limit per program and per
# boot), and prints the table (testsuite/selftests-compare.py).  It
# fails when the kevent kernel fails a test that the other one passes,
# or when nokevent.c does not pass on the kernel without kevent.
#
# Environment: BUILD (default build); SELFTESTS_KERNELS, the kernels to
# build first (default "kevent nokevent"; "nokevent" uses build/obj as
# it is, "" both); SELFTESTS_BOOT_LIMIT (seconds per boot, default
# 900); JOBS.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top"
build=${BUILD:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
export BUILD="$build"
pristine=$build/linux-source-6.1
selftests=$pristine/tools/testing/selftests
out=$build/selftests
bin=$out/bin
kernels=${SELFTESTS_KERNELS-kevent nokevent}
boot_limit=${SELFTESTS_BOOT_LIMIT:-900}
jobs=${JOBS:-$(nproc)}
timings=$out/timings

# Seconds since the epoch; wall time of a step into $timings.
clock() {
	date +%s
}

timed() {
	what=$1
	shift
	t0=$(clock)
	status=0
	"$@" || status=$?
	echo "$what $(($(clock) - t0))" >>"$timings"
	return "$status"
}

mkdir -p "$out"
: >"$timings"

stage "kernels: ${kernels:-none rebuilt}"
for k in $kernels; do
	case "$k" in
	kevent) timed "build-kevent" scripts/kernel.sh ;;
	nokevent) timed "build-nokevent" env VARIANT=nokevent scripts/kernel.sh ;;
	*) die "SELFTESTS_KERNELS: unknown kernel $k" ;;
	esac
done
for obj in obj obj-nokevent; do
	[ -f "$build/$obj/arch/x86/boot/bzImage" ] ||
		die "no kernel in $build/$obj: run scripts/kernel.sh${obj#obj} first" \
		    "(VARIANT=nokevent for obj-nokevent)"
done
# The comparison means something only if CONFIG_KEVENT is all that
# differs (a build/obj made from an older kevent.config would not do).
grep -qx 'CONFIG_KEVENT=y' "$build/obj/.config" ||
	die "build/obj/.config does not set CONFIG_KEVENT=y"
if grep -q '^CONFIG_KEVENT=' "$build/obj-nokevent/.config"; then
	die "build/obj-nokevent/.config sets CONFIG_KEVENT"
fi
strip_kevent() {
	grep -v -E '^(# )?CONFIG_KEVENT[ =]|^# Linux/|^# Compiler:|^# [0-9]' "$1" |
		grep -v '^$'
}
strip_kevent "$build/obj/.config" >"$out/config-kevent"
strip_kevent "$build/obj-nokevent/.config" >"$out/config-nokevent"
if ! diff -u "$out/config-kevent" "$out/config-nokevent" >"$out/config.diff"; then
	head -n 40 "$out/config.diff" >&2
	die "build/obj and build/obj-nokevent differ in more than CONFIG_KEVENT" \
	    "(rebuild the older one: scripts/kernel.sh, VARIANT=nokevent)"
fi
echo "   the two .configs differ in CONFIG_KEVENT alone"

stage "selftests: build from ${pristine#"$top"/}"
[ -d "$selftests" ] || die "$selftests is missing: run scripts/kernel.sh"
t0=$(clock)
touch "$out/stamp"
# The UAPI headers of the pristine tree, for KHDR_INCLUDES ("make
# headers" writes into O= only).
if [ ! -f "$out/hdr/usr/include/linux/eventpoll.h" ]; then
	make -s -C "$pristine" O="$out/hdr" ARCH=x86_64 headers \
		>"$out/headers.log" 2>&1 ||
		{ tail -n 20 "$out/headers.log" >&2; die "make headers failed"; }
fi
rm -rf "$bin"
mkdir -p "$bin"
# Each folder of the list, with the programs it needs: the listed ones,
# and the helpers its scripts run.
list=$top/testsuite/selftests.list
dirs=$(grep -v -e '^#' -e '^[[:space:]]*$' "$list" | awk '{ sub("/[^/]*$", "", $1); print $1 }' | sort -u)
for dir in $dirs; do
	progs=$(awk -v d="$dir" '!/^#/ && NF >= 4 {
		n = $1; sub("/[^/]*$", "", n); if (n == d) print $4 }' "$list")
	targets=
	for p in $progs; do
		case "$p" in
		*.sh) ;;
		*) targets="$targets $out/build/$dir/$p" ;;
		esac
	done
	set --
	case "$dir" in
	splice) targets="$targets $out/build/$dir/default_file_splice_read $out/build/$dir/splice_read" ;;
	# clone3's Makefile links every program with -lcap, which
	# clone3_clear_sighand does not use (and Debian has no static
	# libcap without libcap-dev).
	clone3) set -- LDLIBS= ;;
	esac
	mkdir -p "$out/build/$dir"
	# shellcheck disable=SC2086
	if ! make -C "$selftests/$dir" OUTPUT="$out/build/$dir" \
		CC="gcc -static" KHDR_INCLUDES="-isystem $out/hdr/usr/include" \
		"$@" -j"$jobs" $targets >"$out/build/$dir.log" 2>&1; then
		tail -n 30 "$out/build/$dir.log" >&2
		die "building the selftests of $dir failed (log: $out/build/$dir.log)"
	fi
	for t in $targets; do
		cp "$t" "$bin/"
	done
	for p in $progs; do
		case "$p" in
		short_splice_read.sh)
			# Without its /sys part and /proc/sys/kernel/modprobe:
			# the guest kernel has no modules to load and test.
			sed -e '/^### \/sys\/ has no splice/,/^expect_failure "kernfs binattr/d' \
			    -e '/\/proc\/sys\/kernel\/modprobe/d' \
			    "$selftests/$dir/$p" >"$bin/$p"
			chmod 755 "$bin/$p"
			;;
		*.sh) cp "$selftests/$dir/$p" "$bin/$p" ;;
		esac
	done
done
cp testsuite/guest/kselftest "$bin/"
# The programs of testsuite/nokevent.list, built as make check builds
# the testsuite.
noprogs=$(scripts/suite-list.sh programs testsuite/nokevent.list)
# shellcheck disable=SC2046
make -s --no-print-directory $(for p in $noprogs; do echo "$build/guest/bin/$p"; done) ||
	die "building testsuite/nokevent.list failed"
for p in $noprogs; do
	cp "$build/guest/bin/$p" "$bin/"
done
echo "selftests-build $(($(clock) - t0))" >>"$timings"
# The build never writes into the pristine tree.
if [ -n "$(find "$pristine" -newer "$out/stamp" -print -quit)" ]; then
	die "the build wrote into $pristine: $(find "$pristine" -newer "$out/stamp" | head -n 3)"
fi

stage "initramfs"
scripts/suite-list.sh guest testsuite/nokevent.list | grep -v '^#' >"$out/nokevent.list"
grep -hv -e '^#' -e '^[[:space:]]*$' "$list" "$out/nokevent.list" >"$out/tests.list"
VARIANT=nokevent scripts/initramfs.sh "$bin" "$out/tests.list" "$out/initramfs.cpio"
# /init's limit per program must not cut a test's own one short.
max=$(awk '$2 == "bin/kselftest" && $3 > m { m = $3 } END { print m + 30 }' "$out/tests.list")

for k in kevent nokevent; do
	case "$k" in
	kevent) obj=obj ;;
	*) obj=obj-$k ;;
	esac
	stage "boot the $k kernel (${obj}, log: ${out#"$top"/}/$k.log)"
	rm -f "$out/$k.log"
	timed "boot-$k" env KERNEL="$build/$obj/arch/x86/boot/bzImage" \
		INITRD="$out/initramfs.cpio" APPEND="kevent.timeout=$max" \
		scripts/boot.sh check "$out/$k.log" "$boot_limit" || true
done

stage "compare"
exec python3 testsuite/selftests-compare.py --timings "$timings" \
	--nokevent-list "$out/nokevent.list" "$out/kevent.log" "$out/nokevent.log"
