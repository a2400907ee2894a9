// SPDX-License-Identifier: GPL-2.0
/*
 * Readiness of an eventfd, a timerfd and an epoll instance through
 * KEVENT_POLL: one queue watches an eventfd that a thread writes to, a
 * periodic timerfd, and an epoll instance that holds a second eventfd.
 * It prints each event as it comes and exits with EXIT_SUCCESS once it
 * has seen NR events of each file, each reported with POLLIN in
 * ret_data[0] and its own user data.
 *
 * Illustrates kevent_poll(7).
 *
 * Build: cc -static -Wall -pthread -I include/uapi -o poll_fds examples/poll_fds.c
 * Usage: ./poll_fds [NR]
 */
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/kevent.h>
#include <linux/time_types.h>

enum { EVENTFD, TIMERFD, EPOLL, NFILES };
static const char *const name[NFILES] = { "eventfd", "timerfd", "epoll" };

static int kevent_ctl(int fd, unsigned int cmd, unsigned int num,
		      struct ukevent *arg)
{
	return syscall(__NR_kevent_ctl, fd, cmd, num, arg);
}

static int kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr,
			     const struct __kernel_timespec *timeout,
			     struct ukevent *buf, unsigned int flags)
{
	return syscall(__NR_kevent_get_events, fd, min_nr, max_nr, timeout,
		       buf, flags);
}

static int efd, inner_efd;

/* Writes to both eventfds every 20 ms. */
static void *writer(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	for (;;) {
		usleep(20000);
		if (write(efd, &one, sizeof(one)) != sizeof(one) ||
		    write(inner_efd, &one, sizeof(one)) != sizeof(one))
			return NULL;
	}
}

int main(int argc, char *argv[])
{
	struct itimerspec its = { { 0, 30000000 }, { 0, 30000000 } };
	struct __kernel_timespec timeout = { .tv_sec = 2 };
	struct epoll_event ee = { .events = EPOLLIN };
	struct ukevent uk[NFILES], ev[NFILES];
	int fd[NFILES], seen[NFILES] = { 0 };
	int kfd, rfd, i, n, nr = argc > 1 ? atoi(argv[1]) : 5;
	uint64_t count;
	pthread_t thr;

	efd = eventfd(0, EFD_NONBLOCK);
	inner_efd = eventfd(0, EFD_NONBLOCK);
	fd[EVENTFD] = efd;
	fd[TIMERFD] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	fd[EPOLL] = epoll_create1(0);
	kfd = syscall(__NR_kevent_init, NULL, 0, 0);
	if (efd < 0 || inner_efd < 0 || fd[TIMERFD] < 0 || fd[EPOLL] < 0 ||
	    kfd < 0 || epoll_ctl(fd[EPOLL], EPOLL_CTL_ADD, inner_efd, &ee) ||
	    timerfd_settime(fd[TIMERFD], 0, &its, NULL)) {
		perror("setup");
		exit(EXIT_FAILURE);
	}

	for (i = 0; i < NFILES; i++) {
		uk[i] = (struct ukevent){
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
	if (pthread_create(&thr, NULL, writer, NULL)) {
		perror("pthread_create");
		exit(EXIT_FAILURE);
	}

	while (seen[EVENTFD] < nr || seen[TIMERFD] < nr || seen[EPOLL] < nr) {
		n = kevent_get_events(kfd, 1, NFILES, &timeout, ev, 0);
		if (n <= 0) {
			perror(n ? "kevent_get_events" : "timed out");
			exit(EXIT_FAILURE);
		}
		for (i = 0; i < n; i++) {
			if (ev[i].ptr >= NFILES || ev[i].ret_data[0] != POLLIN) {
				fprintf(stderr, "unexpected event\n");
				exit(EXIT_FAILURE);
			}
			/* Edge triggered: drain, or no new edge comes. */
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
