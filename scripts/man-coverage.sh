#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# man-coverage.sh: check that every constant of the UAPI header is
# documented, that is, appears in bold on at least one page under man/.
#
# The names are every "#define NAME" of include/uapi/linux/kevent.h,
# except the include guard and the private __KEVENT_* helpers.
# Bold text is what the page source sets in bold: every argument of .B,
# the odd arguments of .BR and .BI, the even ones of .RB and .IB, and
# the text after a \fB or \f[B] escape up to the next font change.
#
# Prints each undocumented name and exits 1 if there is any.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
header="$top/include/uapi/linux/kevent.h"

[ -r "$header" ] || { echo "man-coverage: $header not found"; exit 1; }

names=$(sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$header" |
	grep -v '^_UAPI_LINUX_KEVENT_H$' | grep -v '^__KEVENT' | sort -u)

pages=$(find "$top/man" -type f | sort)
[ -n "$pages" ] || { echo "man-coverage: no pages under man/"; exit 1; }

bold=$(mktemp)
trap 'rm -f "$bold"' EXIT

# shellcheck disable=SC2086
awk '
# Split the arguments of a macro line as roff does: blanks separate,
# double quotes group, "" inside quotes is a quote.
function split_args(s, a,    n, i, c, cur, q, have) {
	n = 0; cur = ""; q = 0; have = 0
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (q) {
			if (c == "\"") {
				if (substr(s, i + 1, 1) == "\"") { cur = cur "\""; i++ }
				else q = 0
			} else cur = cur c
		} else if (c == " " || c == "\t") {
			if (have) { a[++n] = cur; cur = ""; have = 0 }
		} else if (c == "\"" && !have) {
			q = 1; have = 1
		} else { cur = cur c; have = 1 }
	}
	if (have) a[++n] = cur
	return n
}
function emit(t) { print t }
# Text set bold by \fB / \f[B] escapes.
function escapes(s,    rest, i, seg, j) {
	rest = s
	while ((i = match(rest, /\\f(B|\[B\])/)) > 0) {
		rest = substr(rest, i + RLENGTH)
		j = match(rest, /\\f/)
		seg = j ? substr(rest, 1, j - 1) : rest
		emit(seg)
	}
}
{
	line = $0
	if (line ~ /^[.\x27](B|BR|RB|BI|IB)([ \t]|$)/) {
		mac = line; sub(/^[.\x27]/, "", mac); sub(/[ \t].*/, "", mac)
		rest = line; sub(/^[.\x27][A-Z]+[ \t]*/, "", rest)
		n = split_args(rest, arg)
		for (k = 1; k <= n; k++) {
			if (mac == "B" ||
			    ((mac == "BR" || mac == "BI") && k % 2 == 1) ||
			    ((mac == "RB" || mac == "IB") && k % 2 == 0))
				emit(arg[k])
		}
	}
	escapes(line)
}
' $pages | tr -c 'A-Za-z0-9_\n' '\n' | grep -v '^$' | sort -u >"$bold"

missing=0
for n in $names; do
	if ! grep -qx "$n" "$bold"; then
		echo "man-coverage: $n is not documented (in bold) on any page"
		missing=1
	fi
done
exit $missing
