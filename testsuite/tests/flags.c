// SPDX-License-Identifier: GPL-2.0
/*
 * Description: request flags (KEVENT_REQ_*) and the timer source rules.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "../lib/tap.h"
#include "../lib/kevent_sys.h"

#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)


/* REMOVE of uk: 1 if it was registered, 0 if ENOENT, -1 otherwise. */
static int remove_found(int fd, struct ukevent uk)
{
	if (ctl1(fd, KEVENT_CTL_REMOVE, &uk) != 1)
		return -1;
	if (uk.ret_flags == KEVENT_RET_DONE)
		return 1;
	if (uk.ret_flags == BROKEN_DONE && uk.ret_data[1] == (__u32)-ENOENT)
		return 0;
	return -1;
}

static void test_oneshot(void)
{
	int fd = anchored_queue(), n;
	struct ukevent buf[4];
	long long start = now_ns();

	setup_add(fd, timer_ms(20, KEVENT_REQ_ONESHOT, 1));
	n = sys_kevent_get_events(fd, 1, 4, TSP(2, 0), buf, 0);
	is_int(n, 1, "a ONESHOT 20 ms timer is delivered "
	       "[KEVENT_REQ_ONESHOT.2const]");
	ok(ms_since(start) >= 19, "not before its period (%lld ms)",
	   ms_since(start));
	is_event(n, buf, UKEV(.type = KEVENT_TIMER, .id.raw = { 0, 20000000 },
			      .event = KEVENT_TIMER_FIRED,
			      .req_flags = KEVENT_REQ_ONESHOT, .ptr = 1),
		 UK_KEY | UK_EVENT | UK_REQ_FLAGS,
		 "the event carries the request's type, id, event, flags, ptr");
	is_int(buf[0].ret_flags, KEVENT_RET_DONE, "the event has DONE only "
	       "[KEVENT_RET_DONE.2const]");
	is_int(buf[0].ret_data[1], 1, "ret_data[1]: one expiry");
	is_int(sys_kevent_get_events(fd, 1, 4, TSP(0, 100000000), buf, 0), 0,
	       "ONESHOT: nothing more within 100 ms [KEVENT_REQ_ONESHOT.2const]");
	is_int(remove_found(fd, timer_ms(20, KEVENT_REQ_ONESHOT, 1)), 0,
	       "ONESHOT: removed after delivery (REMOVE gives ENOENT) "
	       "[KEVENT_REQ_ONESHOT.2const] [kevent_ctl.2 ENOENT]");
	close(fd);
}

static void test_periodic(void)
{
	int fd = anchored_queue(), n, i, good = 1;
	struct ukevent buf[4];
	long long start = now_ns(), prev;
	__u32 now;

	setup_add(fd, timer_ms(20, 0, 2));
	for (i = 0; i < 3; i++) {
		/* The last report's expiries were counted after this. */
		prev = now_ns();
		n = sys_kevent_get_events(fd, 1, 4, TSP(2, 0), buf, 0);
		if (n != 1 || buf[0].ptr != 2 ||
		    buf[0].ret_flags != KEVENT_RET_DONE ||
		    buf[0].ret_data[1] < 1) {
			diag("delivery %d: n %d ptr %llu ret_flags %#x", i, n,
			     (unsigned long long)buf[0].ptr, buf[0].ret_flags);
			good = 0;
		}
	}
	ok(good, "a periodic timer is delivered repeatedly (3 times)");
	ok(ms_since(start) >= 59, "3 deliveries of a 20 ms timer take >= 60 ms (%lld)",
	   ms_since(start));

	msleep(110);
	n = sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0);
	now = mono_ms32();
	is_int(n, 1, "not harvested for 5 periods: one event, not five");
	if (n == 1) {
		long long max = ms_since(prev) / 20 + 1;

		ok(buf[0].ret_data[1] >= 4 && buf[0].ret_data[1] <= max,
		   "ret_data[1] counts the expiries since the last delivery (%u, want 4..%lld)",
		   buf[0].ret_data[1], max);
		ok(now - buf[0].ret_data[0] < 1000,
		   "ret_data[0] is CLOCK_MONOTONIC ms of the latest expiry (%u vs now %u)",
		   buf[0].ret_data[0], now);
	} else {
		skip(2, "no event");
	}
	is_int(remove_found(fd, timer_ms(20, 0, 2)), 1,
	       "a periodic timer stays registered after delivery");
	close(fd);
}

