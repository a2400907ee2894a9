/* SPDX-License-Identifier: MIT */
/*
 * evtest.c: timers of several periods through kevent_get_events().
 *
 * Adds three periodic KEVENT_TIMER registrations (50, 120 and 300 ms)
 * to a queue without a ring, then prints every event that
 * kevent_get_events() returns until NR events were seen (default 20).
 * It exits with EXIT_SUCCESS only if every event is one of its timers,
 * marked done, and no timer counted more expiries than the elapsed
 * time allows.
 *
 * Illustrates kevent_get_events(2) and kevent_timer(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o evtest examples/evtest.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o evtest evtest.c
 * Usage: ./evtest [NR]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <kevent.h>

static const unsigned int period_ms[] = { 50, 120, 300 };
#define NTIMERS (sizeof(period_ms) / sizeof(period_ms[0]))

static long long
now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t); /* cannot fail here */
    return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int
main(int argc, char *argv[])
{
    int fd, n, i, nr = 20, seen = 0, bad = 0;
    long long expiries[NTIMERS] = { 0 }, start, ms;
    struct __kernel_timespec timeout = { .tv_sec = 2 };
    struct ukevent uk[NTIMERS], ev[8];
    unsigned int k;

    if (argc > 1)
        nr = atoi(argv[1]);
    if (argc > 2 || nr <= 0) {
        fprintf(stderr, "Usage: %s [NR]\n", argv[0]);
        exit(EXIT_FAILURE);
    }

    /* Is kevent there, at the numbers of <kevent.h>? */
    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    fd = kevent_init(NULL, 0, 0);
    if (fd == -1) {
        perror("kevent_init");
        exit(EXIT_FAILURE);
    }

    memset(uk, 0, sizeof(uk));
    for (k = 0; k < NTIMERS; k++) {
        uk[k].id.raw[0] = period_ms[k] / 1000;             /* s */
        uk[k].id.raw[1] = period_ms[k] % 1000 * 1000000;   /* ns */
        uk[k].type = KEVENT_TIMER;
        uk[k].event = KEVENT_TIMER_FIRED;
        uk[k].ptr = k;          /* returned with each event */
    }
    start = now_ms();
    n = kevent_ctl(fd, KEVENT_CTL_ADD, NTIMERS, uk);
    if (n == -1) {
        perror("kevent_ctl");
        exit(EXIT_FAILURE);
    }
    if (n > 0) {                /* entries copied back: they failed */
        fprintf(stderr, "kevent_ctl: %s\n",
                strerror(-(int) uk[0].ret_data[1]));
        exit(EXIT_FAILURE);
    }

    while (seen < nr) {
        n = kevent_get_events(fd, 1, 8, &timeout, ev, 0);
        if (n == -1) {
            perror("kevent_get_events");
            exit(EXIT_FAILURE);
        }
        if (n == 0) {
            fprintf(stderr, "kevent_get_events: no event in 2 s\n");
            exit(EXIT_FAILURE);
        }
        ms = now_ms() - start;
        for (i = 0; i < n; i++, seen++) {
            k = (unsigned int) ev[i].ptr;
            if (ev[i].type != KEVENT_TIMER || k >= NTIMERS ||
                ev[i].ret_flags != KEVENT_RET_DONE ||
                ev[i].ret_data[1] == 0) {
                fprintf(stderr, "unexpected event, flags %#x\n",
                        ev[i].ret_flags);
                exit(EXIT_FAILURE);
            }
            expiries[k] += ev[i].ret_data[1];
            printf("%6lld ms  timer %3u ms  %u expiries (%lld)", ms,
                   period_ms[k], ev[i].ret_data[1], expiries[k]);
            printf(", at %u ms\n", ev[i].ret_data[0]);
            if (expiries[k] * period_ms[k] > ms + 1)
                bad = 1;        /* more expiries than time */
        }
    }
    if (expiries[0] == 0)       /* the 50 ms timer must have fired */
        bad = 1;
    if (close(fd) == -1) {
        perror("close");
        exit(EXIT_FAILURE);
    }
    printf("%d events: %s\n", seen, bad ? "WRONG" : "as expected");
    exit(bad ? EXIT_FAILURE : EXIT_SUCCESS);
}
