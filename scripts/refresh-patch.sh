#!/bin/sh
# Rewrite the hunks of one patch of kernel/patches from the files it
# produces, as quilt refresh does: line numbers and context come out
# exact, so that the series applies with fuzz 0 and no offsets.
#
#   scripts/refresh-patch.sh kernel/patches/NAME.patch
#
# The patch is applied (offsets allowed) to pristine copies of the files
# it names, after the patches before it in the series that touch the
# same files; its header (everything before the first "--- a/") is kept.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
pristine=$build/linux-source-6.1
patch=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
name=$(basename "$patch")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -d "$pristine" ] || { echo "refresh-patch.sh: unpack the tree first" >&2; exit 1; }
files=$(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patch")
for f in $files; do
	mkdir -p "$tmp/a/$(dirname "$f")"
	[ -f "$pristine/$f" ] && cp "$pristine/$f" "$tmp/a/$f"
done
# The patches before this one that touch the same files.
for p in $(grep -v '^#' "$top/kernel/patches/series"); do
	[ "$p" = "$name" ] && break
	for f in $files; do
		if grep -q "^+++ b/$f\$" "$top/kernel/patches/$p"; then
			patch -d "$tmp/a" -p1 -s --no-backup-if-mismatch <"$top/kernel/patches/$p" >/dev/null
			break
		fi
	done
done
cp -a "$tmp/a" "$tmp/b"
patch -d "$tmp/b" -p1 -s --no-backup-if-mismatch <"$patch"
sed -n '1,/^--- a\//p' "$patch" | sed '$d' >"$tmp/new"
(cd "$tmp" && for f in $files; do
	diff -u --label "a/$f" --label "b/$f" "a/$f" "b/$f" || true
done) | sed 's/^\(@@ .* @@\).*/\1/' >>"$tmp/new"
cp "$tmp/new" "$patch"
