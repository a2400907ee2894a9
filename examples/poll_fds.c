/* SPDX-License-Identifier: MIT */
/*
 * poll_fds.c: readiness of an eventfd, a timerfd and an epoll instance
 * through KEVENT_POLL.
 *
 * One queue watches, edge-triggered, an eventfd that a thread writes
 * to, a periodic timerfd, and an epoll instance that holds a second
 * eventfd.  The program prints each event as it comes, and exits with
 * EXIT_SUCCESS once it has seen NR events of each file (default 5),
 * each reported with POLLIN in ret_data[0] and its own caller's data.
 *
 * Illustrates kevent_poll(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -pthread -Iinclude -Iinclude/uapi \
 *         -o poll_fds examples/poll_fds.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -pthread -o poll_fds poll_fds.c
 * Usage: ./poll_fds [NR]
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <kevent.h>

enum { EVENTFD, TIMERFD, EPOLL, NFILES };
static const char *const name[NFILES] = {
    "eventfd", "timerfd", "epoll"
};

static int efd, inner_efd;

/* Write to both eventfds every 20 ms. */
static void *
writer(void *arg)
{
    uint64_t one = 1;

    (void) arg;
    for (;;) {
        usleep(20000);
        if (write(efd, &one, sizeof(one)) != sizeof(one) ||
            write(inner_efd, &one, sizeof(one)) != sizeof(one))
            return NULL;
    }
}

int
main(int argc, char *argv[])
{
    int kfd, rfd, i, n, nr = argc > 1 ? atoi(argv[1]) : 5;
    int fd[NFILES], seen[NFILES] = { 0 };
    uint64_t count;
    pthread_t thr;
    struct itimerspec its = { { 0, 30000000 }, { 0, 30000000 } };
    struct epoll_event ee = { .events = EPOLLIN };
    struct __kernel_timespec timeout = { .tv_sec = 2 };
    struct ukevent uk[NFILES], ev[NFILES];

    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    kfd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
    efd = eventfd(0, EFD_NONBLOCK);
    inner_efd = eventfd(0, EFD_NONBLOCK);
    fd[EVENTFD] = efd;
    fd[TIMERFD] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    fd[EPOLL] = epoll_create1(0);
    if (kfd == -1 || efd == -1 || inner_efd == -1 ||
        fd[TIMERFD] == -1 || fd[EPOLL] == -1 ||
        epoll_ctl(fd[EPOLL], EPOLL_CTL_ADD, inner_efd, &ee) == -1 ||
        timerfd_settime(fd[TIMERFD], 0, &its, NULL) == -1) {
        perror("setup");
        exit(EXIT_FAILURE);
    }

    for (i = 0; i < NFILES; i++) {
        uk[i] = (struct ukevent) {
            .id.raw = { fd[i], 0 },
            .type = KEVENT_POLL,
            .event = KEVENT_POLL_POLLIN,
            .req_flags = KEVENT_REQ_ET,
            .ptr = i,
        };
    }
    if (kevent_ctl(kfd, KEVENT_CTL_ADD, NFILES, uk) != 0) {
        fprintf(stderr, "kevent_ctl: an entry failed or was ready\n");
        exit(EXIT_FAILURE);
    }
    if (pthread_create(&thr, NULL, writer, NULL) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        exit(EXIT_FAILURE);
    }

    while (seen[EVENTFD] < nr || seen[TIMERFD] < nr ||
           seen[EPOLL] < nr) {
        n = kevent_get_events(kfd, 1, NFILES, &timeout, ev, 0);
        if (n == -1) {
            perror("kevent_get_events");
            exit(EXIT_FAILURE);
        }
        if (n == 0) {
            fprintf(stderr, "kevent_get_events: no event in 2 s\n");
            exit(EXIT_FAILURE);
        }
        for (i = 0; i < n; i++) {
            if (ev[i].ptr >= NFILES || ev[i].ret_data[0] != POLLIN) {
                fprintf(stderr, "unexpected event\n");
                exit(EXIT_FAILURE);
            }
            /* Edge-triggered: drain, or no new edge comes. */
            rfd = ev[i].ptr == EPOLL ? inner_efd : fd[ev[i].ptr];
            if (read(rfd, &count, sizeof(count)) != sizeof(count)) {
                perror("read");
                exit(EXIT_FAILURE);
            }
            printf("%-7s ready, revents %#x\n", name[ev[i].ptr],
                   ev[i].ret_data[0]);
            seen[ev[i].ptr]++;
        }
    }
    printf("%d events of each file\n", nr);
    exit(EXIT_SUCCESS);
}
