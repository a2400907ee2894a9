# Shell helpers of the project's scripts, POSIX sh.  A script sources it
# once it knows where the repository is:
#
#	top=$(cd "$(dirname "$0")/.." && pwd)
#	. "$top/scripts/lib.sh"
#
#   die MESSAGE        the script's name and MESSAGE on stderr, then exit
#                      with $die_status (default 1)
#   stage MESSAGE      "== [  12s] MESSAGE": a part of a long run, in
#                      seconds since the script began
#   say MESSAGE        "[  12s] MESSAGE": a step inside a part
#   logged LOG CMD...  CMD with its output into LOG; if it fails, the
#                      last 40 lines of LOG and die
#   kernel_obj BUILD   the folder under BUILD that scripts/kernel.sh
#                      builds the kernel of $ARCH and $VARIANT in

start=$(date +%s)
die_status=1

die() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
	exit "$die_status"
}

stage() {
	printf '== [%4ds] %s\n' "$(($(date +%s) - start))" "$*"
}

say() {
	printf '[%4ds] %s\n' "$(($(date +%s) - start))" "$*"
}

logged() {
	log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "failed: $* (full log: $log)"
	fi
}

kernel_obj() {
	case "${ARCH:-x86_64}" in
	x86_64)	echo "$1/obj${VARIANT:+-$VARIANT}" ;;
	*)	echo "$1/obj-$ARCH${VARIANT:+-$VARIANT}" ;;
	esac
}
