#!/bin/sh
# What testsuite/tests.list says, for each that needs it.  The list is
# the one place that says which programs the suite runs and how; its
# lines are NAME FLAGS COMMAND [ARGS...], FLAGS a comma-separated list
# or "-":
#
#   m32       also run as NAME-m32: COMMAND's program built with -m32
#   x86       x86-64 only: left out under ARCH=arm64, as is every twin
#   heavy     left out of the conformance bundle's default run
#   quick     a quick unit test: make mutants runs these first
#   selftest  exported as a kselftest of the series (it takes no ARGS)
#   tree      needs this tree's own kernel build: not in make conformance
#   helper    built and shipped but started by another program, not run
#
#   scripts/suite-list.sh guest [LIST]     the guest's list: NAME COMMAND
#                                          [ARGS...] a line, each twin
#                                          after its line, a "#heavy"
#                                          line first (testsuite/guest/
#                                          suite.sh reads it)
#   scripts/suite-list.sh expected [LIST]  "NAME tap" or "NAME example"
#                                          for each line the guest runs
#   scripts/suite-list.sh programs [LIST]  every program the lines name,
#                                          twins and helpers too
#   scripts/suite-list.sh flag FLAG [LIST] the NAMEs with FLAG, in order
#                                          (twins not named: they share
#                                          their line's flags)
#   scripts/suite-list.sh check            fail, naming it, on a program
#                                          of examples/ or testsuite/
#                                          tests/ that no list runs
#
# LIST defaults to testsuite/tests.list; testsuite/nokevent.list has the
# same format.  ARCH=arm64 in the environment gives the arm64 guest's;
# SUITE_WITHOUT=FLAG leaves out the lines with FLAG.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
[ $# -gt 0 ] && shift

# The lines of LIST, NAME FLAGS COMMAND [ARGS...], without what this
# architecture does not run or SUITE_WITHOUT names; with TWINS=1 each
# twin after its line.
expand() {
	awk -v arm64="$([ "${ARCH:-x86_64}" = arm64 ] && echo 1 || echo 0)" \
		-v twins="${TWINS:-1}" -v without="${SUITE_WITHOUT:-}" '
		$0 ~ /^[ \t]*(#|$)/ { next }
		NF < 3 { printf "%s:%d: not NAME FLAGS COMMAND\n", FILENAME, FNR > "/dev/stderr"; exit 2 }
		{
			flags = "," $2 ","
			if (arm64 && flags ~ /,x86,/)
				next
			if (without != "" && index(flags, "," without ","))
				next
			print
			if (!twins || arm64 || flags !~ /,m32,/)
				next
			$1 = $1 "-m32"
			$3 = $3 "-m32"
			print
		}' "$1"
}

has() {
	case ",$2," in *",$1,"*) return 0 ;; esac
	return 1
}

list=$top/testsuite/tests.list
case "$cmd" in
guest|expected|programs) list=${1:-$list} ;;
flag) [ $# -ge 1 ] || exec "$0"; list=${2:-$list} ;;
check) ;;
*)
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac

case "$cmd" in
guest)
	heavy=$(expand "$list" | while read -r name flags rest; do
		! has heavy "$flags" || printf ' %s' "$name"
	done)
	[ -z "$heavy" ] || echo "#heavy$heavy"
	expand "$list" | while read -r name flags rest; do
		has helper "$flags" || printf '%s\t%s\n' "$name" "$rest"
	done
	;;
expected)
	expand "$list" | while read -r name flags prog args; do
		has helper "$flags" && continue
		prog=${prog#bin/}
		if [ -f "$top/examples/$prog.c" ]; then
			echo "$name example"
		else
			echo "$name tap"
		fi
	done
	;;
programs)
	expand "$list" | while read -r name flags prog args; do
		echo "${prog#bin/}"
	done | awk '!seen[$0]++'
	;;
flag)
	TWINS=0 expand "$list" | while read -r name flags rest; do
		! has "$1" "$flags" || echo "$name"
	done
	;;
check)
	listed=$( { "$0" programs; "$0" programs "$top/testsuite/nokevent.list"; } |
		sort -u)
	missing=0
	for src in "$top"/examples/*.c "$top"/testsuite/tests/*.c; do
		prog=$(basename "$src" .c)
		if ! echo "$listed" | grep -qx "$prog"; then
			echo "suite-list: ${src#"$top"/} is in no list: add its line to testsuite/tests.list" >&2
			missing=1
		fi
	done
	exit $missing
	;;
esac
