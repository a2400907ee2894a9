#!/bin/sh
# Install or uninstall the manual and the two headers.
#
#   scripts/install.sh install|uninstall DESTDIR MANDIR INCLUDEDIR
#
# Pages go to MANDIR/man2, man2const, man2type, man3, man3const and man7,
# as they are in man/; the UAPI header to INCLUDEDIR/linux/kevent.h and
# the user-space header (the system call numbers, kevent_probe() and the
# wrappers) to INCLUDEDIR/kevent.h.  uninstall removes exactly the files
# install would write.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
action=$1
destdir=$2
mandir=$destdir$3
includedir=$destdir$4

cd "$top"
case "$action" in
install)
	for page in man/*/*; do
		install -D -m 644 "$page" "$mandir/${page#man/}"
	done
	install -D -m 644 include/uapi/linux/kevent.h "$includedir/linux/kevent.h"
	install -D -m 644 include/kevent.h "$includedir/kevent.h"
	;;
uninstall)
	for page in man/*/*; do
		rm -f "$mandir/${page#man/}"
	done
	rm -f "$includedir/linux/kevent.h" "$includedir/kevent.h"
	;;
*)
	echo "usage: $0 install|uninstall DESTDIR MANDIR INCLUDEDIR" >&2
	exit 1
	;;
esac
