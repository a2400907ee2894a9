// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_POLL: eventfd, timerfd, pipes, nested queues and epoll, file release (kevent_poll(7)).
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>

#include "tap.h"
#include "kevent_sys.h"

static void test_eventfd(void)
{
	int q = anchored_queue(), efd = eventfd(0, EFD_NONBLOCK);
	struct ukevent uk;
	uint64_t v = 3;

	is_int(add1(q, poll_ukevent(efd, KEVENT_POLL_POLLIN, 0, 1)), 0,
	       "eventfd: POLLIN registered while the counter is 0");
	is_int(harvest(q, &uk, 1), 0, "eventfd: not ready at 0");
	if (write(efd, &v, sizeof(v)) != sizeof(v))
		bail_out("eventfd write");
	is_int(wait1(q, &uk, 2000), 1, "eventfd: a write makes it ready");
	ok(uk.ret_flags == KEVENT_RET_DONE && uk.user[0] == 1,
	   "eventfd: reported with DONE and the user data");
	ok(uk.ret_data[0] == POLLIN, "eventfd: ret_data[0] is POLLIN (%#x)",
	   uk.ret_data[0]);
	is_int(wait1(q, &uk, 0), 1,
	       "eventfd: level triggered: reported again while readable");
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		bail_out("eventfd read");
	is_int(harvest(q, &uk, 1), 0,
	       "eventfd: dropped once the counter is read");
	close(efd);
	close(q);
}

static void test_timerfd(void)
{
	int q = anchored_queue();
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	struct itimerspec its = { .it_value = { 0, 30 * 1000000 } };
	struct ukevent uk;
	long long start;
	uint64_t n;

	setup_add(q, poll_ukevent(tfd, KEVENT_POLL_POLLIN, KEVENT_REQ_ONESHOT, 2));
	start = now_ns();
	must(!timerfd_settime(tfd, 0, &its, NULL), "timerfd_settime: %s",
	     strerror(errno));
	is_int(wait1(q, &uk, 3000), 1, "timerfd: reported when it expires");
	ok(ms_since(start) >= 25, "timerfd: not before 30 ms (%lld ms)",
	   ms_since(start));
	ok(read(tfd, &n, sizeof(n)) == sizeof(n) && n == 1,
	   "timerfd: one expiry to read");
	uk = poll_ukevent(tfd, KEVENT_POLL_POLLIN, 0, 2);
	is_int(ctl1(q, KEVENT_CTL_REMOVE, &uk), 1,
	       "timerfd: ONESHOT: REMOVE after delivery finds nothing");
	ok(uk.ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
	   (int)uk.ret_data[1] == -ENOENT, "timerfd: ... ENOENT");
	close(tfd);
	close(q);
}

/* An entry copied back by ADD as a per-entry error -err. */
#define BROKEN_WITH(err)						\
	UKEV(.ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE,		\
	     .ret_data = { 0, (__u32)-(err) })

static void test_errors(void)
{
	int q = anchored_queue(), fd, efd;
	struct ukevent uk;
	char path[] = "/tmp/kevent-poll-XXXXXX";

	uk = poll_ukevent(999, KEVENT_POLL_POLLIN, 0, 3);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 1, "a closed fd is copied back");
	is_ukevent(&uk, BROKEN_WITH(EBADF), UK_RET_FLAGS | UK_RET_DATA1,
		   "a closed fd: EBADF in the entry [kevent_poll.7 EBADF]");

	uk = poll_ukevent(q, KEVENT_POLL_POLLIN, 0, 3);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 1, "the queue itself is refused");
	is_ukevent(&uk, BROKEN_WITH(EINVAL), UK_RET_FLAGS | UK_RET_DATA1,
		   "the queue itself: EINVAL [kevent_poll.7 EINVAL self]");

	fd = mkstemp(path);
	unlink(path);
	uk = poll_ukevent(fd, KEVENT_POLL_POLLIN, 0, 3);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 1,
	       "a regular file, which has no poll method, is copied back");
	is_ukevent(&uk, BROKEN_WITH(EINVAL), UK_RET_FLAGS | UK_RET_DATA1,
		   "a regular file: EINVAL [kevent_poll.7 EINVAL no-poll] "
		   "[kevent_ctl.2 EINVAL type-check]");
	close(fd);

	efd = eventfd(0, EFD_NONBLOCK);
	must(add1(q, poll_ukevent(efd, KEVENT_POLL_POLLIN, 0, 3)) == 0,
	     "ADD of an eventfd: %s", strerror(errno));
	uk = poll_ukevent(efd, KEVENT_POLL_POLLOUT, 0, 3);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 1,
	       "the same fd and ptr again, other bits: copied back");
	is_ukevent(&uk, BROKEN_WITH(EEXIST), UK_RET_FLAGS | UK_RET_DATA1,
		   "the same fd and ptr again: EEXIST [kevent_poll.7 EEXIST]");
	close(efd);
	close(q);
}

