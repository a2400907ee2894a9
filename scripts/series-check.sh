#!/bin/sh
# The checks of the series as git format-patch output (make patchset),
# one per command, for testsuite/host-checks.sh:
#
#   scripts/series-check.sh identical   the last commit is the tree that
#                                       scripts/kernel.sh assembles
#   scripts/series-check.sh am          build/patchset/ applies with git am
#                                       to the pristine tree, to the same tree
#   scripts/series-check.sh checkpatch  checkpatch.pl --strict on each patch
#   scripts/series-check.sh kernel-doc  scripts/kernel-doc -v -none on every
#                                       kevent file; kernel-doc on every
#                                       function other files call
#   scripts/series-check.sh rst         Documentation/userspace-api/kevent.rst
#                                       with docutils, its kernel-doc expanded
#   scripts/series-check.sh sparse      sparse (C=1) and W=1 on kernel/kevent/
#                                       and the files the hooks touch
#
#   scripts/series-check.sh tap         make patchset, the selftests
#                                       for the guest, then each check
#                                       above as a TAP point, for
#                                       make check (build/series.tap)
#
# Each prints what it finds and exits nonzero if anything is found.
# They work on build/patchset-git and build/patchset, which make
# patchset writes; sparse builds into build/obj-check, configured from
# build/obj/.config (the lead's objects are never written).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
pristine=$build/linux-source-6.1
repo=$build/patchset-git
out=$build/patchset
objc=$build/obj-check
cpcache=$build/patchset-checkpatch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# checkpatch's --ignore, argued in the cover letter (kernel/patchset/
# cover.txt): ENOSYS for a type without a source is take26's ABI;
# FILE_PATH_CHANGES asks whether MAINTAINERS needs updating, which the
# last patch does for every file the series adds.
CHECKPATCH_IGNORE=ENOSYS,FILE_PATH_CHANGES
# And for the selftests, the testsuite's programs unchanged: types that
# concern kernel code (no msleep(), BIT(), kstrto*() or kernel string
# rules in user space; volatile sig_atomic_t is what a signal handler
# sets), and the testsuite's own layout, which differs from the
# kernel's in these.
SELFTEST_IGNORE=SPLIT_STRING,MSLEEP,ARRAY_SIZE,BIT_MACRO,VOLATILE,SSCANF_TO_KSTRTO,EMBEDDED_FUNCTION_NAME,TYPECAST_INT_CONSTANT,LONG_LINE_STRING,LONG_LINE_COMMENT,PARENTHESIS_ALIGNMENT,COMPARISON_TO_NULL,MULTIPLE_ASSIGNMENTS,LINE_SPACING,LEADING_SPACE,MACRO_ARG_REUSE,ASSIGN_IN_IF

# git am commits, and a fresh machine has no identity for git: a fixed
# one (am compares the trees, not the commits).
git_() {
	git -C "$repo" -c core.autocrlf=false -c advice.detachedHead=false \
		-c user.name="kevent series check" \
		-c user.email="series-check@example.invalid" "$@"
}

need_series() {
	[ -d "$repo/.git" ] && [ -f "$out/0001-"*.patch ] 2>/dev/null || true
	ls "$out"/0001-*.patch >/dev/null 2>&1 ||
		{ echo "no $out: run make patchset"; exit 1; }
}

# The tree of the series as scripts/kernel.sh stages it.
stage() {
	st=$1
	for p in $(grep -v '^#' "$top/kernel/patches/series"); do
		sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$top/kernel/patches/$p"
	done | sort -u | while read -r f; do
		mkdir -p "$st/$(dirname "$f")"
		[ -f "$pristine/$f" ] && cp -p "$pristine/$f" "$st/$f"
		true
	done
	for p in $(grep -v '^#' "$top/kernel/patches/series"); do
		patch -d "$st" -p1 -s --no-backup-if-mismatch -F0 \
			<"$top/kernel/patches/$p" >/dev/null
	done
	(cd "$top/kernel/tree" && find . -type f) | while read -r f; do
		mkdir -p "$st/$(dirname "$f")"
		cp "$top/kernel/tree/$f" "$st/$f"
	done
	mkdir -p "$st/include/uapi/linux"
	cp "$top/include/uapi/linux/kevent.h" "$st/include/uapi/linux/"
}

