#!/bin/sh
# Checks that run on the host, as TAP: the UAPI header in every language
# mode users build it in, <kevent.h> in C and C++, the ABI layout for 64
# and 32 bits, checkpatch on the series, the calls between the core's
# files, the scripts' commands against scripts/deps.sh, and the manual
# (lint, every name of the headers found by man -w, SYNOPSIS and
# fragments compiled, the SYNOPSIS as C++ too, quoted examples identical
# to examples/).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cd "$top" || exit 1
build=${BUILD:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# check NAME COMMAND...: one TAP point; the command's output is shown
# as diagnostics when it fails.
check() {
	name=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/out" 2>&1; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		sed -n '1,30s/^/# /p' "$tmp/out"
		failed=$((failed + 1))
	fi
}

printf "#include <linux/kevent.h>\n__u64 nomask = KEVENT_SIGNAL_NOMASK;\nunsigned long ioc = KEVENT_IOC_GET_ABI;\nint main(void) { return 0; }\n" >"$tmp/h.c"
header() {
	compiler=$1
	shift
	$compiler "$@" -Wall -Wextra -Werror -Iinclude/uapi -c "$tmp/h.c" \
		-o "$tmp/h.o"
}
check "header compiles alone with gcc -std=c90 -pedantic" header gcc -std=c90 -pedantic
check "header compiles alone with gcc -std=c99 -pedantic" header gcc -std=c99 -pedantic
check "header compiles alone with g++ -std=c++98 -pedantic" header "g++ -x c++" -std=c++98 -pedantic
check "header compiles alone with g++ -std=c++17" header "g++ -x c++" -std=c++17
check "header compiles alone with gcc -m32 -std=c90" header gcc -m32 -std=c90
check "header compiles alone with gcc -m32 -std=c99 -pedantic" header gcc -m32 -std=c99 -pedantic
# <kevent.h>, the wrappers: needs _GNU_SOURCE or _DEFAULT_SOURCE for
# syscall(2) in C (a strict mode without them gets the header's #error,
# not a missing O_CLOEXEC), nothing more in C++, where g++ defines
# _GNU_SOURCE.
printf "#include <kevent.h>\nint main(void) { return kevent_probe(0) ? 1 : 0; }\n" >"$tmp/k.c"
wrappers() {
	compiler=$1
	shift
	$compiler "$@" -Wall -Wextra -Werror -Iinclude -Iinclude/uapi \
		-c "$tmp/k.c" -o "$tmp/k.o"
}
strict_error() {
	! gcc -std=c99 -Iinclude -Iinclude/uapi -c "$tmp/k.c" -o "$tmp/k.o" \
		>"$tmp/strict.log" 2>&1 &&
	grep -q 'needs syscall(2): define _GNU_SOURCE or _DEFAULT_SOURCE' "$tmp/strict.log" &&
	! grep -q O_CLOEXEC "$tmp/strict.log" || { cat "$tmp/strict.log"; return 1; }
}
check "<kevent.h> compiles with gcc -std=c99 -pedantic -D_GNU_SOURCE" wrappers gcc -std=c99 -pedantic -D_GNU_SOURCE
check "<kevent.h> compiles with gcc -std=c11 -pedantic -D_DEFAULT_SOURCE" wrappers gcc -std=c11 -pedantic -D_DEFAULT_SOURCE
check "<kevent.h> compiles with gcc -std=gnu11, no macro" wrappers gcc -std=gnu11
check "<kevent.h> compiles with gcc -m32 -std=c99 -D_GNU_SOURCE" wrappers gcc -m32 -std=c99 -D_GNU_SOURCE
check "<kevent.h> under gcc -std=c99 without the macro: its #error alone" strict_error
check "<kevent.h> compiles with g++ -std=c++98 -pedantic" wrappers "g++ -x c++" -std=c++98 -pedantic
check "<kevent.h> compiles with g++ -std=c++17" wrappers "g++ -x c++" -std=c++17
check "ABI sizes and offsets pinned for 64-bit" \
	gcc -m64 -std=c11 -D_GNU_SOURCE -Wall -Werror -Iinclude -Iinclude/uapi -fsyntax-only testsuite/host/abi.c
check "ABI sizes and offsets pinned for 32-bit" \
	gcc -m32 -std=c11 -D_GNU_SOURCE -Wall -Werror -Iinclude -Iinclude/uapi -fsyntax-only testsuite/host/abi.c
check "KEVENT_POLL_* equal the POLL* values" \
	gcc -std=c11 -Wall -Werror -Iinclude/uapi -fsyntax-only testsuite/host/poll_values.c

checkpatch() {
	cp=$build/linux/scripts/checkpatch.pl
	[ -x "$cp" ] || { echo "no $cp: assemble the tree first"; return 1; }
	# ENOSYS for a type without a source is take26's ABI, which
	# the series keeps; doc/design.md says why.
	opts="--strict --no-tree --terse --show-types --ignore ENOSYS"
	status=0
	for f in $(cd kernel/tree && find . -name '*.[ch]' -o -name Kconfig -o -name Makefile | sort); do
		(cd kernel/tree && "$cp" $opts -f "${f#./}") || status=1
	done
	"$cp" $opts -f include/uapi/linux/kevent.h || status=1
	# Outside a git work tree: in one, checkpatch reads a committed
	# .patch file as a source file instead of as a patch.
	for p in kernel/patches/*.patch; do
		GIT_DIR=/nonexistent "$cp" $opts "$p" || status=1
	done
	return $status
}
check "checkpatch --strict reports nothing on the series" checkpatch
# make mutants runs on demand, not in make check: a mutant left behind
# by a change of its lines would only show there, as an error.
mutants_apply() {
	[ -d "$build/linux/kernel/kevent" ] ||
		{ echo "no $build/linux: assemble the tree first"; return 1; }
	status=0
	for m in testsuite/mutants/*.patch; do
		patch -d "$build/linux" -p1 -s -F0 --dry-run <"$m" ||
			{ echo "$m does not apply"; status=1; }
	done
	return $status
}
check "every mutant of testsuite/mutants applies to the assembled tree" \
	mutants_apply
# Read from the objects of the kernel make check built, so that a call
# the source hides in a macro counts too.
check "the files of kernel/kevent call each other in no circle" \
	scripts/core-calls.py "$(kernel_obj "$build")/kernel/kevent"

# A tool that a script calls and deps.sh does not install works here,
# where it was installed by hand, and fails on a fresh machine.
check "every command the scripts run is in a package of scripts/deps.sh" \
	scripts/deps-check.py

check "groff -ww and mandoc -Tlint report nothing on any page" scripts/man-lint.sh
check "every name of both headers has a page: MANPATH=man man -I -w NAME" \
	scripts/man-coverage.sh
check "every name of both headers has a page after make install" \
	scripts/man-coverage.sh --installed
check "MANPATH=man man -w kevent_wait finds the page" \
	env MANPATH="$top/man" man -w kevent_wait
check "MANPATH=man man -w 2const KEVENT_REQ_ET finds the page" \
	env MANPATH="$top/man" man -w 2const KEVENT_REQ_ET
check "MANPATH=man man -w 2type ukevent finds the page" \
	env MANPATH="$top/man" man -w 2type ukevent
check "MANPATH=man man -w 3 kevent_probe finds the page" \
	env MANPATH="$top/man" man -w 3 kevent_probe
check "every SYNOPSIS, fragment and example compiles with the installed headers" \
	scripts/man-synopsis.sh
check "every SYNOPSIS compiles as C++ with g++ -std=c++11" \
	scripts/man-synopsis.sh --c++
check "every example a page quotes is identical to examples/" \
	scripts/man-examples.sh check
check "the HTML manual in doc/html is built from the current pages" \
	scripts/man-html.sh check

# The cheap targets of README, each in a clone of HEAD of its own, as a
# new user runs them: nothing built before (make peers once needed a
# kernel that nothing built); what builds a kernel is make check's.
fresh_clone() {
	rm -rf "$tmp/clone" "$tmp/dest"
	git clone -q "$top" "$tmp/clone"
}
target_install() {
	fresh_clone &&
	make -s -C "$tmp/clone" install DESTDIR="$tmp/dest" &&
	[ -f "$tmp/dest/usr/local/include/linux/kevent.h" ] &&
	[ -f "$tmp/dest/usr/local/share/man/man7/kevent.7" ] &&
	make -s -C "$tmp/clone" uninstall DESTDIR="$tmp/dest" &&
	[ -z "$(find "$tmp/dest" -type f)" ]
}
target_html() {
	fresh_clone &&
	make -s -C "$tmp/clone" html >/dev/null &&
	git -C "$tmp/clone" status --porcelain -- doc/html >"$tmp/html" &&
	[ ! -s "$tmp/html" ] || { cat "$tmp/html"; return 1; }
}
check "make install and make uninstall work in a fresh clone" target_install
check "make html works in a fresh clone and rebuilds doc/html as committed" target_html

echo "1..$n"
[ "$failed" -eq 0 ]
