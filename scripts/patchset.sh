#!/bin/sh
# make patchset: the series as git commits on the pristine tree, and
# git format-patch output with a cover letter in build/patchset/.
#
#   scripts/patchset.sh [base|commits|patches|all]
#
# base     a git repository of the pristine Linux 6.1 tree in
#          build/patchset-git (made once, about 2 minutes; never
#          committed to this project), its first commit tagged
#          "pristine"
# commits  branch "kevent": one commit per logical step of
#          kernel/patchset/steps (scripts/patchset.py)
# patches  build/patchset/: the cover letter and one patch per commit
# all      all three (the default)
#
# The last commit's tree is checked against the tree scripts/kernel.sh
# assembles (build/stage): every file of the series must be identical.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
build=${BUILD:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
export BUILD="$build"
pristine=$build/linux-source-6.1
repo=$build/patchset-git
out=$build/patchset

# The identity of the series: the From: line of the hook patches.
ident=$(sed -n '1s/^From: //p' "$top/kernel/patches/kevent-build.patch")
export GIT_AUTHOR_NAME="${ident% <*}"
export GIT_AUTHOR_EMAIL="${ident##*<}"
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>}
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME"
export GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
# Fixed dates: the same series gives the same commits and patches.
export GIT_AUTHOR_DATE="2024-01-01T00:00:00+0000"
export GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"

git_() {
	git -C "$repo" -c core.autocrlf=false -c advice.detachedHead=false \
		-c user.name="$GIT_AUTHOR_NAME" -c user.email="$GIT_AUTHOR_EMAIL" "$@"
}

base() {
	[ -f "$pristine/.kevent-tarball" ] ||
		die "no pristine tree in $pristine: run scripts/kernel.sh assemble (make check does)"
	stamp=$(cat "$pristine/.kevent-tarball")
	if [ -f "$repo/.git/kevent-tarball" ] &&
	   [ "$(cat "$repo/.git/kevent-tarball")" = "$stamp" ] &&
	   git_ rev-parse -q --verify pristine >/dev/null; then
		return
	fi
	echo "patchset: a git repository of the pristine tree in ${repo#"$top"/}"
	rm -rf "$repo"
	mkdir -p "$repo"
	# Without .kevent-tarball, the marker of scripts/kernel.sh.
	(cd "$pristine" && tar --exclude=./.kevent-tarball -cf - .) |
		(cd "$repo" && tar -xf -)
	git_ init -q -b pristine-branch
	# -f: Debian's .gitignore ignores every top-level entry.
	git_ add -f .
	version=$(make -s -C "$repo" kernelversion)
	git_ commit -q -m "Linux $version (Debian linux-source-6.1)"
	git_ tag pristine
	echo "$stamp" >"$repo/.git/kevent-tarball"
}

commits() {
	git_ checkout -q -f pristine
	git_ clean -q -fdx
	git_ checkout -q -B kevent pristine
	python3 "$top/scripts/patchset.py" commits "$repo"
}

patches() {
	rm -rf "$out"
	mkdir -p "$out"
	python3 "$top/scripts/patchset.py" cover >"$out/.cover"
	# No --thread: its Message-Ids carry the time, and git send-email
	# threads the series itself (sendemail.thread, true by default).
	git_ format-patch -q --cover-letter -o "$out" pristine..kevent
	python3 "$top/scripts/patchset.py" fill-cover "$out"/0000-cover-letter.patch \
		"$out/.cover"
	rm -f "$out/.cover"
	ls "$out"
}

case "${1:-all}" in
base) base ;;
commits) base; commits ;;
patches) patches ;;
all) base; commits; patches ;;
*) die "usage: $0 [base|commits|patches|all]" ;;
esac