static void test_pipe_hup(void)
{
	int q = anchored_queue(), p[2];
	struct ukevent uk;

	if (pipe(p))
		bail_out("pipe");
	setup_add(q, poll_ukevent(p[0], KEVENT_POLL_POLLIN, KEVENT_REQ_ET, 4));
	close(p[1]);
	is_int(wait1(q, &uk, 2000), 1,
	       "pipe: the writer's close wakes a POLLIN registration");
	ok(uk.ret_data[0] & POLLHUP,
	   "pipe: POLLHUP reported though not asked for (%#x)",
	   uk.ret_data[0]);
	close(p[0]);
	close(q);
}

/*
 * The registration holds no reference: closing the watched write end
 * releases it, so the reader sees end of file at once.
 */
static void test_no_pin(void)
{
	int q = anchored_queue(), p[2], i, broken = 0, n;
	struct ukevent uk[4];
	char c;

	if (pipe(p))
		bail_out("pipe");
	setup_add(q, poll_ukevent(p[1], KEVENT_POLL_POLLERR, 0, 5));
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	is_int(read(p[0], &c, 1), 0,
	       "a watched write end, closed, is released: the reader gets EOF");
	n = wait1(q, uk, 2000);
	for (i = 0; i < n; i++)
		if (uk[i].ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
		    (int)uk[i].ret_data[1] == -EBADF && uk[i].user[0] == 5)
			broken++;
	is_int(broken, 1, "the released file's registration is reported "
	       "BROKEN with -EBADF [KEVENT_RET_BROKEN.2const]");
	is_int(harvest(q, uk, 4), 0, "it is reported once");
	uk[0] = poll_ukevent(p[1], KEVENT_POLL_POLLERR, 0, 5);
	is_int(ctl1(q, KEVENT_CTL_REMOVE, uk), 1,
	       "and removed: REMOVE finds nothing");
	ok((int)uk[0].ret_data[1] == -ENOENT, "... ENOENT");
	close(p[0]);
	close(q);
}

/* An fd number reused by a new file gets no event of the old one. */
static void test_reused_fd(void)
{
	int q = anchored_queue(), p[2], fd, efd;
	struct ukevent uk[4];
	uint64_t one = 1;

	if (pipe(p))
		bail_out("pipe");
	fd = p[0];
	setup_add(q, poll_ukevent(fd, KEVENT_POLL_POLLIN, 0, 6));
	close(p[0]);
	close(p[1]);
	is_int(harvest(q, uk, 4), 1, "closed pipe: one BROKEN report");
	efd = eventfd(0, 0);
	if (efd != fd)
		efd = dup2(efd, fd);
	is_int(efd, fd, "the number is reused by an eventfd");
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		bail_out("write");
	is_int(harvest(q, uk, 4), 0, "the eventfd's readiness is not "
	       "reported for the old registration");
	uk[0] = poll_ukevent(fd, KEVENT_POLL_POLLIN, 0, 6);
	is_int(ctl1(q, KEVENT_CTL_ADD, uk), 1,
	       "a new registration of the number is ready at once");
	ok(uk[0].ret_flags == KEVENT_RET_DONE && uk[0].ret_data[0] == POLLIN,
	   "... copied back with DONE and POLLIN");
	close(efd);
	close(q);
}

static void test_two_queues(void)
{
	int q1 = anchored_queue(), q2 = anchored_queue(), efd = eventfd(0, 0);
	struct ukevent uk;
	uint64_t one = 1;

	setup_add(q1, poll_ukevent(efd, KEVENT_POLL_POLLIN, KEVENT_REQ_ET, 7));
	setup_add(q2, poll_ukevent(efd, KEVENT_POLL_POLLIN, KEVENT_REQ_ET, 8));
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		bail_out("write");
	is_int(wait1(q1, &uk, 2000), 1, "two queues: the first is notified");
	is_int(uk.user[0], 7, "two queues: with its own registration");
	is_int(wait1(q2, &uk, 2000), 1, "two queues: the second too");
	is_int(uk.user[0], 8, "two queues: with its own registration");
	close(efd);
	close(q1);
	close(q2);
}

/* A queue watched by another queue through KEVENT_POLL. */
static void test_nested_queue(void)
{
	int outer = anchored_queue(), inner = anchored_queue();
	struct ukevent uk;

	setup_add(outer, poll_ukevent(inner, KEVENT_POLL_POLLIN, 0, 9));
	is_int(harvest(outer, &uk, 1), 0, "nested: inner queue empty");
	setup_add(inner, timer_ms(20, KEVENT_REQ_ONESHOT, 10));
	is_int(wait1(outer, &uk, 2000), 1,
	       "nested: the inner queue's timer makes the outer one ready");
	ok(uk.user[0] == 9 && (uk.ret_data[0] & POLLIN),
	   "nested: reported as POLLIN of the inner queue");
	is_int(wait1(inner, &uk, 0), 1, "nested: the inner event is still "
	       "there to take");
	is_int(harvest(outer, &uk, 1), 0,
	       "nested: once taken, the outer registration is dropped");
	close(inner);
	close(outer);
}

