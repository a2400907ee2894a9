/* SPDX-License-Identifier: MIT */
/*
 * event_loop.c: one queue for a socket, a timer and a signal.
 *
 * A single-threaded event loop on one kevent queue: a periodic
 * KEVENT_TIMER (50 ms) writes a line into one end of a UNIX stream
 * socket pair, whose other end is watched with KEVENT_SOCKET for
 * KEVENT_SOCKET_RECV; after NR ticks (default 5) the program sends
 * itself SIGUSR1, which a KEVENT_SIGNAL registration with
 * KEVENT_SIGNAL_NOMASK takes instead of a handler.  The signal makes
 * the loop close the writing end; once the lines are read, the socket
 * registration is reported broken with -EPIPE (the end of an AF_UNIX
 * stream, see kevent_socket(7)), and the loop stops.  It exits with
 * EXIT_SUCCESS only if every line arrived, the signal was reported
 * once, and the end of the stream was seen.
 *
 * Illustrates kevent(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o event_loop examples/event_loop.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o event_loop event_loop.c
 * Usage: ./event_loop [NR]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <kevent.h>

enum { TICK, LINE, SIGNAL };    /* what each registration is for */

int
main(int argc, char *argv[])
{
    int kfd, sv[2], i, n, nr, eof = 0;
    int ticks = 0, sent = 0, lines = 0, killed = 0, signals = 0;
    char buf[256];
    ssize_t len;
    struct ukevent uk[3], ev[8];

    nr = argc > 1 ? atoi(argv[1]) : 5;
    if (argc > 2 || nr <= 0) {
        fprintf(stderr, "Usage: %s [NR]\n", argv[0]);
        exit(EXIT_FAILURE);
    }

    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    kfd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
    if (kfd == -1 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                   0, sv) == -1) {
        perror("setup");
        exit(EXIT_FAILURE);
    }

    memset(uk, 0, sizeof(uk));
    uk[0].type = KEVENT_TIMER;                  /* every 50 ms */
    uk[0].id.raw[1] = 50 * 1000000;
    uk[0].event = KEVENT_TIMER_FIRED;
    uk[0].ptr = TICK;
    uk[1].type = KEVENT_SOCKET;                 /* data to read */
    uk[1].id.raw[0] = sv[0];
    uk[1].event = KEVENT_SOCKET_RECV;
    uk[1].ptr = LINE;
    uk[2].type = KEVENT_SIGNAL;                 /* SIGUSR1, taken */
    uk[2].id.raw[0] = SIGUSR1;    /* then the flag: any byte order */
    uk[2].id.raw_u64 |= KEVENT_SIGNAL_NOMASK;
    uk[2].event = KEVENT_SIGNAL_DELIVERY;
    uk[2].ptr = SIGNAL;
    n = kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk);
    if (n != 0) {       /* the socket is empty: no entry is ready */
        fprintf(stderr, "kevent_ctl: %s\n", n == -1 ? strerror(errno)
                : strerror(-(int) uk[0].ret_data[1]));
        exit(EXIT_FAILURE);
    }

    while (!eof) {
        n = kevent_get_events(kfd, 1, 8, NULL, ev, 0);
        if (n == -1) {
            perror("kevent_get_events");
            exit(EXIT_FAILURE);
        }
        for (i = 0; i < n; i++) {
            if (ev[i].ret_flags & KEVENT_RET_BROKEN) {
                /* Only the socket breaks here: its peer is gone
                   and all was read (-EPIPE, the end of an AF_UNIX
                   stream).  Reported once, and removed. */
                printf("socket: broken, %s\n",
                       strerror(-(int) ev[i].ret_data[1]));
                eof = 1;
                continue;
            }
            switch (ev[i].ptr) {
            case TICK:
                ticks += ev[i].ret_data[1];    /* expiries */
                if (sv[1] == -1)
                    break;
                len = snprintf(buf, sizeof(buf), "tick %d\n", ticks);
                if (write(sv[1], buf, len) != len) {
                    perror("write");
                    exit(EXIT_FAILURE);
                }
                sent++;
                if (ticks >= nr && !killed) {
                    kill(getpid(), SIGUSR1);
                    killed = 1;
                }
                break;
            case LINE:
                len = read(sv[0], buf, sizeof(buf) - 1);
                if (len == -1 && errno == EAGAIN)
                    break;
                if (len == -1) {
                    perror("read");
                    exit(EXIT_FAILURE);
                }
                /* No read of 0: an AF_UNIX stream ends broken. */
                buf[len] = '\0';
                for (char *p = buf; (p = strchr(p, '\n')); p++)
                    lines++;
                printf("socket: %s", buf);
                break;
            case SIGNAL:
                signals++;
                printf("signal %u, si_code %d: closing the writer\n",
                       ev[i].id.raw[0], (int) ev[i].ret_data[0]);
                close(sv[1]);
                sv[1] = -1;
                break;
            }
        }
    }

    printf("%d ticks, %d of %d lines, %d signal\n", ticks, lines, sent,
           signals);
    close(kfd);
    exit(lines == sent && signals == 1 ? EXIT_SUCCESS : EXIT_FAILURE);
}
