#!/bin/sh
# Install the Debian packages that building, booting and checking need.
# Only what is missing is installed; nothing is done when all are there.
set -eu

packages="linux-source-6.1 qemu-system-x86 busybox-static groff mandoc
pandoc gcc g++ gcc-multilib g++-multilib make ccache flex bison bc
libelf-dev libssl-dev cpio xz-utils python3 perl man-db
liburing-dev wrk httperf gnuplot-nox cmake patch git sparse
python3-docutils python3-ply"

missing=
for p in $packages; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "deps: installing$missing"
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $missing
