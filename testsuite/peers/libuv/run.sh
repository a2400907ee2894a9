#!/bin/sh
# Guest side of make peers for libuv: libuv's test suite on one backend.
#
#   run.sh BACKEND [TEST...]
#
# BACKEND is kevent (UV_NOEPOLL: a loop that cannot use kevent fails
# instead of falling back to epoll, so that the column cannot pass on
# epoll by accident) or epoll (UV_NOKEVENT).  Without TEST, the runner
# runs every test of its list, each in a child process of its own, and
# prints one TAP line per test; with TEST, those tests alone.  The output
# goes between the markers that scripts/peers.sh reads:
#   ### PEER BEGIN BACKEND PROGRAM
#   ### PEER END BACKEND PROGRAM STATUS CENTISECONDS
backend=$1
shift
bin=$(cd "$(dirname "$0")" && pwd)

case "$backend" in
kevent)
	export UV_NOEPOLL=1
	unset UV_NOKEVENT ;;
epoll)
	export UV_NOKEVENT=1
	unset UV_NOEPOLL ;;
*)
	echo "run.sh: unknown backend $backend" >&2
	exit 2 ;;
esac

# The guest runs as root, which the runner refuses unless told; the
# tests that depend on it (permissions) do so under both backends.
export UV_RUN_AS_ROOT=1
# A test's own limit (5 s for most) is for a native machine; the guest
# runs under TCG, several times slower.
export UV_TEST_TIMEOUT_MULTIPLIER="${UV_TEST_TIMEOUT_MULTIPLIER:-4}"

# The guest has no users, no host names, no pseudo-terminals and no
# /etc: give the spawn_setuid and spawn_setgid tests the user nobody,
# the getaddrinfo and getnameinfo tests localhost (the C library's own
# files lookup, no DNS), and tty_pty its devpts.
if [ ! -f /etc/passwd ]; then
	mkdir -p /etc
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >/etc/passwd
	printf 'root:x:0:\nnogroup:x:65534:\n' >/etc/group
	printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n' >/etc/hosts
	printf 'passwd: files\ngroup: files\nhosts: files\n' >/etc/nsswitch.conf
fi
if [ ! -e /dev/pts/ptmx ]; then
	mkdir -p /dev/pts
	mount -t devpts -o ptmxmode=666 devpts /dev/pts
	[ -e /dev/ptmx ] || ln -s pts/ptmx /dev/ptmx
fi

. "$bin/centis.sh"

# The tests open test/fixtures/... relative to the current folder and
# write their own files next to it: a fresh folder for each backend.
dir=/tmp/libuv-$backend
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir" && tar xf "$bin/libuv-fixtures.tar" || exit 1

# The runner prints one TAP line per test, also when it runs one test
# named on its command line.
name=uv_run_tests_a
echo "### PEER METHOD $backend libuv $(env | grep -E '^UV_NO(KEVENT|EPOLL)=' | tr '\n' ' ')"
echo "### PEER BEGIN $backend $name"
t0=$(centis)
status=0
# No TEST: one run of the runner without arguments, the whole list.
[ $# -gt 0 ] || set -- ""
for t in "$@"; do
	timeout -s KILL "${PEERS_PROGRAM_LIMIT:-2400}" "$bin/uv_run_tests_a" ${t:+"$t"} 2>&1 ||
		status=$?
done
echo "### PEER END $backend $name $status $(($(centis) - t0))"
