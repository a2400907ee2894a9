#!/bin/sh
# Pack the guest's initramfs: busybox-static, testsuite/guest/init, the
# test list and every program in the guest bin folder.
#
#   scripts/initramfs.sh BINDIR LIST OUTPUT
#
# The archive is written by the kernel's own gen_init_cpio, so that device
# nodes need no root privileges.  BUSYBOX names another busybox (the
# arm64 one of scripts/deps.sh for ARCH=arm64); BUNDLE, a conformance
# bundle (make conformance-bundle) for kevent.mode=bundle.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
bindir=$1
list=$2
out=$3
build=${BUILD:-$top/build}
suffix=
[ "${ARCH:-x86_64}" = x86_64 ] || suffix=-$ARCH
gen=$build/obj$suffix${VARIANT:+-$VARIANT}/usr/gen_init_cpio
busybox=${BUSYBOX:-/bin/busybox}

# Without a kernel built here (make conformance KERNEL=...), the tool
# alone, from the kernel source: it is one C file.
if [ ! -x "$gen" ]; then
	gen=$build/gen_init_cpio
	src=$build/linux-source-6.1/usr/gen_init_cpio.c
	tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
	if [ ! -x "$gen" ]; then
		mkdir -p "$build"
		if [ -f "$src" ]; then
			cc -O2 -o "$gen" "$src"
		elif [ -f "$tarball" ]; then
			tar -xJOf "$tarball" linux-source-6.1/usr/gen_init_cpio.c |
				cc -O2 -x c -o "$gen" -
		else
			echo "initramfs.sh: no gen_init_cpio: install linux-source-6.1" >&2
			exit 1
		fi
	fi
fi
[ -x "$busybox" ] || { echo "initramfs.sh: install busybox-static" >&2; exit 1; }

spec=$out.list
{
	for d in /bin /sbin /dev /proc /sys /tmp /root /kevent /kevent/bin; do
		echo "dir $d 755 0 0"
	done
	echo "nod /dev/console 600 0 0 c 5 1"
	echo "nod /dev/null 666 0 0 c 1 3"
	echo "file /bin/busybox $busybox 755 0 0"
	# The host's busybox-static names the applets: an arm64 one cannot
	# run here, and Debian builds both from one configuration.
	for applet in $(/bin/busybox --list); do
		[ "$applet" = busybox ] || echo "slink /bin/$applet busybox 777 0 0"
	done
	echo "file /init $top/testsuite/guest/init 755 0 0"
	echo "file /kevent/demo.sh $top/testsuite/guest/demo.sh 755 0 0"
	echo "file /kevent/suite.sh $top/testsuite/guest/suite.sh 644 0 0"
	echo "file /kevent/tests.list $list 644 0 0"
	[ -z "${BUNDLE:-}" ] || echo "file /kevent/bundle.tar.gz $BUNDLE 644 0 0"
	for f in "$bindir"/*; do
		[ -f "$f" ] && echo "file /kevent/bin/${f##*/} $f 755 0 0"
	done
} >"$spec"
"$gen" "$spec" >"$out.tmp"
mv "$out.tmp" "$out"
