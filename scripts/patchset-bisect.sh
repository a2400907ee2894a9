#!/bin/sh
# make patchset-bisect: build the kernel after each patch of the series
# (git bisect must never land on a commit that does not build).
#
#   scripts/patchset-bisect.sh [FIRST [LAST]]
#
# The commits of branch "kevent" in build/patchset-git (make patchset)
# are checked out one after the other into a worktree,
# build/bisect/linux, and built into build/bisect/obj with the guest's
# config (tinyconfig + kernel/config/kevent.config, merged again at
# each commit, as scripts/kernel.sh does), ccache and -j$JOBS (2).
# FIRST and LAST are patch numbers, 1-based (default: all).  Prints
# one line per patch and a summary; the log of each build is in
# build/bisect/NN.log.  About 10 minutes for the first build, then
# each patch rebuilds what its headers touch.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
repo=$build/patchset-git
dir=$build/bisect
tree=$dir/linux
obj=$dir/obj
jobs=${JOBS:-2}
arch=${ARCH:-x86_64}
target=${TARGET:-bzImage}
fragment=$top/kernel/config/kevent.config

[ -d "$repo/.git" ] || { echo "patchset-bisect: run make patchset first" >&2; exit 1; }
mkdir -p "$dir"
if [ ! -d "$tree" ]; then
	git -C "$repo" worktree prune
	git -C "$repo" worktree add -q --detach "$tree" pristine
fi

export CCACHE_DIR=${CCACHE_DIR:-$build/ccache}
# The same relative paths as build/linux and build/obj: cache hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$top}

commits=$(git -C "$repo" rev-list --reverse pristine..kevent)
first=${1:-1}
last=${2:-$(echo "$commits" | wc -l)}
n=0
built=0
failed=0
start=$(date +%s)
for c in $commits; do
	n=$((n + 1))
	[ "$n" -ge "$first" ] && [ "$n" -le "$last" ] || continue
	subject=$(git -C "$repo" log -1 --format=%s "$c")
	log=$dir/$(printf %02d "$n").log
	built=$((built + 1))
	t0=$(date +%s)
	git -C "$tree" checkout -q --detach "$c"
	status=ok
	{
		mkdir -p "$obj"
		make -C "$tree" O="$obj" ARCH="$arch" tinyconfig &&
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" \
			"$obj/.config" "$fragment" &&
		make -C "$tree" O="$obj" ARCH="$arch" olddefconfig &&
		make -C "$tree" O="$obj" ARCH="$arch" CC="ccache gcc" \
			-j"$jobs" "$target"
	} >"$log" 2>&1 || status=FAIL
	kevent=$(grep '^CONFIG_KEVENT=' "$obj/.config" || echo 'CONFIG_KEVENT unset')
	warnings=$(grep -c ': warning: ' "$log" || true)
	[ "$status" = ok ] || failed=$((failed + 1))
	printf '%-4s %02d %4ds %s, %s warnings: %s\n' "$status" "$n" \
		"$(($(date +%s) - t0))" "$kevent" "$warnings" "$subject"
done
echo "patchset-bisect: $((built - failed)) of $built patches build ($(($(date +%s) - start)) s)"
[ "$failed" -eq 0 ]