static void test_min_period(void)
{
	int fd = anchored_queue(), n;
	struct ukevent buf[2];
	long long start = now_ns(), us;

	setup_add(fd, timer_ukevent(0, 1, 0, 3));	/* 1 ns period */
	msleep(50);
	n = sys_kevent_get_events(fd, 1, 2, TSP(2, 0), buf, 0);
	us = (now_ns() - start) / 1000;
	is_int(n, 1, "a 1 ns periodic timer is delivered");
	ok(n == 1 && buf[0].ret_data[1] >= 1 &&
	   buf[0].ret_data[1] <= us / 100 + 2,
	   "its period is raised to 100 us (%u expiries in %lld us)",
	   buf[0].ret_data[1], us);
	close(fd);
}

static void test_timer_einval(void)
{
	static const struct {
		__u32 sec, nsec, event, req_flags;
		const char *what, *tag;
	} t[] = {
		{ 0, 1000000000U, KEVENT_TIMER_FIRED, 0, "nsec 1000000000",
		  "nsec" },
		{ 1, 0xffffffffU, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT,
		  "nsec 0xffffffff", "nsec" },
		{ 0, 0, KEVENT_TIMER_FIRED, 0, "zero period without ONESHOT",
		  "zero-period" },
		{ 0, 0, KEVENT_TIMER_FIRED, KEVENT_REQ_ET,
		  "zero period with ET only", "zero-period" },
		{ 0, 20000000, 0, 0, "event 0 (no TIMER_FIRED)", "event" },
		{ 0, 20000000, 1U << 1, 0, "event 0x2 (no TIMER_FIRED)",
		  "event" },
	};
	struct ukevent uk, buf[2];
	unsigned int i;
	int fd = anchored_queue();

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uk = timer_ukevent(t[i].sec, t[i].nsec, t[i].req_flags, 10 + i);
		uk.event = t[i].event;
		is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 1,
		       "timer with %s: ADD copies the entry back", t[i].what);
		is_ukevent(&uk, UKEV(.ret_flags = BROKEN_DONE,
				     .ret_data = { 0, (__u32)-EINVAL }),
			   UK_RET_FLAGS | UK_RET_DATA1,
			   "timer with %s: EINVAL [kevent_timer.7 EINVAL %s] "
			   "[kevent_ctl.2 EINVAL type-check]", t[i].what,
			   t[i].tag);
	}
	is_int(sys_kevent_get_events(fd, 0, 2, TSP(0, 50000000), buf, 0), 0,
	       "rejected timers deliver nothing");
	uk = timer_ukevent(0, 0, 0, 12);
	is_int(remove_found(fd, uk), 0, "a rejected timer is not registered");
	close(fd);
}

static void test_zero_oneshot(void)
{
	int fd = anchored_queue(), n, first, again;
	struct ukevent uk = timer_ukevent(0, 0, KEVENT_REQ_ONESHOT, 20);
	struct ukevent buf[4];
	long long start = now_ns();
	__u64 ptr;

	/* A timer is never ready at ADD, even one that expires at once. */
	n = ctl1(fd, KEVENT_CTL_ADD, &uk);
	is_int(n, 0, "a zero-period ONESHOT timer is registered, not copied "
	       "back [KEVENT_REQ_ALWAYS_QUEUE.2const]");
	first = sys_kevent_get_events(fd, 1, 4, TSP(1, 0), buf, 0);
	ptr = first == 1 ? buf[0].ptr : 0;
	again = sys_kevent_get_events(fd, 1, 4, TSP(0, 100000000), buf, 0);
	ok(first == 1 && ptr == 20 && again == 0,
	   "a zero-period ONESHOT timer fires at once, once (%d with ptr %llu, then %d)",
	   first, (unsigned long long)ptr, again);
	ok(ms_since(start) < 1000, "at once (%lld ms)", ms_since(start));

	uk = timer_ukevent(0, 0, KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE,
			   21);
	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 0,
	       "with ALWAYS_QUEUE a zero-period ONESHOT timer is not copied "
	       "back [KEVENT_REQ_ALWAYS_QUEUE.2const]");
	n = sys_kevent_get_events(fd, 1, 4, TSP(1, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 21 && buf[0].ret_flags == KEVENT_RET_DONE,
	   "and is delivered by kevent_get_events");
	close(fd);
}

static int make_pipe(int p[2])
{
	if (pipe(p))
		bail_out("pipe: %s", strerror(errno));
	return p[0];
}

