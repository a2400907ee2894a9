#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# man-examples.sh: keep the example programs quoted in the man pages
# identical to examples/.
#
# A page quotes examples/X between the lines
#	.\" SRC BEGIN (X)
#	.\" SRC END
# as the man-pages project does.  Between them stands
#	.EX
#	<examples/X escaped for roff>
#	.EE
# where escaping turns each backslash into \e and puts \& before a
# leading ' or . of a line.
#
# Usage:
#	scripts/man-examples.sh sync	rewrite the quoted text of every page
#					from examples/
#	scripts/man-examples.sh check	exit 1, naming the page, if a quote
#					differs from examples/X or if
#					examples/X does not exist
#
# check also checks the form of every examples/*.c, quoted or not: the
# first line is "/* SPDX-License-Identifier: MIT */" (the programs are
# meant to be copied), the opening comment says what the program
# illustrates ("Illustrates PAGE(N)") and how to build it ("Build"), and
# no line has a tab or more than 72 columns, so that a quoted program
# fits 80 columns once man(1) has indented it.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
case $mode in
sync|check) ;;
*)	echo "usage: $0 sync|check" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# escape FILE: the roff text that quotes FILE, .EX/.EE included.
escape() {
	printf '.EX\n'
	sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" "$1"
	# A last line without a newline still ends the quote.
	[ -z "$(tail -c 1 "$1")" ] || printf '\n'
	printf '.EE\n'
}

status=0
if [ "$mode" = check ]; then
	for ex in "$top"/examples/*.c; do
		rel=${ex#"$top"/}
		[ "$(head -n 1 "$ex")" = "/* SPDX-License-Identifier: MIT */" ] ||
			{ echo "$rel: the first line must be /* SPDX-License-Identifier: MIT */"; status=1; }
		sed -n '1,/\*\//p' "$ex" | grep -q 'Illustrates [a-z_]*([0-9]' ||
			{ echo "$rel: the opening comment must say which page it illustrates"; status=1; }
		sed -n '1,/\*\//p' "$ex" | grep -q 'Build' ||
			{ echo "$rel: the opening comment must say how to build it"; status=1; }
		awk -v f="$rel" '
			/\t/ { printf "%s:%d: tab (indent with 4 spaces)\n", f, NR; bad = 1 }
			length > 72 { printf "%s:%d: %d columns (72 at most)\n", f, NR, length; bad = 1 }
			END { exit bad }
		' "$ex" || status=1
	done
fi
for page in $(find "$top/man" -type f | sort); do
	grep -q '^\.\\" SRC BEGIN (' "$page" || continue
	rel=${page#"$top"/}
	out="$tmp/page"
	: >"$out"
	inside=
	lineno=0
	# Read the page line by line; copy it, replacing each quote.
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		case $line in
		'.\" SRC BEGIN ('*')')
			if [ -n "$inside" ]; then
				echo "$rel:$lineno: SRC BEGIN inside SRC BEGIN ($inside)"
				status=1
			fi
			inside=${line#'.\" SRC BEGIN ('}
			inside=${inside%')'}
			printf '%s\n' "$line" >>"$out"
			: >"$tmp/quoted"
			;;
		'.\" SRC END')
			if [ -z "$inside" ]; then
				echo "$rel:$lineno: SRC END without SRC BEGIN"
				status=1
				printf '%s\n' "$line" >>"$out"
				continue
			fi
			src="$top/examples/$inside"
			if [ ! -f "$src" ]; then
				echo "$rel: examples/$inside does not exist"
				status=1
				cat "$tmp/quoted" >>"$out"
			else
				escape "$src" >"$tmp/want"
				if ! cmp -s "$tmp/quoted" "$tmp/want"; then
					if [ "$mode" = check ]; then
						echo "$rel: the quote of examples/$inside differs from the file (run $0 sync)"
						status=1
					fi
				fi
				if [ "$mode" = sync ]; then
					cat "$tmp/want" >>"$out"
				else
					cat "$tmp/quoted" >>"$out"
				fi
			fi
			printf '%s\n' "$line" >>"$out"
			inside=
			;;
		*)
			if [ -n "$inside" ]; then
				printf '%s\n' "$line" >>"$tmp/quoted"
			else
				printf '%s\n' "$line" >>"$out"
			fi
			;;
		esac
	done <"$page"
	if [ -n "$inside" ]; then
		echo "$rel: SRC BEGIN ($inside) without SRC END"
		status=1
		continue
	fi
	if [ "$mode" = sync ] && ! cmp -s "$out" "$page"; then
		cat "$out" >"$page"
		echo "$rel: updated"
	fi
done
exit $status
