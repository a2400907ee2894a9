#!/bin/sh
# Guest side of make peers: libevent's benchmarks, test/bench.c (over
# socket pairs, and over pipes as bench-pipes) and test/bench_cascade.c,
# for the kevent, epoll and poll backends, and for two other modes of the
# kevent backend: KEVENT_POLL for every descriptor (kevent-poll) and the
# ring with kevent_wait() (kevent-ring).
#
#   bench.sh [RUNS]
#
# Each run prints microseconds, one line per run (the programs' -r, which
# libevent-kevent.patch adds; 25 without it); testsuite/peers/bench.py
# takes the median.  The output of one configuration goes between
#   ### BENCH BEGIN BACKEND PROGRAM ARGS...
#   ### BENCH END BACKEND PROGRAM STATUS
runs=${1:-9}
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

one() {
	b=$1
	prog=$2
	shift 2
	echo "### BENCH BEGIN $b $prog $*"
	# shellcheck disable=SC2046
	cd /tmp && env $(backend_env "$b") EVENT_SHOW_METHOD=1 \
		timeout -s KILL 600 "$bin/$prog" -r "$runs" "$@" 2>&1
	echo "### BENCH END $b $prog $?"
}

for n in $sizes; do
	for b in $backends; do
		one "$b" bench -n "$n" -a 1 -w 1000
		one "$b" bench -n "$n" -a 100 -w 1000
		one "$b" bench-pipes -n "$n" -a 100 -w 1000
		one "$b" bench_cascade -n "$n"
	done
done
