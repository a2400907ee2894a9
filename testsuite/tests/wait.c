// SPDX-License-Identifier: GPL-2.0
/*
 * Description: kevent_get_events(2) timeouts, signals, min/max_nr, poll.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/time.h>

#include "../lib/tap.h"
#include "../lib/kevent_sys.h"


static int new_ring_queue(struct kevent_ring **ringp, unsigned int size)
{
	struct kevent_ring *ring = ring_alloc(size, NULL);
	int fd;

	if (!ring)
		bail_out("mmap");
	fd = sys_kevent_init(ring, size, 0);
	if (fd < 0)
		bail_out("kevent_init(ring): %s", strerror(errno));
	*ringp = ring;
	return fd;
}

static void test_null_timeout(void)
{
	int fd = new_queue(0), n;
	struct ukevent buf[4];
	long long start = now_ns();

	setup_add(fd, timer_ms(50, KEVENT_REQ_ONESHOT, 1));
	n = sys_kevent_get_events(fd, 1, 4, NULL, buf, 0);
	ok(n == 1 && buf[0].ptr == 1,
	   "NULL timeout: blocks until the 50 ms timer fires and returns it");
	ok(ms_since(start) >= 49, "NULL timeout: not before the timer (%lld ms)",
	   ms_since(start));
	close(fd);
}

static void test_relative(void)
{
	int fd = new_queue(0);
	struct ukevent buf[4];
	long long start, ms;

	setup_add(fd, timer_ms(10000, 0, 1));
	start = now_ns();
	is_int(sys_kevent_get_events(fd, 1, 4, TSP(0, 0), buf, 0), 0,
	       "{0, 0}: returns 0 when nothing is ready");
	ok(ms_since(start) < 500, "{0, 0}: does not block (%lld ms)",
	   ms_since(start));

	start = now_ns();
	is_int(sys_kevent_get_events(fd, 1, 4, TSP(0, 100000000), buf, 0), 0,
	       "100 ms relative timeout: returns 0");
	ms = ms_since(start);
	ok(ms >= 99 && ms < 3000, "100 ms relative timeout: waits about 100 ms (%lld)",
	   ms);

	start = now_ns();
	is_int(sys_kevent_get_events(fd, 0, 4, NULL, buf, 0), 0,
	       "min_nr 0 with NULL timeout: returns 0");
	ok(ms_since(start) < 500, "min_nr 0 never sleeps (%lld ms)",
	   ms_since(start));
	close(fd);
}

static void test_abstime(void)
{
	int fd = new_queue(0);
	struct ukevent buf[4];
	struct __kernel_timespec t;
	long long start, deadline, late;

	setup_add(fd, timer_ms(10000, 0, 1));
	t = realtime_in(100);
	deadline = t.tv_sec * 1000000000LL + t.tv_nsec;
	is_int(sys_kevent_get_events(fd, 1, 4, &t, buf, KEVENT_FLAGS_ABSTIME),
	       0, "ABSTIME 100 ms in the future: returns 0 "
	       "[KEVENT_FLAGS_ABSTIME.2const]");
	/* Against the deadline: a delay before the call only shortens the wait. */
	late = realtime_ns() - deadline;
	ok(late >= 0 && late < 3000000000LL, "ABSTIME in the future: waits "
	   "until then (returned %lld us after it) [KEVENT_FLAGS_ABSTIME.2const]",
	   late / 1000);

	t = realtime_in(-1000);
	start = now_ns();
	is_int(sys_kevent_get_events(fd, 1, 4, &t, buf, KEVENT_FLAGS_ABSTIME),
	       0, "ABSTIME in the past: returns 0 [KEVENT_FLAGS_ABSTIME.2const]");
	ok(ms_since(start) < 500, "ABSTIME in the past: does not block "
	   "(%lld ms) [KEVENT_FLAGS_ABSTIME.2const]", ms_since(start));

	start = now_ns();
	is_int(sys_kevent_get_events(fd, 1, 4, TSP(0, 0), buf,
				     KEVENT_FLAGS_ABSTIME), 0,
	       "ABSTIME {0, 0} (1970): returns 0 [KEVENT_FLAGS_ABSTIME.2const]");
	ok(ms_since(start) < 500, "ABSTIME {0, 0}: does not block (%lld ms) "
	   "[KEVENT_FLAGS_ABSTIME.2const]", ms_since(start));

	/* 1 s relative would be the wrong reading: must still be at once. */
	start = now_ns();
	is_int(sys_kevent_get_events(fd, 1, 4, TSP(1, 0), buf,
				     KEVENT_FLAGS_ABSTIME), 0,
	       "ABSTIME {1, 0} (1970): returns 0 [KEVENT_FLAGS_ABSTIME.2const]");
	ok(ms_since(start) < 500, "ABSTIME {1, 0} is 1970, not 1 s from now "
	   "(%lld ms) [KEVENT_FLAGS_ABSTIME.2const]", ms_since(start));
	close(fd);
}

