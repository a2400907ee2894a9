/* SPDX-License-Identifier: MIT */
/*
 * posix_timer.c: a POSIX timer that reports to a kevent queue.
 *
 * Creates a CLOCK_MONOTONIC timer with SIGEV_KEVENT, arms it with a
 * period of 20 ms, and prints the reports that kevent_get_events()
 * returns until NR (default 10) were seen; then deletes the timer and
 * prints the report that says so.  It exits with EXIT_SUCCESS only if
 * every report names the timer and its sival_ptr, the expiries
 * reported add up to the time elapsed, and the deletion is reported
 * broken.
 *
 * Illustrates kevent_posix_timer(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o posix_timer examples/posix_timer.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o posix_timer posix_timer.c
 * Usage: ./posix_timer [NR]
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <kevent.h>

#define PERIOD_MS  20

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
    int fd, i, bad = 0, nr = argc > 1 ? atoi(argv[1]) : 10;
    long long arm_from, arm_by, last_from = 0, last_by = 0;
    unsigned int expiries = 0;
    static const char name[] = "my timer";
    struct itimerspec its = {
        .it_value = { 0, PERIOD_MS * 1000000 },
        .it_interval = { 0, PERIOD_MS * 1000000 },
    };
    struct __kernel_timespec wait = { .tv_sec = 1 };
    struct sigevent sev;
    struct ukevent uk;
    timer_t timer;

    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    fd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
    if (fd == -1) {
        perror("kevent_init");
        exit(EXIT_FAILURE);
    }

    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_KEVENT;
    sev.sigev_value.sival_ptr = (void *) name;
    /* The queue, where the kernel has sigev_notify_thread_id. */
    sev._sigev_un._tid = fd;
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) == -1) {
        perror("timer_create");
        exit(EXIT_FAILURE);
    }
    arm_from = now_ms();
    if (timer_settime(timer, 0, &its, NULL) == -1) {
        perror("timer_settime");
        exit(EXIT_FAILURE);
    }
    arm_by = now_ms();

    for (i = 0; i < nr; i++) {
        last_from = now_ms();
        if (kevent_get_events(fd, 1, 1, &wait, &uk, 0) != 1) {
            fprintf(stderr, "no report within a second\n");
            exit(EXIT_FAILURE);
        }
        last_by = now_ms();
        expiries += uk.ret_data[0];
        if (uk.type != KEVENT_POSIX_TIMER ||
            uk.id.raw[0] != (unsigned int) (intptr_t) timer ||
            uk.ptr != (uintptr_t) name ||
            uk.ret_flags != KEVENT_RET_DONE)
            bad = 1;
        printf("timer %u (%s): %u expir%s, overrun %u\n", uk.id.raw[0],
               uk.ptr == (uintptr_t) name ? name : "?", uk.ret_data[0],
               uk.ret_data[0] == 1 ? "y" : "ies", uk.ret_data[1]);
    }
    /*
     * The last report counted the expiries up to a moment inside its
     * call; clock readings on both sides of each call bracket the time
     * the timer ran, so that a preemption cannot fail the check.
     */
    printf("%u expiries in %lld to %lld ms\n", expiries,
           last_from - arm_by, last_by - arm_from);
    if (expiries > (last_by - arm_from) / PERIOD_MS + 1 ||
        expiries + 1 < (last_from - arm_by) / PERIOD_MS)
        bad = 1;

    /* The deletion is reported once, broken with -EBADF. */
    if (timer_delete(timer) == -1) {
        perror("timer_delete");
        exit(EXIT_FAILURE);
    }
    if (kevent_get_events(fd, 1, 1, &wait, &uk, 0) != 1 ||
        !(uk.ret_flags & KEVENT_RET_BROKEN) ||
        (int) uk.ret_data[1] != -EBADF) {
        fprintf(stderr, "timer_delete was not reported\n");
        bad = 1;
    } else {
        printf("timer %u deleted: broken, %s\n", uk.id.raw[0],
               strerror(-(int) uk.ret_data[1]));
    }
    close(fd);
    printf("%s\n", bad ? "unexpected results" : "all as expected");
    exit(bad ? EXIT_FAILURE : EXIT_SUCCESS);
}
