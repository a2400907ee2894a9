#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# man-coverage.sh: check that every name the headers give a program can
# be looked up in the manual by that exact name, as a reader would:
#
#	man -I -w NAME
#
# (-I: case-sensitive, so that KEVENT_SOCKET is not found through
# kevent_socket(7) by man-db's case-insensitive fallback).
#
# The names are those of include/uapi/linux/kevent.h and include/kevent.h:
# every "#define NAME" except the include guards and the private
# __KEVENT_* helpers, every "struct NAME {", and every function of
# <kevent.h>.  A name is found through its own page or through an alias
# page (a one-line .so) named after it.
#
# Usage: scripts/man-coverage.sh [MANDIR | --installed]
#	MANDIR is the manual to search, man/ of the checkout by default;
#	give the installed one ($DESTDIR$PREFIX/share/man) to check an
#	installation.  --installed installs the manual with
#	scripts/install.sh into a scratch DESTDIR and searches that.
#
# Prints each name that man(1) cannot find and exits 1 if there is any.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mandir=${1:-$top/man}
if [ "$mandir" = --installed ]; then
	dest=$(mktemp -d)
	trap 'rm -rf "$dest"' EXIT
	"$top/scripts/install.sh" install "$dest" /usr/share/man /usr/include ||
		{ echo "man-coverage: scripts/install.sh failed"; exit 1; }
	mandir=$dest/usr/share/man
fi
headers="$top/include/uapi/linux/kevent.h $top/include/kevent.h"

command -v man >/dev/null 2>&1 || {
	echo "man-coverage: man(1) is not installed (apt-get install -y man-db)"
	exit 1
}
for h in $headers; do
	[ -r "$h" ] || { echo "man-coverage: $h not found"; exit 1; }
done
[ -d "$mandir" ] || { echo "man-coverage: no manual in $mandir"; exit 1; }

# shellcheck disable=SC2086
names=$( {
	sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' $headers
	sed -n 's/^[^*]*struct[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*{.*/\1/p' $headers
	sed -n 's/^static inline [a-z ]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' "$top/include/kevent.h"
} | grep -v '_H$' | grep -v '^__KEVENT' | sort -u)

[ -n "$names" ] || { echo "man-coverage: no names found in the headers"; exit 1; }

missing=0
for n in $names; do
	if ! MANPATH=$mandir man -I -w "$n" >/dev/null 2>&1; then
		echo "man-coverage: man -w $n finds no page in $mandir"
		missing=1
	fi
done
exit $missing
