#!/bin/sh
# /kevent/bench.sh: the benchmarks of make bench, in the bench guest.
#
# The guest's /init runs it in kevent.mode=bench.  kevent.bench= on the
# kernel command line picks the profile: full (make bench), quick (a
# few minutes, to try a change), kernel (the kevent paths only, for a
# before and after), tiny (to try the chain), or counted and
# counted-smoke (the counted bench of scripts/counted.sh: fixed counts
# between markers, in a boot of one vCPU with bench/kcount.c loaded).  Every measurement is a "BENCH ..."
# line; the HTTP runs frame the load generator's own output between
# "### HTTP ..." and "### HTTP-END" for bench/report.py.  A run that
# fails prints "FAIL ...", which fails make bench.
export PATH=/bin:/sbin:/kevent/bin

profile=full
csets=
cscale=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	kevent.bench=*) profile=${arg#kevent.bench=} ;;
	# The counted profile's sets and idle sizes, for a shorter run.
	kevent.csets=*) csets=$(echo "${arg#kevent.csets=}" | tr , ' ') ;;
	kevent.cscale=*) cscale=${arg#kevent.cscale=} ;;
	esac
done

STAGES="harvest churn scale wake timer http"
case "$profile" in
counted)
	# Instructions, not time: 200 rounds of 1, 8 and 64 ready of
	# each set (KIND:SIZE), the minimum of 5 repetitions; 1,024 HTTP
	# requests to each server on 1 and on 64 connections.
	T=0 R=5 STAGES=counted CROUNDS=200 CREADY="1 8 64"
	CSETS="pipe:1000 unix:1000 tcp:1000 pipe:10000 unix:10000 tcp:10000"
	CCN=1024 CCYCLES=2
	CSCALE=100,1000,10000,100000 CHCONNS="1 64" CHREQS=1024
	;;
counted-smoke)
	# make check: every counted workload, small, once.
	T=0 R=1 STAGES=counted CROUNDS=10 CREADY="1 8"
	CSETS="pipe:100 unix:20 tcp:20" CCN=64 CCYCLES=1 CSCALE=10,100
	CHCONNS="1 4" CHREQS=32
	;;
kernel)
	# Before and after a kernel change: the workloads that exercise
	# kevent's own paths, without HTTP and the latencies.
	T=0.5 R=5 SCALE=10,1000,10000,100000
	STAGES="harvest churn scale"
	;;
tiny)
	# Only to try the whole chain: numbers of no use.
	T=0.1 R=1 HT=1 HR=1 SCALE=10,1000 HCONNS="1 100"
	SAMPLES=30 TSAMPLES=10 HPCONNS=30
	;;
quick)
	T=0.5 R=2 HT=2 HR=1 SCALE=10,1000,10000,100000 HCONNS="1 100 1000"
	SAMPLES=300 TSAMPLES=100 HPCONNS=200
	;;
*)
	# Short runs, many times over: the host's load changes from one
	# second to the next, and every mechanism gets its share of it.
	T=0.5 R=10 HT=6 HR=3 SCALE=10,1000,10000,100000 HCONNS="1 100 1000"
	SAMPLES=1000 TSAMPLES=300 HPCONNS=500
	;;
esac

# No lockup detectors (kevent.config builds them in): their timers and
# checks would run during the measurements.
echo 0 >/proc/sys/kernel/watchdog 2>/dev/null
echo 0 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
# 100,000 eventfds and 10,000 pipes or socket pairs, 1,000 connections.
echo 2000000 >/proc/sys/fs/nr_open
echo 2000000 >/proc/sys/fs/file-max
echo 4000000 >/proc/sys/fs/kevent/max_user_kevents
echo 4096 >/proc/sys/net/core/somaxconn
echo 4096 >/proc/sys/net/ipv4/tcp_max_syn_backlog
# Clients take ports from 21000 up, above the servers' (20001 on, one
# per server started): a client must never hold a port a server binds.
echo "21000 65000" >/proc/sys/net/ipv4/ip_local_port_range
echo 1 >/proc/sys/net/ipv4/tcp_tw_reuse
ulimit -n 1000000

echo "### ENV profile $profile"
echo "### ENV memory $(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo)"
echo "### ENV slab $(grep -q '^kmalloc' /proc/slabinfo 2>/dev/null && echo slub || echo unknown)"
echo "### ENV cmdline $(cat /proc/cmdline)"
# High-resolution timers need a working local APIC timer, which the
# kernel's calibration under a loaded TCG host sometimes rejects.
echo "### ENV timer-resolution $(awk '/resolution:/ { print $2 / 1000 " us"; exit }' /proc/timer_list 2>/dev/null)"
echo "### ENV params T=$T R=$R HT=${HT:-} HR=${HR:-} stages: $STAGES"

start=$(date +%s)
stage() {
	echo "### STAGE $1 at $(($(date +%s) - start))s"
}

