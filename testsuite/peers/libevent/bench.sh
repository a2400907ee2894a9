#!/bin/sh
# Guest side of make peers: libevent's benchmarks, test/bench.c (over
# socket pairs, and over pipes as bench-pipes) and test/bench_cascade.c,
# for the kevent, epoll and poll backends, and for two other modes of the
# kevent backend: KEVENT_POLL for every descriptor (kevent-poll) and the
# ring with kevent_wait() (kevent-ring).
#
#   bench.sh [RUNS [ROUNDS]]
#
# RUNS runs in a row, ROUNDS times (default 3 and 4: a median of 12).
# Each run prints microseconds, one line per run (the programs' -r, which
# libevent-kevent.patch adds; 25 without it); testsuite/peers/bench.py
# takes the median.  The output of one configuration goes between
#   ### BENCH BEGIN BACKEND PROGRAM ARGS...
#   ### BENCH END BACKEND PROGRAM STATUS CENTISECONDS
runs=${1:-3}
rounds=${2:-4}
bin=$(cd "$(dirname "$0")" && pwd)
backends=${PEERS_BENCH_BACKENDS:-"kevent epoll poll kevent-poll kevent-ring"}
sizes=${PEERS_BENCH_SIZES:-"100 1000 10000"}

# Only the chosen backend is left: a base cannot fall back silently.
backend_env() {
	case "$1" in
	kevent) echo "EVENT_NOEPOLL=1 EVENT_NOPOLL=1 EVENT_NOSELECT=1" ;;
	kevent-poll) echo "EVENT_NOEPOLL=1 EVENT_NOPOLL=1 EVENT_NOSELECT=1 EVENT_KEVENT_POLL_ONLY=1" ;;
	kevent-ring) echo "EVENT_NOEPOLL=1 EVENT_NOPOLL=1 EVENT_NOSELECT=1 EVENT_KEVENT_RING=1" ;;
	epoll) echo "EVENT_NOKEVENT=1 EVENT_NOPOLL=1 EVENT_NOSELECT=1" ;;
	poll) echo "EVENT_NOKEVENT=1 EVENT_NOEPOLL=1 EVENT_NOSELECT=1" ;;
	esac
}

. "$bin/centis.sh"

one() {
	b=$1
	prog=$2
	shift 2
	echo "### BENCH BEGIN $b $prog $*"
	t0=$(centis)
	# shellcheck disable=SC2046
	cd /tmp && env $(backend_env "$b") EVENT_SHOW_METHOD=1 \
		timeout -s KILL 300 "$bin/$prog" -r "$runs" "$@" 2>&1
	echo "### BENCH END $b $prog $? $(($(centis) - t0))"
}

# The host may be busy with other guests: the backends take turns, a
# few runs each, ROUNDS times, so that a slow spell of the host falls on
# all of them; bench.py pools the runs of a configuration.
config() {
	for r in $(seq "$rounds"); do
		for b in $backends; do
			# poll's cascade is quadratic: n dispatches over n
			# descriptors, a quarter of an hour at 10,000.
			[ "$b" = poll ] && [ "$1" = bench_cascade ] &&
				[ "$n" -gt 1000 ] && continue
			one "$b" "$@"
		done
	done
}

for n in $sizes; do
	config bench -n "$n" -a 1 -w 1000
	config bench -n "$n" -a 100 -w 1000
	config bench-pipes -n "$n" -a 100 -w 1000
	config bench_cascade -n "$n"
done