static void test_timeout_errors(void)
{
	static const struct { long long sec, nsec; const char *what; } t[] = {
		{ 0, 1000000000LL, "tv_nsec 1000000000" },
		{ 0, -1, "tv_nsec -1" },
		{ -1, 0, "tv_sec -1" },
		{ -1, 999999999, "tv_sec -1, tv_nsec 999999999" },
	};
	struct kevent_ring *ring;
	int fd = new_queue(0), rfd = new_ring_queue(&ring, 4);
	struct ukevent buf[4];
	/* tv_sec readable, tv_nsec on the unmapped page after it. */
	__s64 *half_sec = mapped_before_hole(sizeof(*half_sec));
	const struct { const void *ts; const char *what; } bad[] = {
		{ unmapped_page(), "unmapped" },
		{ half_sec, "half-mapped" },
	};
	unsigned int i;

	*half_sec = 0;
	setup_add(fd, timer_ms(10000, 0, 1));
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		is_err(sys_kevent_get_events(fd, 1, 4, TSP(t[i].sec, t[i].nsec),
					     buf, 0), EINVAL,
		       "kevent_get_events: timeout %s is EINVAL "
		       "[kevent_get_events.2 EINVAL timeout-range]", t[i].what);
		is_err(sys_kevent_wait(rfd, 1, 0, TSP(t[i].sec, t[i].nsec), 0),
		       EINVAL, "kevent_wait: timeout %s is EINVAL "
		       "[kevent_wait.2 EINVAL timeout-range]", t[i].what);
	}
	is_err(sys_kevent_get_events(fd, 1, 4, TSP(0, 1000000000LL), buf,
				     KEVENT_FLAGS_ABSTIME), EINVAL,
	       "kevent_get_events: ABSTIME with tv_nsec 1e9 is EINVAL "
	       "[kevent_get_events.2 EINVAL timeout-range] "
	       "[KEVENT_FLAGS_ABSTIME.2const EINVAL timeout-range]");
	is_err(sys_kevent_get_events(fd, 1, 4, TSP(0, 0), buf, 1U << 1),
	       EINVAL, "kevent_get_events: flag 0x2 is EINVAL "
	       "[kevent_get_events.2 EINVAL flags] "
	       "[KEVENT_FLAGS_ABSTIME.2const EINVAL flags]");
	is_err(sys_kevent_get_events(fd, 1, 4, TSP(0, 0), buf, 1U << 31),
	       EINVAL, "kevent_get_events: flag 0x80000000 is EINVAL "
	       "[kevent_get_events.2 EINVAL flags]");
	is_err(sys_kevent_wait(rfd, 1, 0, TSP(0, 0), 1U << 1), EINVAL,
	       "kevent_wait: flag 0x2 is EINVAL [kevent_wait.2 EINVAL flags] "
	       "[KEVENT_FLAGS_ABSTIME.2const EINVAL flags]");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		is_err(sys_kevent_get_events(fd, 1, 4, bad[i].ts, buf, 0),
		       EFAULT, "kevent_get_events: %s timeout is EFAULT "
		       "[kevent_get_events.2 EFAULT timeout-read]", bad[i].what);
		is_err(sys_kevent_wait(rfd, 1, 0, bad[i].ts, 0), EFAULT,
		       "kevent_wait: %s timeout is EFAULT "
		       "[kevent_wait.2 EFAULT timeout-read]", bad[i].what);
	}
	/*
	 * The upper half of tv_nsec: padding for a 32-bit caller, part of
	 * an invalid value for a 64-bit one.
	 */
	if (sizeof(long) == 4)
		is_int(sys_kevent_get_events(fd, 0, 4,
					     TSP(0, 0xdead00000000LL), buf, 0),
		       0, "kevent_get_events: a 32-bit caller's tv_nsec is "
		       "its low 32 bits [kevent_get_events.2 timeout-compat]");
	else
		is_err(sys_kevent_get_events(fd, 0, 4,
					     TSP(0, 0xdead00000000LL), buf, 0),
		       EINVAL, "kevent_get_events: a 64-bit caller's tv_nsec "
		       "is 64 bits [kevent_get_events.2 timeout-compat]");
	close(fd);
	close(rfd);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void arm_alarm(int restart)
{
	struct sigaction sa;
	struct itimerval it = { .it_value = { .tv_sec = 0, .tv_usec = 50000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void test_eintr(void)
{
	struct kevent_ring *ring;
	int fd = new_queue(0), rfd = new_ring_queue(&ring, 4);
	struct ukevent buf[4];
	long long start;

	setup_add(fd, timer_ms(10000, 0, 1));
	setup_add(rfd, timer_ms(10000, 0, 1));

	alarms = 0;
	/* Before the alarm is set: a preemption in between adds, never cuts. */
	start = now_ns();
	arm_alarm(0);
	is_err(sys_kevent_get_events(fd, 1, 4, NULL, buf, 0), EINTR,
	       "a signal ends kevent_get_events (NULL timeout) with EINTR "
	       "[kevent_get_events.2 EINTR]");
	ok(alarms == 1 && ms_since(start) >= 45,
	   "the handler ran, after the 50 ms alarm (%lld ms)", ms_since(start));

	arm_alarm(0);
	is_err(sys_kevent_get_events(fd, 1, 4, TSP(5, 0), buf, 0), EINTR,
	       "a signal ends kevent_get_events (5 s timeout) with EINTR "
	       "[kevent_get_events.2 EINTR]");

	start = now_ns();
	arm_alarm(1);
	is_err(sys_kevent_get_events(fd, 1, 4, TSP(5, 0), buf, 0), EINTR,
	       "with SA_RESTART too: never restarted, EINTR "
	       "[kevent_get_events.2 EINTR]");
	ok(ms_since(start) < 3000, "SA_RESTART: returned at the signal (%lld ms)",
	   ms_since(start));

	arm_alarm(0);
	is_err(sys_kevent_wait(rfd, 1, 0, NULL, 0), EINTR,
	       "a signal ends kevent_wait (NULL timeout) with EINTR "
	       "[kevent_wait.2 EINTR]");
	arm_alarm(0);
	is_err(sys_kevent_wait(rfd, 0, 0, TSP(5, 0), 0), EINTR,
	       "a signal ends kevent_wait with num 0 with EINTR "
	       "[kevent_wait.2 EINTR]");
	arm_alarm(1);
	is_err(sys_kevent_wait(rfd, 1, 0, TSP(5, 0), 0), EINTR,
	       "kevent_wait with SA_RESTART too: never restarted, EINTR "
	       "[kevent_wait.2 EINTR]");
	signal(SIGALRM, SIG_IGN);
	close(fd);
	close(rfd);
	munmap(ring, 4096);
}

static void test_nonblock(void)
{
	struct kevent_ring *ring;
	int fd = new_queue(0), rfd = new_ring_queue(&ring, 4), n;
	struct ukevent buf[4];
	long long start;

	setup_add(fd, timer_ms(10000, 0, 1));
	setup_add(rfd, timer_ms(10000, 0, 1));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) | O_NONBLOCK);

	start = now_ns();
	is_int(sys_kevent_get_events(fd, 1, 4, NULL, buf, 0), 0,
	       "O_NONBLOCK: kevent_get_events with NULL timeout returns 0");
	ok(ms_since(start) < 500, "O_NONBLOCK: kevent_get_events does not sleep");
	start = now_ns();
	is_int(sys_kevent_wait(rfd, 1, 0, NULL, 0), 0,
	       "O_NONBLOCK: kevent_wait with NULL timeout returns 0");
	ok(ms_since(start) < 500, "O_NONBLOCK: kevent_wait does not sleep");

	setup_add(fd, timer_ms(10, KEVENT_REQ_ONESHOT, 2));
	msleep(50);
	n = sys_kevent_get_events(fd, 1, 4, NULL, buf, 0);
	ok(n == 1 && buf[0].ptr == 2, "O_NONBLOCK: a ready event is returned");
	close(fd);
	close(rfd);
	munmap(ring, 4096);

	fd = sys_kevent_init(NULL, 0, KEVENT_INIT_NONBLOCK);
	start = now_ns();
	is_int(sys_kevent_get_events(fd, 1, 4, NULL, buf, 0), 0,
	       "KEVENT_INIT_NONBLOCK: NULL timeout returns 0");
	ok(ms_since(start) < 500, "KEVENT_INIT_NONBLOCK: does not sleep");
	close(fd);
}

static void test_min_max(void)
{
	int fd = new_queue(0), n, i, seen[5] = { 0 }, good;
	struct ukevent buf[8];
	long long start = now_ns();

	setup_add(fd, timer_ms(20, KEVENT_REQ_ONESHOT, 1));
	setup_add(fd, timer_ms(40, KEVENT_REQ_ONESHOT, 2));
	setup_add(fd, timer_ms(60, KEVENT_REQ_ONESHOT, 3));
	n = sys_kevent_get_events(fd, 3, 8, TSP(3, 0), buf, 0);
	is_int(n, 3, "min_nr 3: returns the three timers together");
	ok(ms_since(start) >= 59,
	   "min_nr 3: only after the third (60 ms) fired (%lld ms)",
	   ms_since(start));

	start = now_ns();
	setup_add(fd, timer_ms(20, KEVENT_REQ_ONESHOT, 4));
	n = sys_kevent_get_events(fd, 2, 8, TSP(0, 200000000), buf, 0);
	is_int(n, 1, "min_nr 2, one event, 200 ms timeout: returns the one");
	ok(ms_since(start) >= 199, "and waits for the timeout (%lld ms)",
	   ms_since(start));

	for (i = 0; i < 5; i++)
		setup_add(fd, timer_ukevent(0, 10000000U + (__u32)i,
					    KEVENT_REQ_ONESHOT, (__u64)i));
	msleep(100);
	good = 1;
	for (i = 0; i < 3; i++) {
		int j;

		n = sys_kevent_get_events(fd, 1, 2, TSP(1, 0), buf, 0);
		if (n != (i < 2 ? 2 : 1)) {
			diag("call %d returned %d", i, n);
			good = 0;
			continue;
		}
		for (j = 0; j < n; j++)
			if (buf[j].ptr < 5)
				seen[buf[j].ptr]++;
	}
	ok(good, "max_nr 2 bounds the count: 5 ready events come as 2, 2, 1");
	ok(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1 &&
	   seen[4] == 1, "each of the 5 events is returned once");

	is_err(sys_kevent_get_events(fd, 0, 0, TSP(0, 0), buf, 0), EINVAL,
	       "max_nr 0 is EINVAL [kevent_get_events.2 EINVAL max-nr-zero]");
	is_err(sys_kevent_get_events(fd, 3, 2, TSP(0, 0), buf, 0), EINVAL,
	       "min_nr 3 > max_nr 2 is EINVAL "
	       "[kevent_get_events.2 EINVAL min-gt-max]");
	close(fd);
}

static void test_buf_efault(void)
{
	int fd = new_queue(0), n;
	struct ukevent buf[2];
	void *hole = unmapped_page();
	long long start;

	/* Checked before the wait: nothing is ready, the timeout is 2 s. */
	setup_add(fd, timer_ms(100000, 0, 8));
#if TAP_WORD_BITS == 64
	start = now_ns();
	n = sys_kevent_get_events(fd, 1, 2, TSP(2, 0),
				  (void *)(1UL << 47), 0);
	ok(n == -1 && errno == EFAULT && ms_since(start) < 1000,
	   "buf beyond user space: EFAULT at once, before the wait (%d, "
	   "%lld ms) [kevent_get_events.2 EFAULT buf-range]", n,
	   ms_since(start));
#else
	(void)start;
	skip(1, "a 32-bit process has no address beyond user space");
#endif
	setup_add(fd, timer_ms(10, KEVENT_REQ_ONESHOT, 7));
	msleep(50);
	is_err(sys_kevent_get_events(fd, 1, 2, TSP(1, 0), hole, 0), EFAULT,
	       "unmapped buf is EFAULT [kevent_get_events.2 EFAULT buf-copy]");
	is_err(sys_kevent_get_events(fd, 1, 2, TSP(1, 0), NULL, 0), EFAULT,
	       "NULL buf is EFAULT [kevent_get_events.2 EFAULT buf-copy]");
	n = sys_kevent_get_events(fd, 1, 2, TSP(1, 0), buf, 0);
	is_event(n, buf, UKEV(.type = KEVENT_TIMER, .ptr = 7,
			      .ret_flags = KEVENT_RET_DONE),
		 UK_TYPE | UK_PTR | UK_RET_FLAGS,
		 "the event is not lost by the faults: delivered after "
		 "[kevent_get_events.2 EFAULT buf-copy]");
	close(fd);
}

/*
 * A fault after the first copies: edge-triggered pipes, whose reports
 * the call settles as it takes them, and a buffer whose second slot
 * lies on an unmapped page.
 */
static void test_buf_efault_partial(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	int fd = new_queue(0), p[3][2], i, n;
	struct ukevent *buf, got[4];
	char *page;

	page = mmap(NULL, (size_t)psz * 2, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		bail_out("mmap: %s", strerror(errno));
	munmap(page + psz, (size_t)psz);
	buf = (struct ukevent *)(page + psz) - 1;
	for (i = 0; i < 3; i++) {
		if (pipe(p[i]))
			bail_out("pipe: %s", strerror(errno));
		setup_add(fd, fd_ukevent(KEVENT_PIPE, p[i][0],
					 KEVENT_SOCKET_RECV, KEVENT_REQ_ET,
					 i + 1));
	}
	for (i = 0; i < 3; i++)
		if (write(p[i][1], "x", 1) != 1)
			bail_out("write: %s", strerror(errno));
	n = sys_kevent_get_events(fd, 0, 3, TSP(0, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 1,
	   "a fault after one copy: the call returns 1, the first event "
	   "(%d, ptr %llu) [kevent_get_events.2 EFAULT buf-copy]", n,
	   n == 1 ? (unsigned long long)buf[0].ptr : 0ULL);
	n = harvest(fd, got, 4);
	ok(n == 2 && got[0].ptr == 2 && got[1].ptr == 3,
	   "the edge-triggered events not copied stay ready, the one that "
	   "faulted first (%d) [kevent_get_events.2 EFAULT buf-copy]", n);
	n = harvest(fd, got, 4);
	ok(n == 0, "each of them is reported once (%d more) "
	   "[kevent_get_events.2 EFAULT buf-copy]", n);
	for (i = 0; i < 3; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	munmap(page, (size_t)psz);
	close(fd);
}

static void test_poll(void)
{
	int fd = new_queue(0), n, ep;
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLRDNORM };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct ukevent buf[2];
	long long start;

	setup_add(fd, timer_ms(10000, 0, 1));
	is_int(poll(&pfd, 1, 0), 0, "poll: no POLLIN before a timer fired");

	start = now_ns();
	setup_add(fd, timer_ms(50, KEVENT_REQ_ONESHOT, 2));
	n = poll(&pfd, 1, 3000);
	ok(n == 1 && (pfd.revents & POLLIN),
	   "poll: POLLIN once the timer fired");
	ok(pfd.revents & POLLRDNORM, "poll: with POLLRDNORM");
	ok(ms_since(start) >= 49, "poll: not before the timer (%lld ms)",
	   ms_since(start));
	is_int(sys_kevent_get_events(fd, 1, 2, TSP(1, 0), buf, 0), 1,
	       "poll does not consume the event");
	is_int(poll(&pfd, 1, 0), 0, "poll: no POLLIN once harvested");

	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = fd;
	is_int(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0,
	       "the queue can be added to epoll");
	setup_add(fd, timer_ms(30, KEVENT_REQ_ONESHOT, 3));
	n = epoll_wait(ep, &out, 1, 3000);
	ok(n == 1 && (out.events & EPOLLIN) && out.data.fd == fd,
	   "epoll reports EPOLLIN when the timer fired");
	close(ep);
	close(fd);
}

int main(void)
{
	plan(71);
	tap_watchdog(18);
	kevent_require();
	test_null_timeout();
	test_relative();
	test_abstime();
	test_timeout_errors();
	test_eintr();
	test_nonblock();
	test_min_max();
	test_buf_efault();
	test_buf_efault_partial();
	test_poll();
	return tap_done();
}
