#!/bin/sh
# make run: show kevent at work in the guest.
echo
echo "== kevent on $(uname -sr): timers of 50, 120 and 300 ms through kevent_get_events()"
/kevent/bin/evtest 15
echo
echo "== a ring of 4 slots wrapped by 24 events: kevent_wait() and kevent_commit()"
/kevent/bin/ring_buffer 24 4
echo
echo "== /dev/kevent"
ls -l /dev/kevent
echo