# Is stage $1 in this profile?
want() {
	case " $STAGES " in *" $1 "*) return 0 ;; esac
	return 1
}

run() {
	"$@" || echo "FAIL bench: $* exited with status $?"
}

if want counted; then
	stage counted
	CSETS=${csets:-$CSETS} CSCALE=${cscale:-$CSCALE}
	# An eventfd's own source is KEVENT_POLL: no kevent-poll row.
	for kind in pipe unix eventfd; do
		v=kevent-1,kevent-8,kevent-64,kevent-1024
		[ "$kind" = eventfd ] || v=$v,kevent-poll-64
		run kbench -r "$R" churn -k "$kind" -n "$CCN" -C "$CCYCLES" \
			-v "$v,epoll,uring-1,uring-8,uring-64"
	done
	for set in $CSETS; do
		for k in $CREADY; do
			run kbench -r "$R" harvest -k "${set%:*}" -n "${set#*:}" \
				-a "$k" -R "$CROUNDS" -m null,ring,ring-lt,getev,getev-lt,direct,epoll-et,epoll-lt,uring,uring-nodt
		done
	done
	# 64 of 64 pipes ready a round, beside idle eventfds.
	[ "$CSCALE" = none ] ||
		run kbench -r "$R" scale -i "$CSCALE" -a 64 -R "$CROUNDS" \
			-m ring,getev,epoll-et,epoll-lt,uring
	# Each server serves the client's first request on each connection
	# and R x CHREQS more, then ends by itself: it must have served
	# them all, and no more.
	port=19000
	for conns in $CHCONNS; do
		for s in ring getev direct epoll uring; do
			port=$((port + 1))
			n=$((conns + R * CHREQS))
			kbench httpd -b "$s" -p "$port" -n "$n" >/tmp/server.out 2>&1 &
			spid=$!
			run kbench -r "$R" httpc -p "$port" -c "$conns" -n "$CHREQS" -C "$s"
			wait "$spid" || echo "FAIL bench: httpd $s exited with status $?"
			grep -q "served=$n " /tmp/server.out ||
				echo "FAIL bench: httpd $s served not $n: $(tail -n 1 /tmp/server.out)"
		done
	done
fi
if want harvest; then
	stage harvest
	run kbench -t "$T" -r "$R" harvest -n 1000 -a 100 -k pipe
	run kbench -t "$T" -r "$R" harvest -n 10000 -a 100 -k pipe
	run kbench -t "$T" -r "$R" harvest -n 1000 -a 100 -k unix
	# What a call costs and what an event costs: 1 and 10 events a round.
	run kbench -t "$T" -r "$R" harvest -n 1000 -a 1 -m ring,getev,epoll-et,uring
	run kbench -t "$T" -r "$R" harvest -n 1000 -a 10 -m ring,getev,epoll-et,uring
fi
if want churn; then
	stage churn
	run kbench -t "$T" -r "$R" churn -n 1024
fi
if want scale; then
	stage scale
	run kbench -t "$T" -r "$R" scale -i "$SCALE" -a 100
fi
if want wake; then
	stage wake
	run kbench -r "$R" wake -s "$SAMPLES"
fi
if want timer; then
	stage timer
	run kbench -r 3 timer -s "$TSAMPLES"
fi

# HTTP: a server, then the load generator against it, then the server's
# own count.  Ports are never reused, so that no TIME_WAIT is in the way.
port=20000
server() {
	port=$((port + 1))
	case "$1" in
	evserver) evserver "$port" 0 >/tmp/server.out 2>&1 & ;;
	*) kbench httpd -b "$1" -p "$port" >/tmp/server.out 2>&1 & ;;
	esac
	spid=$!
	# Up when it accepts a connection.
	i=0
	while ! wget -q -O /dev/null "http://127.0.0.1:$port/" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt 100 ]; then
			echo "FAIL bench: server $1 did not come up"
			break
		fi
		sleep 0.1
	done
}

server_stop() {
	kill -TERM "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	cat /tmp/server.out
}

if want http; then
	stage http
	for rep in $(seq "$HR"); do
		for conns in $HCONNS; do
			threads=2
			[ "$conns" -lt 2 ] && threads=1
			for s in ring epoll uring evserver; do
				server "$s"
				echo "### HTTP tool=wrk server=$s conns=$conns rep=$rep"
				wrk -t "$threads" -c "$conns" -d "${HT}s" --timeout 10s \
					--latency "http://127.0.0.1:$port/" 2>&1
				echo "### HTTP-END"
				server_stop
			done
		done
		# httperf, as in 2006: a new connection per request, one at a time.
		for s in ring epoll uring evserver; do
			server "$s"
			echo "### HTTP tool=httperf server=$s conns=1 rep=$rep"
			httperf --server 127.0.0.1 --port "$port" --uri / \
				--num-conns "$HPCONNS" --num-calls 1 --timeout 10 2>&1
			echo "### HTTP-END"
			server_stop
		done
	done
fi
stage end