identical() {
	need_series
	stage "$tmp/stage"
	# The selftests' sources that make patchset generates from testsuite/.
	python3 "$top/scripts/patchset.py" selftest-files \
		"$tmp/stage/tools/testing/selftests/kevent"
	(cd "$tmp/stage" && find . -type f | sed 's|^\./||' | sort) >"$tmp/staged"
	git_ diff --name-only pristine kevent | sort >"$tmp/series"
	status=0
	if ! cmp -s "$tmp/staged" "$tmp/series"; then
		echo "files of kernel.sh's tree (<) and of the series (>) differ:"
		diff "$tmp/staged" "$tmp/series" || true
		status=1
	fi
	while read -r f; do
		git_ show "kevent:$f" >"$tmp/file" 2>/dev/null || continue
		cmp -s "$tmp/file" "$tmp/stage/$f" ||
			{ echo "$f differs from kernel.sh's"; status=1; }
	done <"$tmp/staged"
	return $status
}

am() {
	need_series
	git_ checkout -q -f -B am-check pristine
	status=0
	if ! git_ am -q --whitespace=error-all "$out"/0[0-9][0-9][1-9]-*.patch \
		"$out"/0[0-9][1-9]0-*.patch >"$tmp/am" 2>&1; then
		cat "$tmp/am"
		git_ am --abort >/dev/null 2>&1 || true
		status=1
	elif [ "$(git_ rev-parse 'am-check^{tree}')" != "$(git_ rev-parse 'kevent^{tree}')" ]; then
		echo "git am of build/patchset gives another tree than branch kevent"
		status=1
	else
		echo "git am: $(git_ rev-list --count pristine..am-check) patches applied to $(git_ log -1 --format=%s pristine)"
	fi
	git_ checkout -q -f kevent
	return $status
}

checkpatch() {
	need_series
	status=0
	for p in "$out"/0*.patch; do
		ignore=$CHECKPATCH_IGNORE
		case "$p" in
		*/0000-cover-letter.patch) continue ;;
		*-selftests-*) ignore=$ignore,$SELFTEST_IGNORE ;;
		esac
		# A patch found clean before is not checked again: the
		# patches of an unchanged series are the same bytes (fixed
		# dates) but for the Message-Ids of the thread, and the
		# selftests patch alone takes 40 s.
		key=$({ grep -v -E '^(Message-Id|In-Reply-To|References): ' "$p"
			cat "$repo/scripts/checkpatch.pl"; echo "$ignore"; } |
			sha256sum | cut -c1-64)
		[ -f "$cpcache/$key" ] && continue
		# From the tree (checkpatch then knows MAINTAINERS and the
		# kernel's spelling lists); build/patchset is outside it.
		# Debian's python3 first: spdxcheck.py needs python3-ply.
		(cd "$repo" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl \
			--strict --terse --show-types --ignore "$ignore" "$p") \
			>"$tmp/cp" 2>&1 || status=1
		# --terse prints nothing at all for a clean patch.
		if grep -q . "$tmp/cp"; then
			cat "$tmp/cp"
			status=1
		elif [ $status = 0 ]; then
			mkdir -p "$cpcache"
			: >"$cpcache/$key"
		fi
	done
	[ $status = 0 ] && echo "checkpatch --strict: $(ls "$out"/0*.patch | grep -vc 0000-cover) patches, nothing to report"
	return $status
}

kevent_files() {
	(cd "$repo" && git ls-files kernel/kevent include/linux/kevent.h \
		include/linux/kevent_*.h include/uapi/linux/kevent.h)
}

kernel_doc() {
	need_series
	status=0
	(cd "$repo" && ./scripts/kernel-doc -v -none $(kevent_files | grep '\.[ch]$')) \
		>"$tmp/kd" 2>&1 || status=1
	if grep -v ': info: ' "$tmp/kd" | grep -q .; then
		grep -v ': info: ' "$tmp/kd"
		status=1
	fi
	python3 "$top/testsuite/host/kernel_doc.py" "$repo/scripts/kernel-doc" \
		"$repo" || status=1
	return $status
}

rst() {
	need_series
	/usr/bin/python3 "$top/testsuite/host/rst_check.py" "$repo" \
		"$repo/Documentation/userspace-api/kevent.rst"
}

