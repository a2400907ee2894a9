/* SPDX-License-Identifier: MIT */
/* idle_wait.c: the cost of a wait that finds nothing, as libuv's loop
 * makes one per iteration when an idle handle keeps it from blocking.
 * One idle pipe watched level-triggered; N zero-timeout waits on an
 * epoll set, then on a kevent queue (kevent_get_events(), min_nr 1 as
 * libuv's backend asks, then min_nr 0).  Prints nanoseconds per call.
 *   idle_wait N
 * Build: cc -static -O2 -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *            -o idle_wait testsuite/peers/repro/idle_wait.c */
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <kevent.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000, i, ep, kq, p[2], round;
	struct epoll_event ee = { .events = EPOLLIN }, eo[64];
	struct ukevent uk = { 0 }, ev[64];
	struct __kernel_timespec zero = { 0, 0 };
	double t0;

	if (kevent_probe(NULL) || pipe(p) || (ep = epoll_create1(0)) < 0 ||
	    (kq = kevent_init(NULL, 0, 0)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ee))
		return 1;
	uk.id.raw[0] = p[0];
	uk.type = KEVENT_POLL;
	uk.event = KEVENT_POLL_POLLIN;
	uk.req_flags = KEVENT_REQ_ALWAYS_QUEUE;
	if (kevent_ctl(kq, KEVENT_CTL_ADD, 1, &uk) != 0)
		return 1;
	for (round = 0; round < 3; round++) {
		t0 = now();
		for (i = 0; i < n; i++)
			if (epoll_wait(ep, eo, 64, 0) != 0)
				return 1;
		printf("epoll_wait(timeout 0):                 %6.0f ns\n", (now() - t0) / n);
		t0 = now();
		for (i = 0; i < n; i++)
			if (kevent_get_events(kq, 1, 64, &zero, ev, 0) != 0)
				return 1;
		printf("kevent_get_events(min 1, {0, 0}):      %6.0f ns\n", (now() - t0) / n);
		t0 = now();
		for (i = 0; i < n; i++)
			if (kevent_get_events(kq, 0, 64, NULL, ev, 0) != 0)
				return 1;
		printf("kevent_get_events(min 0, NULL):        %6.0f ns\n", (now() - t0) / n);
		t0 = now();
		for (i = 0; i < n; i++)
			if (getppid() < 0)
				return 1;
		printf("getppid() (a null system call):        %6.0f ns\n", (now() - t0) / n);
	}
	return 0;
}
