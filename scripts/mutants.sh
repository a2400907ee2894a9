#!/bin/bash
# Deliberate kernel mutations that the testsuite must kill.
#
#   scripts/mutants.sh [NAME...]          (make mutants M="NAME...")
#
# Each testsuite/mutants/NAME.patch is a small unified diff against
# kernel/tree (paths as in the kernel tree), with a comment line first
# that says what it breaks.  For each mutant in turn: the patch is
# applied to a copy of the assembled tree, the kernel rebuilt (ccache,
# at nice 10), booted in the guest with the whole suite, and the
# mutant restored.  A mutant is killed if anything fails (a point, a
# crash, a hang, a kernel splat: testsuite/report.py decides), and
# survives if the suite passes.  A mutant that does not apply or does
# not build is an error in the list, not a kill.
#
# The guest runs with kevent.failfast=1: it stops at the first program
# that fails, and runs the quick unit tests first.  Before the mutants,
# the unmutated copy runs the same suite, which must pass
# (MUTANTS_BASELINE=0 skips that).
#
# The copies live in $BUILD/mutants and are made once: linux, a hard-link
# copy of $BUILD/linux (scripts/kernel.sh assemble), whose mutated file
# is written as a new file, never through the link; obj, a copy of
# $BUILD/obj.  The build runs in a private mount namespace where the
# copies are bind-mounted over $BUILD/linux and $BUILD/obj, so that the
# paths in the object files stay the same and only what a mutant
# changes is rebuilt; nothing outside that namespace sees them, and
# $BUILD/linux and $BUILD/obj are never written.
#
# Environment: BUILD, JOBS (default: number of CPUs), ACCEL (default
# tcg), MUTANTS_LIMIT (each boot's time limit in seconds, default 900),
# MUTANTS_BASELINE (1: run the unmutated kernel first; default 1).
# Logs: $BUILD/mutants/logs/NAME.{build,guest,report}; the table also goes
# to $BUILD/mutants/table.txt.  Exit 0 if every mutant was killed, 1 if
# one survived, 2 on an error.
set -eu -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
die_status=2
cd "$top"
build=${BUILD:-build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
dir=$build/mutants
logs=$dir/logs
jobs=${JOBS:-$(nproc)}
limit=${MUTANTS_LIMIT:-900}
mutants=testsuite/mutants
# The quick unit tests first (flag quick in testsuite/tests.list), so
# that a kill is found early; then the rest of the list in its order.
first=$(scripts/suite-list.sh flag quick | tr '\n' ' ')

[ -f "$build/linux/Makefile" ] || die "no assembled tree: run make kernel first"
[ -f "$build/obj/.config" ] || die "no $build/obj: run make kernel first"
command -v unshare >/dev/null || die "unshare (util-linux) is needed"

if [ $# -eq 0 ]; then
	# shellcheck disable=SC2046
	set -- $(cd "$mutants" && ls -- *.patch | sed 's/\.patch$//')
fi
for m in "$@"; do
	[ -f "$mutants/$m.patch" ] || die "no mutant $mutants/$m.patch"
done

mkdir -p "$logs"
exec 9>"$dir/lock"
flock -n 9 || die "another mutants.sh runs on $dir"

# The copies, once.
if [ ! -d "$dir/linux" ]; then
	say "hard-link copy of ${build#"$top"/}/linux"
	rm -rf "$dir/linux.tmp"
	cp -al "$build/linux" "$dir/linux.tmp"
	mv "$dir/linux.tmp" "$dir/linux"
fi
if [ ! -d "$dir/obj" ]; then
	say "copy of ${build#"$top"/}/obj"
	rm -rf "$dir/obj.tmp"
	cp -a "$build/obj" "$dir/obj.tmp"
	mv "$dir/obj.tmp" "$dir/obj"
fi

# The files that mutants change, as the assembled tree has them: a file
# restored after an earlier run is a copy that no longer follows the tree.
files_of() {
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$mutants/$1.patch"
}
# Write $dir/linux/$1 as a new file (breaking its hard link) with the
# content of the assembled tree: the new time stamp makes make rebuild it.
fresh() {
	cp "$build/linux/$1" "$dir/linux/$1.mutant-tmp"
	mv "$dir/linux/$1.mutant-tmp" "$dir/linux/$1"
}
for m in $(cd "$mutants" && ls -- *.patch | sed 's/\.patch$//'); do
	for f in $(files_of "$m"); do
		[ -f "$build/linux/$f" ] || die "$m: $f is not in the tree"
		cmp -s "$build/linux/$f" "$dir/linux/$f" || fresh "$f"
	done
done

# The programs, the list in the order above, and the initramfs.
say "build the programs into ${dir#"$top"/}/guest/bin"
make -s --no-print-directory BUILD="$dir" programs
# The kselftests come from make patchset (scripts/selftests-build.sh), not
# from this Makefile: take them from make check's programs if it made them.
for f in kselftest-kevent kselftest-kevent.tar; do
	[ ! -f "$build/guest/bin/$f" ] || cp "$build/guest/bin/$f" "$dir/guest/bin/"
done
list=$dir/tests.list
scripts/suite-list.sh guest | grep -v '^#' >"$dir/guest.list"
{
	for n in $first; do
		awk -v n="$n" '$1 == n' "$dir/guest.list"
	done
	awk -v first=" $first " 'index(first, " " $1 " ") == 0' "$dir/guest.list"
} | while read -r name cmd args; do
	if [ -f "$dir/guest/$cmd" ]; then
		echo "$name $cmd${args:+ $args}"
	else
		echo "mutants.sh: $name is not built here ($cmd): not run" >&2
	fi
done >"$list"
BUILD=$dir scripts/initramfs.sh "$dir/guest/bin" "$list" "$dir/initramfs.cpio"

# Build the copy (in its namespace) into $dir/obj; log to $1.
build_kernel() {
	# make mutants M=...: M= in MAKEFLAGS or the environment would name
	# a module to kbuild.
	env -u MAKEFLAGS -u MFLAGS -u M \
	CCACHE_DIR=${CCACHE_DIR:-$build/ccache} CCACHE_BASEDIR=${CCACHE_BASEDIR:-$top} \
	unshare -m --propagation private sh -c '
		set -e
		mount --bind "$1/linux" "$2/linux"
		mount --bind "$1/obj" "$2/obj"
		exec nice -n 10 make -C "$2/linux" O="$2/obj" ARCH=x86_64 \
			CC="ccache gcc" -j"$3" bzImage' \
		sh "$dir" "$build" "$jobs" >"$1" 2>&1
}

# Boot $dir/obj's kernel with the suite; the report goes to $1.report.
# Return report.py's status: 0 if everything passed.
run_suite() {
	KERNEL=$dir/obj/arch/x86/boot/bzImage INITRD=$dir/initramfs.cpio \
	ACCEL=${ACCEL:-tcg} APPEND="kevent.failfast=1" BUILD=$dir \
		scripts/boot.sh check "$1.guest" "$limit" >/dev/null 2>&1 || true
	testsuite/report.py "$1.guest" >"$1.report" 2>&1
}

# The first failure of a report: "program: point", shortened.
first_failure() {
	awk '/^FAIL / && !/: not run \(/ { sub(/^FAIL /, ""); print; exit }' "$1" |
		cut -c1-110
}

if [ "${MUTANTS_BASELINE:-1}" = 1 ]; then
	say "baseline: build the unmutated copy"
	build_kernel "$logs/baseline.build" ||
		die "the unmutated copy does not build: $logs/baseline.build"
	say "baseline: run the suite"
	t0=$(date +%s)
	if ! run_suite "$logs/baseline"; then
		echo "mutants.sh: the unmutated kernel fails the suite:" >&2
		first_failure "$logs/baseline.report" >&2
		die "see $logs/baseline.report"
	fi
	say "baseline: passed in $(($(date +%s) - t0))s"
fi

table=$dir/table.txt
printf '%-28s %-9s %6s  %s\n' mutant result time 'killed by (first failure)' >"$table.tmp"
survived=0
errors=0
for m in "$@"; do
	t0=$(date +%s)
	log=$logs/$m
	files=$(files_of "$m")
	for f in $files; do
		fresh "$f"
	done
	result='' by=''
	if ! patch -d "$dir/linux" -p1 -s -F0 --no-backup-if-mismatch \
		<"$mutants/$m.patch" >"$log.build" 2>&1; then
		result=ERROR by="the patch does not apply ($log.build)"
	else
		say "$m: build"
		if ! build_kernel "$log.build"; then
			result=ERROR by="does not build ($log.build)"
		fi
	fi
	# Back to the assembled tree's content (a new time stamp: the next
	# build compiles it again, from ccache).
	for f in $files; do
		fresh "$f"
		rm -f "$dir/linux/$f.orig" "$dir/linux/$f.rej"
	done
	if [ -z "$result" ]; then
		say "$m: run the suite"
		if run_suite "$log"; then
			result=SURVIVED
		else
			result=killed
			by=$(first_failure "$log.report")
		fi
	fi
	case $result in
	SURVIVED) survived=$((survived + 1)) ;;
	ERROR) errors=$((errors + 1)) ;;
	esac
	line=$(printf '%-28s %-9s %5ds  %s' "$m" "$result" "$(($(date +%s) - t0))" "$by")
	say "$line"
	echo "$line" >>"$table.tmp"
done
mv "$table.tmp" "$table"
echo
cat "$table"
echo "$# mutants: $(($# - survived - errors)) killed, $survived survived, $errors errors; $(($(date +%s) - start))s"
[ "$errors" -eq 0 ] || exit 2
[ "$survived" -eq 0 ] || exit 1
exit 0
