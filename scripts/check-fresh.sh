#!/bin/sh
# make check-fresh: make check as a new user runs it, on a fresh Debian 12.
#
# Builds a minimal Debian 12 root with debootstrap (build/fresh/root-KEY),
# from the apt sources this machine uses, mounts /proc, /sys and /dev in
# it, and there, with nothing of this machine's /usr, installs git and
# make, clones the committed HEAD and runs make check as README says.
# The last line is make check's summary line, and the exit status is
# make check's.
#
# The root is kept for the next run only while nothing that decides what
# is installed in it has changed: KEY is a hash of scripts/deps.sh and of
# the debootstrap parameters below.  A root of another key is removed.
# Each run clones HEAD anew; the root's ccache is kept with the root.
#
#   FRESH_REBUILD=1   build the root anew even when its key matches
#   PEERS=DIR         where the peers' tarballs are, as for make check
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
fresh=$build/fresh
start=$(date +%s)

log() {
	printf '== [%4ds] check-fresh: %s\n' "$(($(date +%s) - start))" "$*"
}

if [ "$(id -u)" -ne 0 ]; then
	echo "check-fresh: debootstrap, chroot and mount need root" >&2
	exit 1
fi
if ! git diff --quiet HEAD --; then
	log "the worktree has changes that are not committed: checking HEAD without them"
fi

# debootstrap itself, on this machine.
scripts/deps.sh

# The apt sources of this machine, as one-line "deb URI SUITE COMP..."
# entries: its sources.list and the .list and .sources files of
# sources.list.d, the Debian 12 (bookworm) suites only; a source of
# another distribution would not serve the root, and its key is not
# there.
sources() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
			awk '$1 == "deb" && NF >= 4'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: stanzas of "Field: value", a blank line between.
		awk 'function flush(  u, s, nu, ns, i, j) {
			if (types ~ /(^| )deb( |$)/ && enabled != "no" && uris != "") {
				nu = split(uris, u, " "); ns = split(suites, s, " ")
				for (i = 1; i <= nu; i++)
					for (j = 1; j <= ns; j++)
						print "deb", u[i], s[j], comps
			}
			types = uris = suites = comps = enabled = ""
		}
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		{
			field = tolower($1); sub(/:$/, "", field)
			value = $0; sub(/^[^:]*:[ \t]*/, "", value)
			if (field == "types") types = value
			else if (field == "uris") uris = value
			else if (field == "suites") suites = value
			else if (field == "components") comps = value
			else if (field == "enabled") enabled = tolower(value)
		}
		END { flush() }' "$f"
	done
}
suite=bookworm
entries=$(sources | awk -v s="$suite" '$3 == s || index($3, s "-") == 1' | sort -u)
mirror=$(printf '%s\n' "$entries" | awk -v s="$suite" '$3 == s { print $2; exit }')
if [ -z "$mirror" ]; then
	echo "check-fresh: no '$suite' source in this machine's apt configuration" >&2
	exit 1
fi

# The root: minbase, the smallest Debian that apt runs on; everything
# else is what make check installs (deps.sh) and what README says to
# install before it.
variant=minbase
key=$( { cat scripts/deps.sh; echo "$suite $variant $mirror"; } |
	sha256sum | cut -c1-16)
root=$fresh/root-$key

mounted() {
	awk -v r="$1" '$2 == r || index($2, r "/") == 1 { found = 1 } END { exit !found }' /proc/mounts
}
unmount() {
	for m in dev sys proc; do
		if mounted "$1/$m"; then
			umount -R "$1/$m" 2>/dev/null || umount -R -l "$1/$m"
		fi
	done
}
# Never remove a root with something mounted in it: rm would follow into
# this machine's /dev.
remove_root() {
	unmount "$1"
	if mounted "$1"; then
		echo "check-fresh: $1 still has mounts; not removed" >&2
		exit 1
	fi
	rm -rf --one-file-system "$1"
}

