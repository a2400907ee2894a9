/* SPDX-License-Identifier: MIT */
/*
 * signal.c: SIGUSR1 through a kevent queue, with and without
 * KEVENT_SIGNAL_NOMASK.
 *
 * Installs a handler for SIGUSR1, adds a KEVENT_SIGNAL registration
 * for it, and sends itself the signal NR times (default 3), first
 * without NOMASK, then with it.  Without NOMASK each signal is both
 * handled and reported; with NOMASK it is only reported: the handler
 * does not run and the signal is never pending.  It exits with
 * EXIT_SUCCESS only if that is what it saw.
 *
 * Illustrates kevent_signal(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o signal examples/signal.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o signal signal.c
 * Usage: ./signal [NR]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kevent.h>

static volatile sig_atomic_t handled;

static void
on_sigusr1(int sig)
{
    (void) sig;
    handled++;
}

/* Send SIGUSR1 nr times, watched by a registration with or without
   NOMASK; return 0 if each was reported and handled as expected. */
static int
run(int fd, int nomask, int nr)
{
    int i, n, bad = 0;
    struct __kernel_timespec zero = { 0, 0 };
    struct ukevent uk;
    sigset_t pending;

    memset(&uk, 0, sizeof(uk));
    uk.type = KEVENT_SIGNAL;
    uk.id.raw[0] = SIGUSR1;
    if (nomask)
        uk.id.raw_u64 |= KEVENT_SIGNAL_NOMASK;
    uk.event = KEVENT_SIGNAL_DELIVERY;
    uk.req_flags = KEVENT_REQ_ET;
    uk.ptr = nomask;
    n = kevent_ctl(fd, KEVENT_CTL_ADD, 1, &uk);
    if (n != 0) {
        fprintf(stderr, "kevent_ctl: %s\n", n == -1 ? strerror(errno)
                : strerror(-(int) uk.ret_data[1]));
        return 1;
    }

    handled = 0;
    for (i = 0; i < nr; i++) {
        if (kill(getpid(), SIGUSR1) == -1 ||
            sigpending(&pending) == -1) {
            perror("kill");
            return 1;
        }
        n = kevent_get_events(fd, 0, 1, &zero, &uk, 0);
        printf("%s: kill #%d: handler ran %d times, %s, %d event%s",
               nomask ? "NOMASK" : "plain ", i + 1, (int) handled,
               sigismember(&pending, SIGUSR1) ? "pending"
               : "not pending", n, n == 1 ? "" : "s");
        if (n == 1)
            printf(" (signal %u, si_code %d, %u sent)", uk.id.raw[0],
                   (int) uk.ret_data[0], uk.ret_data[1]);
        printf("\n");
        if (n != 1 || uk.ptr != (__u64) nomask || uk.ret_data[1] != 1 ||
            (int) uk.ret_data[0] != SI_USER ||
            handled != (nomask ? 0 : i + 1) ||
            sigismember(&pending, SIGUSR1))
            bad = 1;
    }

    /* The event names the registration: remove it. */
    if (kevent_ctl(fd, KEVENT_CTL_REMOVE, 1, &uk) == -1 ||
        uk.ret_flags & KEVENT_RET_BROKEN)
        bad = 1;
    return bad;
}

int
main(int argc, char *argv[])
{
    int fd, bad, nr = argc > 1 ? atoi(argv[1]) : 3;
    struct sigaction sa;

    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    fd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
    if (fd == -1) {
        perror("kevent_init");
        exit(EXIT_FAILURE);
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigusr1;
    if (sigaction(SIGUSR1, &sa, NULL) == -1) {
        perror("sigaction");
        exit(EXIT_FAILURE);
    }

    bad = run(fd, 0, nr);
    bad |= run(fd, 1, nr);
    close(fd);
    printf("%s\n", bad ? "unexpected results" : "all as expected");
    exit(bad ? EXIT_FAILURE : EXIT_SUCCESS);
}
