#!/bin/sh
# Install the Debian packages that building, booting and checking need.
# Only what is missing is installed; nothing is done when all are there.
set -eu

packages="linux-source-6.1 qemu-system-x86 busybox-static groff mandoc
pandoc gcc g++ gcc-multilib g++-multilib make ccache flex bison bc
libelf-dev libssl-dev cpio xz-utils python3 perl man-db
liburing-dev wrk httperf gnuplot-nox cmake patch git sparse
python3-docutils python3-ply rsync python3-git debootstrap manpages
manpages-dev procps binutils"
# manpages, manpages-dev and procps: the pages of other projects that
# the manual's SEE ALSO names (epoll(7), syscall(2), proc(5),
# sysctl(8)), which scripts/man-lint.sh finds with man -w; debootstrap
# for make check-fresh; binutils for nm and ar in scripts/core-calls.py.

# ARCH=arm64: clang and LLVM (gcc-aarch64-linux-gnu conflicts with
# gcc-multilib), arm64's C library and libgcc, QEMU for arm64, and
# busybox-static of arm64, unpacked into build/arm64 (dpkg gets the
# arm64 architecture for it).
[ "${ARCH:-x86_64}" != arm64 ] ||
	packages="$packages clang lld llvm libc6-dev-arm64-cross
libgcc-12-dev-arm64-cross qemu-system-arm"

missing=
for p in $packages; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	$sudo apt-get update -q >/dev/null
	# shellcheck disable=SC2086
	$sudo apt-get install -y -q --no-install-recommends $missing
fi

# The arm64 guest's busybox: Debian's busybox-static for arm64, unpacked.
if [ "${ARCH:-x86_64}" = arm64 ]; then
	top=$(cd "$(dirname "$0")/.." && pwd)
	dir=${BUILD:-$top/build}/arm64
	case "$dir" in /*) ;; *) dir=$top/$dir ;; esac
	[ -x "$dir/bin/busybox" ] && exit 0
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		$sudo dpkg --add-architecture arm64
		$sudo apt-get update -q >/dev/null
	fi
	mkdir -p "$dir"
	(cd "$dir" && rm -f busybox-static_*.deb &&
	 apt-get download -q busybox-static:arm64 >/dev/null &&
	 dpkg-deb -x busybox-static_*.deb .)
	[ -x "$dir/bin/busybox" ] || { echo "deps: no arm64 busybox in $dir" >&2; exit 1; }
fi
