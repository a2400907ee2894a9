#!/bin/sh
# Build tools/testing/selftests/kevent of the series (make patchset) as
# the kernel builds it, statically, against the series' own UAPI headers
# (make headers), install it with the kselftest runner, and pack it for
# the guest:
#
#   scripts/selftests-build.sh [BINDIR]
#
# BINDIR (default build/guest/bin) gets kselftest-kevent.tar, the
# installed tree (run_kselftest.sh, kselftest/runner.sh, kevent/), and
# kselftest-kevent, the guest's script that unpacks and runs it
# (testsuite/guest/kselftest-kevent; testsuite/tests.list names it).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
repo=$build/patchset-git
ks=$build/kselftest
bindir=${1:-$build/guest/bin}
arch=${ARCH:-x86_64}
cross=${CROSS_COMPILE:-}

[ -f "$repo/tools/testing/selftests/kevent/Makefile" ] ||
	{ echo "selftests-build: no selftests in $repo: run make patchset" >&2; exit 1; }
mkdir -p "$ks" "$bindir"
obj=$ks/obj-$arch
make -s -C "$repo" O="$obj" ARCH="$arch" headers
rm -rf "$ks/install-$arch"
make -s -C "$repo/tools/testing/selftests" O="$obj" ARCH="$arch" \
	CROSS_COMPILE="$cross" TARGETS=kevent LDFLAGS=-static \
	install INSTALL_PATH="$ks/install-$arch" >"$ks/build-$arch.log" 2>&1 ||
	{ cat "$ks/build-$arch.log" >&2; exit 1; }
if grep -i 'warning:' "$ks/build-$arch.log" >&2; then
	echo "selftests-build: the selftests build with warnings" >&2
	exit 1
fi
tar -C "$ks/install-$arch" -cf "$bindir/kselftest-kevent.tar.tmp" .
mv "$bindir/kselftest-kevent.tar.tmp" "$bindir/kselftest-kevent.tar"
cp "$top/testsuite/guest/kselftest-kevent" "$bindir/kselftest-kevent"
echo "selftests-build: $(wc -l <"$ks/install-$arch/kselftest-list.txt") kevent selftests for $arch in ${bindir#"$top"/}/kselftest-kevent.tar"
