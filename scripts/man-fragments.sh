#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# man-fragments.sh: write the code fragments of a man page as C files.
#
#   scripts/man-fragments.sh PAGE DIR
#
# A fragment is marked in the page as
#	.\" FRAGMENT BEGIN
#	.\" <C text put before the fragment>
#	.EX
#	<the fragment>
#	.EE
#	.\" <C text put after it>
#	.\" FRAGMENT END
# and goes to DIR/fragN.c, N its rank in the page, with the roff escapes
# of the text shown undone.  A fragment that a test runs has a name,
# "FRAGMENT BEGIN (NAME)", and goes to DIR/NAME.c as well, so that the
# test includes it by name and runs what the page shows, not a copy.
# man-synopsis.sh compiles every fragment on the host; the Makefile
# writes the named ones of kevent(7) for testsuite/tests/fragments.c.
set -eu
page=$1
dir=$2
mkdir -p "$dir"
rm -f "$dir"/*.c "$dir/names"
: >"$dir/names"

awk -v dir="$dir" '
	/^\.\\" FRAGMENT BEGIN/ { n++; on = 1; f = dir "/frag" n ".c"
		name = ""
		if (match($0, /\(([a-z0-9-]+)\)$/))
			name = substr($0, RSTART + 1, RLENGTH - 2)
		printf "" > f; next }
	/^\.\\" FRAGMENT END/ { on = 0; close(f)
		if (name != "")
			printf "%d %s\n", n, name > (dir "/names")
		next }
	!on { next }
	/^\.EX/ { ex = 1; next }
	/^\.EE/ { ex = 0; next }
	ex { print > f; next }
	/^\.\\" / { s = $0; sub(/^\.\\" /, "", s); print s > f; next }
	/^\.\\"$/ { print "" > f; next }
' "$page"

# Undo the roff escapes that code blocks use.
for f in "$dir"/frag*.c; do
	[ -f "$f" ] || continue
	sed -e 's/\\-/-/g' -e 's/\\&//g' \
	    -e 's/\\\[aq\]/'"'"'/g' -e 's/\\(aq/'"'"'/g' \
	    -e 's/\\\[dq\]/"/g' -e 's/\\(dq/"/g' \
	    -e 's/\\f[BIRP]//g' -e 's/\\f\[[BIRP]*\]//g' \
	    -e 's/\\\[rs\]/\\/g' -e 's/\\e/\\/g' "$f" >"$f.tmp"
	mv "$f.tmp" "$f"
done

# The named ones under their names too; a name used twice is an error.
while read -r n name; do
	if [ -f "$dir/$name.c" ]; then
		echo "man-fragments: $page: two fragments named $name" >&2
		exit 1
	fi
	cp "$dir/frag$n.c" "$dir/$name.c"
done <"$dir/names"
rm -f "$dir/names"