/* kevent in epoll, and epoll in kevent, even in a cycle. */
static void test_epoll(void)
{
	int q = anchored_queue(), ep = epoll_create1(0), efd = eventfd(0, 0);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct ukevent uk;
	uint64_t one = 1;

	ev.data.fd = q;
	is_int(epoll_ctl(ep, EPOLL_CTL_ADD, q, &ev), 0,
	       "epoll: a kevent queue can be added to epoll");
	is_int(epoll_wait(ep, &out, 1, 0), 0, "epoll: queue not ready yet");
	setup_add(q, timer_ms(20, KEVENT_REQ_ONESHOT, 11));
	is_int(epoll_wait(ep, &out, 1, 2000), 1,
	       "epoll: the queue's timer makes epoll ready");

	ev.data.fd = efd;
	must(!epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), "epoll_ctl: %s",
	     strerror(errno));
	uk = poll_ukevent(ep, KEVENT_POLL_POLLIN, KEVENT_REQ_ET, 12);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 1,
	       "epoll in kevent, in a cycle: ready at once, copied back");
	is_int(add1(q, poll_ukevent(ep, KEVENT_POLL_POLLIN,
				    KEVENT_REQ_ET | KEVENT_REQ_ALWAYS_QUEUE,
				    12)), 0,
	       "epoll in kevent, in a cycle: kept with ALWAYS_QUEUE");
	while (harvest(q, &uk, 1) > 0)
		;
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		bail_out("write");
	is_int(wait1(q, &uk, 2000), 1,
	       "epoll in kevent: an eventfd in epoll reaches the queue");
	is_int(uk.user[0], 12, "epoll in kevent: as the epoll registration");
	close(efd);
	close(ep);
	close(q);
}

/*
 * MODIFY changes the bits, both ways: a write end with room never has
 * POLLIN, and always has POLLOUT.  READY forces a report.
 */
static void test_modify_ready(void)
{
	int q = anchored_queue(), p[2];
	struct ukevent uk;

	if (pipe(p))
		bail_out("pipe");
	is_int(add1(q, poll_ukevent(p[1], KEVENT_POLL_POLLIN, 0, 13)), 0,
	       "POLLIN on a write end: registered, not ready");
	is_int(harvest(q, &uk, 1), 0, "POLLIN on a write end: nothing to report");
	uk = poll_ukevent(p[1], KEVENT_POLL_POLLOUT, 0, 13);
	is_int(ctl1(q, KEVENT_CTL_MODIFY, &uk), 1, "MODIFY to POLLOUT returns num");
	is_int(uk.ret_flags, KEVENT_RET_DONE, "MODIFY: the entry has DONE");
	is_int(harvest(q, &uk, 1), 1,
	       "MODIFY to POLLOUT: the write end with room is ready at once");
	ok(uk.user[0] == 13 && uk.ret_flags == KEVENT_RET_DONE &&
	   (uk.ret_data[0] & POLLOUT) && !(uk.ret_data[0] & POLLIN),
	   "MODIFY to POLLOUT: reported with POLLOUT (%#x)", uk.ret_data[0]);
	uk = poll_ukevent(p[1], KEVENT_POLL_POLLIN, 0, 13);
	is_int(ctl1(q, KEVENT_CTL_MODIFY, &uk), 1,
	       "MODIFY back to POLLIN returns num");
	is_int(harvest(q, &uk, 1), 0,
	       "MODIFY back to POLLIN: level requeue dropped, nothing reported");

	uk = poll_ukevent(p[1], KEVENT_POLL_POLLOUT, 0, 14);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 1,
	       "ADD: a write end with room is ready at once, copied back");
	ok(uk.ret_flags == KEVENT_RET_DONE && uk.ret_data[0] == POLLOUT,
	   "ADD: ... with DONE and POLLOUT in ret_data[0]");
	uk = poll_ukevent(p[1], KEVENT_POLL_POLLIN, 0, 13);
	is_int(ctl1(q, KEVENT_CTL_READY, &uk), 0, "READY of the POLLIN one");
	is_int(harvest(q, &uk, 1), 1,
	       "READY: reported though a write end is never readable");
	close(p[0]);
	close(p[1]);
	close(q);
}

int main(void)
{
	plan(60);
	kevent_require();
	tap_watchdog(18);
	test_eventfd();
	test_timerfd();
	test_errors();
	test_pipe_hup();
	test_no_pin();
	test_reused_fd();
	test_two_queues();
	test_nested_queue();
	test_epoll();
	test_modify_ready();
	return tap_done();
}
