#!/bin/sh
# Assemble, configure and build the patched Linux 6.1 kernel.
#
#   scripts/kernel.sh [assemble|config|build|all]
#
# The Debian linux-source-6.1 tarball is unpacked once into a pristine
# tree, which is never written again, and copied once into the work tree.
# Assembling stages the series (new files from kernel/tree, the UAPI
# header, the hook patches of kernel/patches/series applied to pristine
# copies) and copies into the work tree only the files whose content
# changed, so that an unchanged series rebuilds nothing.
#
# Environment: BUILD (build folder, default build), VARIANT (kernel config
# variant: kernel/config/<VARIANT>.config is merged after kevent.config;
# default none), ARCH (x86_64, the default, or arm64: cross-built with
# clang, LLVM=1, into build/obj-arm64, kernel/config/arm64.config merged
# after kevent.config; Debian's gcc-aarch64-linux-gnu cannot be installed
# beside gcc-multilib, which the -m32 tests need), JOBS (default: number
# of CPUs).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
# The variables of this project's make (M= of make mutants, T=) must not
# reach the kernel's make, through MAKEFLAGS or the environment, where
# make exports them: there M= names an external module, and every make
# of the kernel tree fails once it names several mutants.
unset MAKEFLAGS MFLAGS M T
build=${BUILD:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
pristine=$build/linux-source-6.1
tree=$build/linux
variant=${VARIANT:-}
arch=${ARCH:-x86_64}
# Another architecture than x86_64 builds into folders of its own.
case "$arch" in
x86_64)	archdir=x86 image=bzImage llvm= cc=gcc suffix= ;;
arm64)	archdir=arm64 image=Image llvm=1 cc=clang suffix=-arm64 ;;
*)	echo "kernel.sh: ARCH is x86_64 or arm64, not $arch" >&2; exit 1 ;;
esac
obj=$(kernel_obj "$build")
logs=$build/logs
jobs=${JOBS:-$(nproc)}

mkdir -p "$logs"

unpack() {
	[ -f "$tarball" ] || die "$tarball is missing: install linux-source-6.1"
	stamp=$(stat -c '%s %Y' "$tarball")
	if [ -f "$pristine/.kevent-tarball" ] &&
	   [ "$(cat "$pristine/.kevent-tarball")" = "$stamp" ] &&
	   [ -f "$tree/.kevent-tarball" ]; then
		return
	fi
	say "unpack $tarball"
	rm -rf "$pristine" "$tree"
	tar -C "$build" -xf "$tarball"
	[ -d "$pristine" ] || die "$tarball did not unpack to linux-source-6.1/"
	echo "$stamp" >"$pristine/.kevent-tarball"
	cp -a "$pristine" "$tree"
}

kernel_version() {
	make -s -C "$pristine" kernelversion 2>/dev/null
}

assemble() {
	unpack
	version=$(kernel_version)
	case "$version" in
	6.1.*) ;;
	*) die "linux-source is $version; this series is for Linux 6.1" ;;
	esac
	say "assemble the series on Linux $version"

	stage=$build/stage
	rm -rf "$stage"
	mkdir -p "$stage"
	series=$top/kernel/patches/series
	for p in $(grep -v '^#' "$series"); do
		sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$top/kernel/patches/$p"
	done | sort -u >"$build/patched-files"
	while read -r f; do
		mkdir -p "$stage/$(dirname "$f")"
		[ -f "$pristine/$f" ] && cp -p "$pristine/$f" "$stage/$f"
	done <"$build/patched-files"
	for p in $(grep -v '^#' "$series"); do
		if ! patch -d "$stage" -p1 -s --no-backup-if-mismatch -F0 \
			<"$top/kernel/patches/$p" >"$logs/patch.log" 2>&1; then
			cat "$logs/patch.log" >&2
			die "kernel/patches/$p does not apply to Linux $version"
		fi
	done
	(cd "$top/kernel/tree" && find . -type f) | while read -r f; do
		mkdir -p "$stage/$(dirname "$f")"
		cp "$top/kernel/tree/$f" "$stage/$f"
	done
	mkdir -p "$stage/include/uapi/linux"
	cp "$top/include/uapi/linux/kevent.h" "$stage/include/uapi/linux/"

	# Files the previous series touched and this one does not: restore.
	(cd "$stage" && find . -type f | sed 's|^\./||' | sort) >"$build/series-files"
	if [ -f "$tree/.kevent-files" ]; then
		comm -23 "$tree/.kevent-files" "$build/series-files" |
		while read -r f; do
			if [ -f "$pristine/$f" ]; then
				cp "$pristine/$f" "$tree/$f"
			else
				rm -f "$tree/$f"
			fi
		done
	fi
	while read -r f; do
		if ! cmp -s "$stage/$f" "$tree/$f"; then
			mkdir -p "$tree/$(dirname "$f")"
			cp "$stage/$f" "$tree/$f"
		fi
	done <"$build/series-files"
	cp "$build/series-files" "$tree/.kevent-files"
}