mkdir -p "$fresh"
for r in "$fresh"/root-*; do
	[ -d "$r" ] || continue
	[ "$r" = "$root" ] && [ "${FRESH_REBUILD:-0}" = 0 ] && continue
	log "removing ${r#"$top"/}"
	remove_root "$r"
done
if [ -f "$root/.check-fresh-root" ]; then
	log "reusing ${root#"$top"/} (scripts/deps.sh unchanged)"
else
	[ ! -e "$root" ] || remove_root "$root"
	log "debootstrap --variant=$variant $suite from $mirror into ${root#"$top"/}"
	debootstrap --variant="$variant" "$suite" "$root" "$mirror" \
		>"$fresh/debootstrap.log" 2>&1 ||
		{ tail -20 "$fresh/debootstrap.log"; echo "check-fresh: debootstrap failed ($fresh/debootstrap.log)" >&2; exit 1; }
	touch "$root/.check-fresh-root"
fi

# The root's apt: this machine's sources and the Acquire settings of its
# apt configuration (proxies, Check-Valid-Until).
printf '%s\n' "$entries" >"$root/etc/apt/sources.list"
rm -f "$root"/etc/apt/sources.list.d/*
apt-config dump | grep -E '^Acquire::(https?::Proxy|Check-Valid-Until|http::Proxy::)' \
	>"$root/etc/apt/apt.conf.d/90check-fresh" || true
cp /etc/resolv.conf "$root/etc/resolv.conf"

# HEAD, as a bundle that the root's git clones; the peers' tarballs
# where make check looks for them next to the clone (../shared/peers).
# The last run's clone holds a kernel tree and its objects: removing it
# takes minutes on a busy disk, so it is moved aside and removed beside
# the run, at the lowest priority.
if [ -e "$root/src" ]; then
	mv "$root/src" "$fresh/old-src.$$"
fi
for old in "$fresh"/old-src.*; do
	[ -e "$old" ] || continue
	nice -n 19 ionice -c 3 rm -rf --one-file-system "$old" \
		</dev/null >/dev/null 2>&1 &
done
mkdir -p "$root/src/shared/peers"
# The branch too, so that the clone is on it, as a user's would be.
# shellcheck disable=SC2046
git bundle create -q "$root/src/kevent.bundle" HEAD $(git symbolic-ref -q --short HEAD || true)
# The peers' tarballs (libevent's, libuv's): every one of the first
# folder that has any, as make check looks for them.
for d in ${PEERS:-} "$top/../shared/peers" /work/shared/peers; do
	if ls "$d"/*.tar.gz >/dev/null 2>&1; then
		cp "$d"/*.tar.gz "$root/src/shared/peers/"
		break
	fi
done

# A run that was killed may have left its mounts.
unmount "$root"
trap 'unmount "$root"' EXIT
trap 'exit 130' INT TERM
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"

log "in the root: apt-get install git make, git clone, make check"
# make check's output as it comes, its last line (the summary) held back
# so that it stays the last line, after the time this took.
status=$fresh/status
rm -f "$status"
{
	rc=0
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/sh -c '
set -e
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends git make >/dev/null
cd /src
git clone -q kevent.bundle kevent
cd kevent
git log --oneline -1
make check' 2>&1 || rc=$?
	echo "$rc" >"$status"
} | tee "$fresh/check.log" | {
	# read, unlike awk, takes a line as soon as it comes.
	prev='' n=0
	while IFS= read -r line; do
		[ "$n" -eq 0 ] || printf '%s\n' "$prev"
		prev=$line n=1
	done
	t=$(($(date +%s) - start))
	printf '== [%4ds] check-fresh: done in %d min %d s\n' "$t" $((t / 60)) $((t % 60))
	[ "$n" -eq 0 ] || printf '%s\n' "$prev"
}
exit "$(cat "$status" 2>/dev/null || echo 1)"
