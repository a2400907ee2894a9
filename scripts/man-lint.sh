#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# man-lint.sh: lint every page under man/.
#
#   groff -t -man -ww -z   (once for the default device, once for -Tutf8,
#                           the device man(1) uses on a terminal; -t runs
#                           tbl(1) for the tables of kevent(7))
#   mandoc -Tlint -W warning
#   a few checks of man-pages style (see man-pages(7)): the header lines,
#   .TH naming the file, no .PP, no blank lines outside .EX/.EE, no
#   trailing blanks, .so targets that exist, the sections in the order
#   of man-pages(7), ERRORS in alphabetical order (by the first tag of
#   each entry, within each list), SEE ALSO sorted by section and then
#   by name, no .TP tag that joins several names with commas (use .TQ),
#   and every cross-reference NAME(SECTION) found by man -w, in man/ or
#   on the system.
#
# Prints every message and exits 1 if there was any.
#
# Usage: scripts/man-lint.sh [page...]   (default: every page)

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top/man" || exit 1

if [ $# -gt 0 ]; then
	pages=$(for p in "$@"; do printf '%s\n' "${p#man/}"; done)
else
	pages=$(find man* -type f | sort)
fi

for tool in groff mandoc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "man-lint: $tool is not installed (apt-get install -y $tool)"
		exit 1
	fi
done

out=$(mktemp)
known=$(mktemp)
trap 'rm -f "$out" "$known"' EXIT

# style PAGE: section order, ERRORS order, SEE ALSO order, .TQ.
style() {
	awk -v p="$1" '
	BEGIN {
		n = split("NAME LIBRARY SYNOPSIS CONFIGURATION DESCRIPTION " \
			"OPTIONS EXIT_STATUS RETURN_VALUE ERRORS ENVIRONMENT " \
			"FILES ATTRIBUTES VERSIONS STANDARDS HISTORY NOTES " \
			"CAVEATS BUGS EXAMPLES AUTHORS REPORTING_BUGS " \
			"COPYRIGHT SEE_ALSO", order, " ")
		for (i = 1; i <= n; i++)
			rank[order[i]] = i
		last = 0
	}
	function flush_errors() { prev_err = "" }
	/^\.SH / {
		name = substr($0, 5); gsub(/"/, "", name)
		key = name; gsub(/ /, "_", key)
		if (!(key in rank))
			printf "%s:%d: unknown section %s\n", p, NR, name
		else if (rank[key] < last)
			printf "%s:%d: section %s out of the order of man-pages(7)\n", p, NR, name
		else
			last = rank[key]
		sect = name
		flush_errors()
		next
	}
	/^\.SS / { flush_errors(); next }
	sect == "ERRORS" && /^\.TP/ { want_tag = 1; next }
	sect == "ERRORS" && want_tag && /^\.B / {
		want_tag = 0
		e = $2
		if (prev_err != "" && e < prev_err)
			printf "%s:%d: ERRORS: %s after %s (keep them in alphabetical order)\n", p, NR, e, prev_err
		prev_err = e
		next
	}
	{ want_tag_prev = want_tag }
	/^\.TP/ { tp = 1; next }
	tp && /^\.(B|BR|I|IR|RB|RI) .*", "/ {
		printf "%s:%d: several names in one .TP tag: use .TQ\n", p, NR
	}
	{ tp = 0 }
	sect == "SEE ALSO" && /^\.BR / {
		nm = $2; sc = $3; gsub(/[(),]/, "", sc)
		k = sc " " tolower(nm)
		if (prev_see != "" && k < prev_see)
			printf "%s:%d: SEE ALSO: %s(%s) out of order (sort by section, then name)\n", p, NR, nm, sc
		prev_see = k
	}
	' "$1"
}

# xrefs PAGE: every .BR NAME (SECTION) names a page that man -w finds.
xrefs() {
	sed -n 's/^\.BR \([A-Za-z_][A-Za-z0-9_.]*\) (\([0-9][a-z]*\)).*/\1 \2/p' "$1" |
	sort -u | while read -r name sec; do
		grep -qx "$name $sec" "$known" && continue
		if [ -f "$top/man/man$sec/$name.$sec" ] ||
		   man -w "$sec" "$name" >/dev/null 2>&1; then
			echo "$name $sec" >>"$known"
		else
			echo "$1: $name($sec) is neither in man/ nor found by man -w"
		fi
	done
}

for page in $pages; do
	[ -f "$page" ] || { echo "$page: no such page" >>"$out"; continue; }

	# An alias page is one line, ".so manN/target.N", a regular file as
	# the man-pages project writes them (not a symlink).
	if head -n 1 "$page" | grep -q '^\.so '; then
		target=$(sed -n '1s/^\.so //p' "$page")
		[ "$(wc -l <"$page")" -eq 1 ] ||
			echo "$page: an alias page must hold only its .so line" >>"$out"
		[ -f "$target" ] ||
			echo "$page: .so target $target does not exist" >>"$out"
	else
		sed -n '1{/^\.\\" SPDX-License-Identifier: Linux-man-pages-copyleft$/!q1}' "$page" ||
		sed -n '1{/^'"'"'\\" t$/!q1};2{/^\.\\" SPDX-License-Identifier: Linux-man-pages-copyleft$/!q1}' "$page" ||
			echo "$page: the first line must be the SPDX line (after '\\\" t if tbl is used)" >>"$out"
		name=${page#*/}
		sect=${name##*.}
		name=${name%.*}
		grep -q "^\.TH $name $sect 2026-12-02 \"kevent for Linux 6.1\"\$" "$page" ||
			echo "$page: .TH must read: .TH $name $sect 2026-12-02 \"kevent for Linux 6.1\"" >>"$out"
		grep -q '^\.SH SEE ALSO$' "$page" ||
			echo "$page: no SEE ALSO section" >>"$out"
		if grep -q '^\.TS' "$page" &&
		   ! head -n 1 "$page" | grep -q "^'\\\\\" t\$"; then
			echo "$page: uses tbl but lacks the '\\\" t first line" >>"$out"
		fi
		awk -v p="$page" '
			/^\.EX/ { ex = 1 }
			/^\.EE/ { ex = 0 }
			/^\.PP([ \t]|$)/ { printf "%s:%d: use .P, not .PP\n", p, NR }
			/^$/ && !ex { printf "%s:%d: blank line (use .P)\n", p, NR }
			/[ \t]$/ { printf "%s:%d: trailing white space\n", p, NR }
		' "$page" >>"$out"
		style "$page" >>"$out"
		xrefs "$page" >>"$out"
	fi

	groff -t -man -ww -z "$page" >>"$out" 2>&1
	groff -Tutf8 -t -man -ww -z "$page" >>"$out" 2>&1

	# mandoc reports every .so request at WARNING level (".so is fragile,
	# better use ln(1)").  The alias pages are .so files by design, as in
	# the man-pages project, so that message cannot be avoided on them;
	# it is the only one dropped, and only on alias pages (whose target
	# is checked above).
	if head -n 1 "$page" | grep -q '^\.so '; then
		mandoc -Tlint -W warning "$page" 2>&1 |
			grep -v 'WARNING: \.so is fragile, better use ln(1): so ' >>"$out"
	else
		mandoc -Tlint -W warning "$page" >>"$out" 2>&1
	fi
done

if [ -s "$out" ]; then
	cat "$out"
	exit 1
fi
exit 0