static void test_level_vs_edge(void)
{
	int fd = anchored_queue(), p[2], n;
	struct ukevent buf[4];
	char c = 'x';

	/* Level triggered: re-delivered while the pipe stays readable. */
	make_pipe(p);
	is_int(add1(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0, 30)), 0,
	       "POLLIN on an empty pipe is registered");
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0), 0,
	       "an empty pipe is not ready");
	if (write(p[1], &c, 1) != 1)
		bail_out("write");
	n = sys_kevent_get_events(fd, 1, 4, TSP(1, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 30, "a write makes it ready");
	n = sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 30,
	   "level triggered: delivered again while still readable "
	   "[KEVENT_REQ_ET.2const]");
	if (read(p[0], &c, 1) != 1)
		bail_out("read");
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0), 0,
	       "level triggered: dropped once no longer readable");
	/* Remove before close: a closed pipe would report BROKEN. */
	must(remove_found(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0,
					   30)) == 1,
	     "REMOVE of the level-triggered pipe registration");
	close(p[0]);
	close(p[1]);

	/* Edge triggered: once per change. */
	make_pipe(p);
	setup_add(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN, KEVENT_REQ_ET, 31));
	if (write(p[1], &c, 1) != 1)
		bail_out("write");
	n = sys_kevent_get_events(fd, 1, 4, TSP(1, 0), buf, 0);
	is_event(n, buf, UKEV(.ptr = 31, .ret_flags = KEVENT_RET_DONE),
		 UK_PTR | UK_RET_FLAGS,
		 "ET: the first write is delivered [KEVENT_REQ_ET.2const]");
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 50000000), buf, 0), 0,
	       "ET: not delivered again while nothing changes "
	       "[KEVENT_REQ_ET.2const]");
	if (write(p[1], &c, 1) != 1)
		bail_out("write");
	n = sys_kevent_get_events(fd, 1, 4, TSP(1, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 31, "ET: a new write is delivered again "
	   "[KEVENT_REQ_ET.2const]");
	is_int(remove_found(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0, 31)),
	       1, "ET: the registration stays after delivery "
	       "[KEVENT_REQ_ET.2const]");
	close(p[0]);
	close(p[1]);

	/* ET on a periodic timer: every expiry is a new change. */
	setup_add(fd, timer_ms(20, KEVENT_REQ_ET, 32));
	n = sys_kevent_get_events(fd, 1, 4, TSP(2, 0), buf, 0);
	n += sys_kevent_get_events(fd, 1, 4, TSP(2, 0), buf + 1, 0);
	ok(n == 2 && buf[0].ptr == 32 && buf[1].ptr == 32,
	   "ET: a periodic timer is delivered at each expiry");
	close(fd);
}

static void test_last_check(void)
{
	int fd = anchored_queue(), p[2], n;
	struct ukevent buf[4];
	char c = 'x';

	make_pipe(p);
	setup_add(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN,
				   KEVENT_REQ_LAST_CHECK, 40));
	if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
		bail_out("write/read");
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0), 0,
	       "LAST_CHECK: ready but drained before harvest: not reported "
	       "[KEVENT_REQ_LAST_CHECK.2const]");
	if (write(p[1], &c, 1) != 1)
		bail_out("write");
	n = sys_kevent_get_events(fd, 1, 4, TSP(1, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 40,
	   "LAST_CHECK: went back to waiting, reported on the next write "
	   "[KEVENT_REQ_LAST_CHECK.2const]");
	must(remove_found(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0,
					   40)) == 1,
	     "REMOVE of the LAST_CHECK pipe registration");
	close(p[0]);
	close(p[1]);

	setup_add(fd, timer_ms(20, KEVENT_REQ_LAST_CHECK, 41));
	n = sys_kevent_get_events(fd, 1, 4, TSP(2, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 41 && buf[0].ret_data[1] >= 1,
	   "LAST_CHECK: an expired timer passes the recheck");
	close(fd);
}