# The objects that sparse and W=1 look at: kernel/kevent/ and every C
# file a hook patch touches that the config builds.
sparse() {
	need_series
	[ -f "$build/obj/.config" ] || { echo "no $build/obj/.config: build the kernel first"; return 1; }
	command -v sparse >/dev/null || { echo "sparse is not installed (scripts/deps.sh)"; return 1; }
	export CCACHE_DIR=${CCACHE_DIR:-$build/ccache}
	export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$top}
	mkdir -p "$objc"
	if ! cmp -s "$build/obj/.config" "$objc/.kevent-config-src"; then
		cp "$build/obj/.config" "$objc/.config"
		cp "$build/obj/.config" "$objc/.kevent-config-src"
		make -s -C "$repo" O="$objc" ARCH=x86_64 olddefconfig >"$tmp/log" 2>&1 ||
			{ cat "$tmp/log"; return 1; }
	fi
	objs=
	for f in $(git_ diff --name-only pristine kevent -- '*.c'); do
		o=${f%.c}.o
		case "$f" in
		tools/*) continue ;;
		kernel/kevent/*)
			# Only what the config builds (kernel/kevent/Makefile).
			;;
		esac
		objs="$objs $o"
	done
	# Rebuild them: C=1 checks, and W=1 warns, only what is compiled.
	for o in $objs; do rm -f "$objc/$o"; done
	rm -rf "$objc/kernel/kevent"
	make -C "$repo" O="$objc" ARCH=x86_64 CC="ccache gcc" C=1 W=1 \
		-j"${JOBS:-2}" -k kernel/kevent/ \
		$(echo "$objs" | tr ' ' '\n' | grep -v '^kernel/kevent/') \
		>"$tmp/log" 2>&1 || { tail -n 30 "$tmp/log"; return 1; }
	cp "$tmp/log" "$objc/check.log"
	# The lines the series adds outside kernel/kevent/, per file.
	git_ diff -U0 pristine kevent >"$tmp/diff"
	python3 - "$tmp/diff" "$tmp/log" "$repo" <<'EOF'
import os, re, sys
diff, log, repo = sys.argv[1:4]
added = {}
path = None
for line in open(diff, encoding='utf-8', errors='replace'):
    m = re.match(r'^\+\+\+ b/(.*)', line)
    if m:
        path = m.group(1)
        continue
    m = re.match(r'^@@ -\S+ \+(\d+)(?:,(\d+))? @@', line)
    if m and path:
        start, count = int(m.group(1)), int(m.group(2) or 1)
        added.setdefault(path, set()).update(range(start, start + count))
ours = re.compile(r'^(kernel/kevent/|include/linux/kevent|include/uapi/linux/kevent\.h)')
found = []
for line in open(log, encoding='utf-8', errors='replace'):
    m = re.match(r'^(\S+?):(\d+):(?:\d+:)? (warning|error): (.*)', line)
    if not m:
        continue
    f = m.group(1)
    for prefix in (os.path.realpath(repo) + '/', repo + '/', '../patchset-git/'):
        if f.startswith(prefix):
            f = f[len(prefix):]
    f = os.path.normpath(f)
    if ours.match(f) or int(m.group(2)) in added.get(f, ()):
        found.append('%s:%s: %s: %s' % (f, m.group(2), m.group(3), m.group(4)))
for l in sorted(set(found)):
    print(l)
n = len(open(log, encoding='utf-8', errors='replace').read().split(' CHECK ')) - 1
print('sparse and W=1: %d files checked, %d reports on the series' % (n, len(set(found))))
sys.exit(1 if found else 0)
EOF
}

# check NAME COMMAND...: one TAP point, as testsuite/host-checks.sh
# prints them; the output of a failed command follows as diagnostics.
n=0
failed=0
check() {
	name=$1
	shift
	n=$((n + 1))
	t0=$(date +%s)
	if ("$@") >"$tmp/out" 2>&1; then
		echo "ok $n - $name"
		echo "# $(($(date +%s) - t0)) s"
	else
		echo "not ok $n - $name"
		sed -n '1,40s/^/# /p' "$tmp/out"
		failed=$((failed + 1))
	fi
}

tap() {
	check "make patchset writes the series (scripts/patchset.sh)" \
		"$top/scripts/patchset.sh" all
	# For the guest (testsuite/tests.list runs them).
	check "tools/testing/selftests/kevent builds and installs (scripts/selftests-build.sh)" \
		"$top/scripts/selftests-build.sh" "$build/guest/bin"
	# The series is the same for every kernel variant: make check
	# VARIANT=debug checks it no second time.
	if [ -n "${VARIANT:-}" ]; then
		echo "1..$n"
		[ "$failed" -eq 0 ]
		return
	fi
	check "the series' last commit is the tree kernel.sh builds" identical
	check "the series applies with git am to the pristine tree" am
	check "checkpatch --strict reports nothing on any patch" checkpatch
	check "scripts/kernel-doc -v -none is clean on every kevent file" \
		kernel_doc
	check "userspace-api/kevent.rst builds with docutils, kernel-doc expanded" \
		rst
	check "sparse (C=1) and W=1 report nothing for the kevent files" \
		sparse
	echo "1..$n"
	[ "$failed" -eq 0 ]
}

case "${1:-}" in
tap) tap ;;
identical) identical ;;
am) am ;;
checkpatch) checkpatch ;;
kernel-doc) kernel_doc ;;
rst) rst ;;
sparse) sparse ;;
*) echo "usage: $0 identical|am|checkpatch|kernel-doc|rst|sparse|tap" >&2; exit 2 ;;
esac
