#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# man-synopsis.sh: compile what the manual tells a reader to write.
#
# The headers are installed first, with scripts/install.sh, into a
# scratch DESTDIR, and every compilation uses only them and the system's
# headers (as a program would on Debian 12 after "make install"):
#
#   - the SYNOPSIS of every page, as man(1) shows it (rendered by
#     mandoc); #include lines go first, everything else into the body
#     of a function, so that the declarations and #define lines of a
#     SYNOPSIS are checked against the headers: a prototype that does
#     not match, or a #define whose value differs from the header's,
#     fails.  A page whose SYNOPSIS uses placeholders (the italic words
#     of a template) declares them in a comment line right after
#     .SH SYNOPSIS:
#	.\" Placeholders: unsigned int fd; __u64 data;
#
#   - every code fragment marked in a page as
#	.\" FRAGMENT BEGIN
#	.\" <C text put before the fragment>
#	.EX
#	<the fragment>
#	.EE
#	.\" <C text put after it>
#	.\" FRAGMENT END
#     with the roff escapes of the fragment undone
#     (scripts/man-fragments.sh writes them out);
#
#   - every program of examples/, which the pages quote.
#
# Each is compiled with gcc -std=c11 -Wall -Wextra -Werror (-Wno-unused
# for SYNOPSIS and fragments) for 64-bit and for 32-bit x86, with
# -D_GNU_SOURCE unless the file defines it: a SYNOPSIS that says
# "#define _GNU_SOURCE" must then compile in strict C11 with that line
# alone, as a reader's file would.
#
# With --c++, only the SYNOPSIS of each page is compiled, as C++ with
# g++ -std=c++11: the templates and the declarations are what a C++
# program copies, while the fragments and the examples are C.  Two
# things of C stay allowed there: "restrict" in a prototype (as every
# man page writes it; g++ spells it __restrict), and "= { 0 }", the C
# idiom for a zeroed struct, which C++ accepts and which g++ -Wextra
# flags only as a short initializer.  The SYNOPSIS line
# "#define _GNU_SOURCE" is left out there: g++ defines the macro itself,
# and says "redefined" to a program that defines it again.
#
# Usage: scripts/man-synopsis.sh [--c++] [page...]   (default: every page)
# Prints what failed, with the compiler's messages, and exits 1.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
lang=c
if [ "${1:-}" = --c++ ]; then
	lang=c++
	shift
fi

for tool in mandoc gcc g++ col; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "man-synopsis: $tool is not installed"
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$top/scripts/install.sh" install "$tmp/dest" /usr/share/man /usr/include \
	>"$tmp/install.log" 2>&1 || {
	echo "man-synopsis: scripts/install.sh failed:"
	cat "$tmp/install.log"
	exit 1
}
inc=$tmp/dest/usr/include

if [ $# -gt 0 ]; then
	pages=$(for p in "$@"; do printf '%s\n' "$top/man/${p#man/}"; done)
else
	pages=$(find "$top/man" -type f | sort)
fi

status=0

# compile NAME FILE [extra flags]: both ABIs.
compile() {
	name=$1
	file=$2
	shift 2
	if [ "$lang" = c++ ]; then
		set -- -x c++ -std=c++11 -Wno-missing-field-initializers \
			-Drestrict=__restrict "$@"
		cc=g++
	else
		set -- -std=c11 "$@"
		cc=gcc
	fi
	gnu=-D_GNU_SOURCE
	grep -q '^#define _GNU_SOURCE' "$file" && gnu=
	for abi in -m64 -m32; do
		if ! $cc $abi $gnu -Wall -Wextra -Werror "$@" \
			-I"$inc" -fsyntax-only "$file" >"$tmp/cc.log" 2>&1; then
			echo "man-synopsis: $name does not compile ($abi):"
			sed 's/^/    /' "$tmp/cc.log" | head -n 40
			case $file in
			"$tmp"/*)
				echo "    --- the file compiled:"
				cat -n "$file" | sed 's/^/    /'
				;;
			esac
			status=1
			return
		fi
	done
}

for page in $pages; do
	rel=${page#"$top"/}
	head -n 1 "$page" | grep -q '^\.so ' && continue

	# The SYNOPSIS as rendered.
	mandoc -Tascii -Owidth=300 "$page" 2>/dev/null | col -bx |
	awk '
		/^SYNOPSIS$/ { on = 1; next }
		on && /^[^ ]/ { exit }
		on { sub(/^       /, ""); print }
	' >"$tmp/synopsis"
	if [ ! -s "$tmp/synopsis" ]; then
		echo "man-synopsis: $rel has no SYNOPSIS"
		status=1
		continue
	fi
	placeholders=$(sed -n '/^\.SH SYNOPSIS/{n;s/^\.\\" Placeholders: //p;}' "$page")
	{
		echo "/* $rel: SYNOPSIS */"
		[ "$lang" = c ] && grep '^#define _GNU_SOURCE' "$tmp/synopsis"
		grep '^#include' "$tmp/synopsis"
		echo "void synopsis(void);"
		echo "void synopsis(void)"
		echo "{"
		[ -n "$placeholders" ] && echo "    $placeholders"
		echo "    {"
		grep -v '^#include\|^#define _GNU_SOURCE' "$tmp/synopsis"
		echo "    }"
		echo "}"
	} >"$tmp/synopsis.c"
	compile "$rel: SYNOPSIS" "$tmp/synopsis.c" -Wno-unused

	# The fragments.
	[ "$lang" = c ] || continue
	grep -q '^\.\\" FRAGMENT BEGIN' "$page" || continue
	"$top/scripts/man-fragments.sh" "$page" "$tmp/frags"
	for frag in "$tmp"/frags/frag*.c; do
		[ -f "$frag" ] || continue
		{
			echo "/* $rel: ${frag##*/} */"
			cat "$frag"
		} >"$tmp/fragment.c"
		compile "$rel: fragment ${frag##*/frag}" "$tmp/fragment.c" -Wno-unused
	done
done

# The examples, which the pages quote.
if [ $# -eq 0 ] && [ "$lang" = c ]; then
	for ex in "$top"/examples/*.c; do
		compile "examples/${ex##*/}" "$ex" -pthread
	done
fi

exit $status