static void test_always_queue(void)
{
	int fd = anchored_queue(), p[2], n;
	struct ukevent uk, buf[4];
	char c = 'x';

	make_pipe(p);
	if (write(p[1], &c, 1) != 1)
		bail_out("write");
	uk = poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0, 50);
	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 1,
	       "ready at ADD without ALWAYS_QUEUE: copied back "
	       "[KEVENT_REQ_ALWAYS_QUEUE.2const]");
	is_int(uk.ret_flags, KEVENT_RET_DONE,
	       "ready at ADD: the copied-back entry has DONE only");
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0), 0,
	       "ready at ADD: not queued");
	is_int(remove_found(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0, 50)),
	       0, "ready at ADD without ALWAYS_QUEUE: not kept");

	uk = poll_ukevent(p[0], KEVENT_POLL_POLLIN, KEVENT_REQ_ALWAYS_QUEUE,
			  51);
	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 0,
	       "ready at ADD with ALWAYS_QUEUE: not copied back "
	       "[KEVENT_REQ_ALWAYS_QUEUE.2const]");
	n = sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0);
	is_event(n, buf, UKEV(.ptr = 51, .ret_flags = KEVENT_RET_DONE),
		 UK_PTR | UK_RET_FLAGS,
		 "ALWAYS_QUEUE: queued ready and delivered "
		 "[KEVENT_REQ_ALWAYS_QUEUE.2const]");
	is_int(remove_found(fd, poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0, 51)),
	       1, "ALWAYS_QUEUE: the registration is kept");
	close(p[0]);
	close(p[1]);
	close(fd);
}

struct waiter {
	int fd;
	int entering;
	int done;
	pid_t tid;
	int ret;
	int err;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ukevent buf[4];

	w->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&w->entering, 1, __ATOMIC_SEQ_CST);
	w->ret = sys_kevent_get_events(w->fd, 1, 4, TSP(6, 0), buf, 0);
	w->err = errno;
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int ndone(struct waiter *w)
{
	return __atomic_load_n(&w[0].done, __ATOMIC_SEQ_CST) +
	       __atomic_load_n(&w[1].done, __ATOMIC_SEQ_CST);
}

/*
 * Two threads sleep in kevent_get_events (min_nr 1, 6 s timeout) and
 * are seen asleep before one ONESHOT timer is added.  Nothing else
 * wakes the queue, so within 1.5 s only the timer's wakeup can end a
 * wait: one thread without WAKEUP_ALL, both with it.
 */
static void wakeup_case(int all)
{
	struct waiter w[2];
	pthread_t th[2];
	long long start;
	int i, fd = anchored_queue(), asleep = 1;
	__u32 flags = KEVENT_REQ_ONESHOT | (all ? KEVENT_REQ_WAKEUP_ALL : 0);
	const char *tag = all ? "WAKEUP_ALL" : "no WAKEUP_ALL";

	memset(w, 0, sizeof(w));
	for (i = 0; i < 2; i++) {
		w[i].fd = fd;
		if (pthread_create(&th[i], NULL, waiter_main, &w[i]))
			bail_out("pthread_create");
	}
	for (i = 0; i < 2; i++) {
		while (!__atomic_load_n(&w[i].entering, __ATOMIC_SEQ_CST))
			msleep(1);
		asleep &= wait_sleeping(w[i].tid, 3000);
	}
	ok(asleep && !ndone(w), "%s: both threads asleep in the call", tag);

	start = now_ns();
	setup_add(fd, timer_ms(30, flags, 60));
	while (ndone(w) < (all ? 2 : 1) && ms_since(start) < 1500)
		msleep(5);
	if (!all)
		msleep(500);	/* give a wrong second wakeup time to show */
	if (all) {
		is_int(ndone(w), 2, "WAKEUP_ALL: one expiry wakes both threads "
		       "[KEVENT_REQ_WAKEUP_ALL.2const]");
	} else {
		is_int(ndone(w), 1, "no WAKEUP_ALL: one expiry wakes exactly "
		       "one thread [KEVENT_REQ_WAKEUP_ALL.2const]");
		ok(thread_state(w[0].done ? w[1].tid : w[0].tid) == 'S',
		   "no WAKEUP_ALL: the other thread still sleeps "
		   "[KEVENT_REQ_WAKEUP_ALL.2const]");
	}
	sys_kevent_ctl(fd, KEVENT_CTL_READY, 0, NULL);	/* release the rest */
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ok((w[0].ret == 1 && w[1].ret == 0) || (w[0].ret == 0 && w[1].ret == 1),
	   "%s: the single event went to exactly one thread (%d, %d)", tag,
	   w[0].ret, w[1].ret);
	close(fd);
}

int main(void)
{
	plan(61);
	tap_watchdog(18);
	kevent_require();
	test_oneshot();
	test_periodic();
	test_min_period();
	test_timer_einval();
	test_zero_oneshot();
	test_level_vs_edge();
	test_last_check();
	test_always_queue();
	wakeup_case(0);
	wakeup_case(1);
	return tap_done();
}
