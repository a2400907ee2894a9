#!/bin/sh
# Guest side of make peers: libuv's own benchmarks (uv_run_benchmarks_a)
# on kevent and on epoll.
#
#   bench.sh [RUNS]
#
# Each benchmark runs RUNS times (default 3) for each backend, the two
# backends one after the other within a round, so that a slow spell of
# the host falls on both, and in turns first, so that neither always
# pays for a cold start.  Most of libuv's benchmarks run for a fixed
# time and print a rate; testsuite/peers/libuv/bench.py takes the median.
# The output of one run goes between
#   ### BENCH BEGIN BACKEND BENCHMARK
#   ### BENCH END BACKEND BENCHMARK STATUS CENTISECONDS
runs=${1:-3}
bin=$(cd "$(dirname "$0")" && pwd)
# Left out: the ones that run for a fixed count rather than a fixed time
# (million_timers, tcp_multi_accept*: minutes under TCG), and
# async_pummel_*, which can spin for minutes on either backend.
benchmarks=${PEERS_BENCH_LIST:-"ping_pongs ping_udp1 tcp_pump1_client
pipe_pump1_client tcp4_pound_100 pipe_pound_100 udp_pummel_1v1
million_async loop_count"}

export UV_RUN_AS_ROOT=1

. "$bin/centis.sh"

cd /tmp || exit 1
round=0
while [ "$round" -lt "$runs" ]; do
	round=$((round + 1))
	order="kevent epoll"
	[ $((round % 2)) = 1 ] || order="epoll kevent"
	for b in $benchmarks; do
		for backend in $order; do
			# As run.sh: kevent or nothing, and epoll.
			case "$backend" in
			kevent) env="UV_NOEPOLL=1" ;;
			epoll) env="UV_NOKEVENT=1" ;;
			esac
			echo "### BENCH BEGIN $backend $b"
			t0=$(centis)
			env "$env" timeout -s KILL 120 "$bin/uv_run_benchmarks_a" "$b" 2>&1
			status=$?
			echo "### BENCH END $backend $b $status $(($(centis) - t0))"
		done
	done
done
