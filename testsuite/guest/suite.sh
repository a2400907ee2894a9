# How a program of tests.list is run: sourced by the guest's /init and
# by the runner of the conformance bundle (testsuite/bundle/run), so
# that the suite runs the same way in QEMU and on a booted machine.
# POSIX sh: the bundle runs under whatever /bin/sh the machine has.
#
#   suite_lines LIST [NAME...]      "NAME COMMAND ARGS" of each program
#   suite_run ROOT NAME COMMAND...  run one from ROOT, status in $suite_status
#
# SUITE_HEAVY=0 leaves out the programs that a "#heavy" line of LIST
# names (a million registrations, stress, fuzz, the watchdog checks):
# on a real machine they may take long or upset it.  SUITE_TIMEOUT is
# the time limit per program in seconds (default 60).

# The runnable lines of LIST, or of those NAMEs alone, in LIST's order.
suite_lines() {
	list=$1
	shift
	awk -v heavy="${SUITE_HEAVY:-1}" -v only="$*" '
		BEGIN { n = split(only, o, " "); for (i = 1; i <= n; i++) want[o[i]] = 1 }
		$1 == "#heavy" { for (i = 2; i <= NF; i++) big[$i] = 1; next }
		$0 ~ /^[ \t]*(#|$)/ { next }
		n && !($1 in want) { next }
		!n && heavy == 0 && ($1 in big) { next }
		{ print }' "$list"
}

# Mark the program's start and end in the kernel log where it may be
# written, so that a splat is blamed on the program during which it came.
suite_mark() {
	[ -w /dev/kmsg ] && echo "<5>kevent-test: $1" >/dev/kmsg 2>/dev/null
	return 0
}

# Each program runs in a scratch folder of its own, killed by SIGKILL
# after the time limit: a hung test must not stop the suite.  The
# kselftest runner runs a dozen programs in one and gets four times as
# long.
suite_run() {
	root=$1
	name=$2
	shift 2
	cmd=$1
	shift
	limit=${SUITE_TIMEOUT:-60}
	case "$name" in kselftest-*) limit=$((limit * 4)) ;; esac
	scratch=${SUITE_SCRATCH:-/tmp}
	suite_mark "start $name"
	# socket starts the evserver example from here.
	KEVENT_BIN=$root/bin
	export KEVENT_BIN
	(cd "$scratch" && exec timeout -s KILL "$limit" "$root/$cmd" "$@") \
		</dev/null 2>&1
	# shellcheck disable=SC2034
	suite_status=$?
	suite_mark "end $name"
}

# A KASAN kernel runs everything several times slower: stretch the
# tests' watchdogs (tap_time_scale()) as make check VARIANT=debug does,
# unless the caller chose a scale.
suite_time_scale() {
	[ -z "${KEVENT_TIME_SCALE:-}" ] || return 0
	if grep -q ' kasan_report' /proc/kallsyms 2>/dev/null; then
		KEVENT_TIME_SCALE=4
		export KEVENT_TIME_SCALE
	fi
}