config() {
	fragments="$top/kernel/config/kevent.config"
	[ "$arch" = x86_64 ] || fragments="$fragments $top/kernel/config/$arch.config"
	[ -n "$variant" ] && fragments="$fragments $top/kernel/config/$variant.config"
	sum=$(cat $fragments | sha256sum | cut -c1-16)
	if [ -f "$obj/.config" ] && [ -f "$obj/.kevent-config" ] &&
	   [ "$(cat "$obj/.kevent-config")" = "$sum" ]; then
		return
	fi
	say "configure $obj from tinyconfig +$(for f in $fragments; do printf ' %s' "${f#"$top"/}"; done)"
	mkdir -p "$obj"
	logged "$logs/config.log" make -C "$tree" O="$obj" ARCH="$arch" \
		LLVM="$llvm" tinyconfig
	# shellcheck disable=SC2086
	logged "$logs/config.log" "$tree/scripts/kconfig/merge_config.sh" \
		-m -O "$obj" "$obj/.config" $fragments
	logged "$logs/config.log" make -C "$tree" O="$obj" ARCH="$arch" \
		LLVM="$llvm" olddefconfig
	# The last fragment that sets an option decides it, as for
	# merge_config.sh; "# CONFIG_X is not set" turns it off, and then
	# the .config must not set it (olddefconfig writes that line, or
	# none when the option's dependencies are off).
	missing=$(cat $fragments |
		grep -E '^(CONFIG_[A-Z0-9_]+=|# CONFIG_[A-Z0-9_]+ is not set$)' |
		awk '{ o = /^#/ ? $2 : substr($0, 1, index($0, "=") - 1)
		       last[o] = $0 } END { for (o in last) print last[o] }' |
		while read -r line; do
			case "$line" in
			'# '*)
				opt=${line#\# }
				! grep -q "^${opt%% *}=" "$obj/.config" ||
					echo "$line"
				;;
			*)
				grep -qxF "$line" "$obj/.config" || echo "$line"
				;;
			esac
		done)
	[ -z "$missing" ] || die "the resolved .config lacks: $(echo $missing)"
	echo "$sum" >"$obj/.kevent-config"
}

build() {
	log=kernel$suffix${variant:+-$variant}.log
	say "build $image in ${obj#"$top"/} (log: ${logs#"$top"/}/$log)"
	export CCACHE_DIR=${CCACHE_DIR:-$build/ccache}
	# Paths relative to the checkout: build folders share cache hits.
	export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$top}
	logged "$logs/$log" make -C "$tree" \
		O="$obj" ARCH="$arch" LLVM="$llvm" CC="ccache $cc" -j"$jobs" \
		"$image"
	say "kernel ready: ${obj#"$top"/}/arch/$archdir/boot/$image"
}

case "${1:-all}" in
assemble) assemble ;;
config) assemble; config ;;
build|all) assemble; config; build ;;
*) die "usage: $0 [assemble|config|build|all]" ;;
esac
