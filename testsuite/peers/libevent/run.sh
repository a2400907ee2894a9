#!/bin/sh
# Guest side of make peers: libevent's regression programs on one
# backend.
#
#   run.sh BACKEND [PROGRAM...]
#
# BACKEND is kevent (every other backend disabled through libevent's
# EVENT_NO* variables, so that a base cannot silently fall back), epoll
# (EVENT_NOKEVENT), or kevent-ring or kevent-poll, the backend's other
# modes (make peers PEERS_MODES="kevent-ring kevent-poll").  Each program runs under its own time limit, from
# /tmp, and its output goes between markers that scripts/peers.sh reads:
#   ### PEER BEGIN BACKEND PROGRAM
#   ### PEER END BACKEND PROGRAM STATUS CENTISECONDS
# regress prints a line per test; the others pass or fail as a whole.
backend=$1
shift
bin=$(cd "$(dirname "$0")" && pwd)

case "$backend" in
kevent|kevent-ring|kevent-poll)
	# The other modes of the backend: the ring (kevent_wait), and
	# KEVENT_POLL for every descriptor.
	export EVENT_NOEPOLL=1 EVENT_NOPOLL=1 EVENT_NOSELECT=1
	unset EVENT_NOKEVENT EVENT_KEVENT_RING EVENT_KEVENT_POLL_ONLY
	[ "$backend" != kevent-ring ] || export EVENT_KEVENT_RING=1
	[ "$backend" != kevent-poll ] || export EVENT_KEVENT_POLL_ONLY=1 ;;
epoll)
	export EVENT_NOKEVENT=1 EVENT_NOPOLL=1 EVENT_NOSELECT=1
	unset EVENT_NOEPOLL ;;
*)
	echo "run.sh: unknown backend $backend" >&2
	exit 2 ;;
esac
unset EVENT_EPOLL_USE_CHANGELIST EVENT_PRECISE_TIMER EVENT_SHOW_METHOD

# evdns_base_new(..., EVDNS_BASE_INITIALIZE_NAMESERVERS) reads it; the
# guest has no network, so only loopback.
[ -f /etc/resolv.conf ] || { mkdir -p /etc && echo "nameserver 127.0.0.1" >/etc/resolv.conf; }

# Per-program limits in seconds, measured under TCG with 2 CPUs
# (doc/libevent.md): regress takes about 135 s, test-ratelim 6 s, the
# others 12 s at most; about three times that, and 60 s at least.
limit() {
	case "$1" in
	regress) echo "${PEERS_REGRESS_LIMIT:-450}" ;;
	test-ratelim*) echo 120 ;;
	*) echo 60 ;;
	esac
}

. "$bin/centis.sh"

# NAME COMMAND...: run under the limit, between the markers.  The
# programs that judge the time they took (test-ratelim, test-time) run
# once more if they fail, under either backend, as tinytest retries its
# own timing tests (TT_RETRIABLE): under TCG, on a host busy with other
# guests, test-ratelim's rates stray by 10 to 30 % now and then, and
# the tolerance it allows depends on how late its first timers were.
run() {
	name=$1
	shift
	echo "### PEER BEGIN $backend $name"
	t0=$(centis)
	cd /tmp && timeout -s KILL "$(limit "$name")" "$@" 2>&1
	status=$?
	case "$status:$name" in
	0:*) ;;
	*:test-ratelim*|*:test-time)
		echo "### PEER RETRY $backend $name $status"
		timeout -s KILL "$(limit "$name")" "$@" 2>&1
		status=$? ;;
	esac
	echo "### PEER END $backend $name $status $(($(centis) - t0))"
}

programs=${*:-"test-init test-eof test-weof test-closed test-changelist
test-time test-fdleak test-dumpevents test-ratelim regress"}

# libevent's event base reads the wall clock only in gettime(), and
# only once CLOCK_MONOTONIC has passed CLOCK_SYNC_INTERVAL (5 s, in
# whole seconds: tv_sec > 5) since the last time it did; before that,
# its offset from monotonic to wall time is zero, and test-dumpevents
# prints monotonic seconds where its checker expects wall-clock ones.
# The first backend starts a few seconds after the boot, earlier the
# faster the guest boots: wait until the clock is past 7 s, so that
# the verdict does not depend on how fast the guest booted.  The
# guest never suspends, so /proc/uptime (CLOCK_BOOTTIME) is
# CLOCK_MONOTONIC here.
read -r up _ </proc/uptime
while [ "${up%.*}" -lt 7 ]; do
	sleep 1
	read -r up _ </proc/uptime
done

echo "### PEER METHOD $backend $(EVENT_SHOW_METHOD=1 "$bin/test-init" 2>&1 | tr '\n' ' ')"
for p in $programs; do
	case "$p" in
	test-ratelim)
		# As libevent's test-ratelim.sh, shortened: a group limit,
		# a per-connection limit, both, and the check of the rates.
		run test-ratelim-group "$bin/test-ratelim" -g 30000 -n 30 -t 100 --check-grouplimit 1000 --check-stddev 100
		run test-ratelim-conn "$bin/test-ratelim" -c 1000 -n 30 -t 100 --check-connlimit 50 --check-stddev 50
		run test-ratelim-both "$bin/test-ratelim" -c 1000 -g 30000 -n 30 -t 100 --check-grouplimit 1000 --check-connlimit 50 --check-stddev 50
		;;
	regress)
		run regress "$bin/regress" ;;
	*)
		run "$p" "$bin/$p" ;;
	esac
done
