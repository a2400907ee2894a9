// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_POSIX_TIMER: timer_create() with SIGEV_KEVENT (kevent_posix_timer(7)).
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"


/*
 * timer_create() with SIGEV_KEVENT on queue fd, which goes where the
 * kernel has sigev_notify_thread_id (glibc 2.36 calls it _sigev_un._tid);
 * -1 and errno on error.
 */
static int kevent_timer(int fd, void *ptr, timer_t *tid)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev._sigev_un._tid = fd;
	sev.sigev_value.sival_ptr = ptr;
	return timer_create(CLOCK_MONOTONIC, &sev, tid);
}

static int timer_id(timer_t tid)
{
	return (int)(intptr_t)tid;
}

static void arm(timer_t tid, long first_us, long every_us)
{
	struct itimerspec its;

	its.it_value.tv_sec = first_us / 1000000;
	its.it_value.tv_nsec = (first_us % 1000000) * 1000;
	its.it_interval.tv_sec = every_us / 1000000;
	its.it_interval.tv_nsec = (every_us % 1000000) * 1000;
	if (timer_settime(tid, 0, &its, NULL))
		bail_out("timer_settime: %s", strerror(errno));
}

/* Does the queue's fdinfo list a registration of type 8? */
static int fdinfo_has_timer(int fd)
{
	char path[64], buf[4096];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return strstr(buf, "type 8 ") != NULL;
}

static struct ukevent timer_key(timer_t tid, void *ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_POSIX_TIMER;
	uk.id.raw[0] = (__u32)timer_id(tid);
	uk.event = KEVENT_MASK_ALL;
	uk.ptr = (__u64)(uintptr_t)ptr;
	return uk;
}

static char tag_a, tag_b;

static void test_errors(void)
{
	struct sigevent sev;
	int q = new_queue(0), pfd[2];
	struct ukevent uk;
	timer_t tid;

	is_err(kevent_timer(-1, NULL, &tid), EBADF, "descriptor -1: EBADF "
	       "[kevent_posix_timer.7 EBADF]");
	is_err(kevent_timer(999, NULL, &tid), EBADF,
	       "descriptor not open: EBADF [kevent_posix_timer.7 EBADF]");
	if (pipe(pfd))
		bail_out("pipe");
	is_err(kevent_timer(pfd[0], NULL, &tid), EINVAL,
	       "a pipe, not a queue: EINVAL "
	       "[kevent_posix_timer.7 EINVAL not-queue]");
	close(pfd[0]);
	close(pfd[1]);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT | SIGEV_THREAD_ID;
	sev._sigev_un._tid = q;
	is_err(timer_create(CLOCK_MONOTONIC, &sev, &tid), EINVAL,
	       "SIGEV_KEVENT | SIGEV_THREAD_ID: EINVAL "
	       "[kevent_posix_timer.7 EINVAL thread-id]");
	is_int(fdinfo_has_timer(q), 0, "failed creations registered nothing");

	/* Userspace cannot add this type, even for a real timer. */
	is_int(kevent_timer(q, &tag_a, &tid), 0, "a timer to compare with");
	uk = timer_key(tid, &tag_b);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 1, "ADD of KEVENT_POSIX_TIMER");
	is_ukevent(&uk, UKEV(.ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE,
			     .ret_data = { 0, (__u32)-ENOSYS }),
		   UK_RET_FLAGS | UK_RET_DATA1,
		   "ADD of KEVENT_POSIX_TIMER: ENOSYS "
		   "[kevent_ctl.2 ENOSYS posix-timer]");
	timer_delete(tid);
	close(q);
}

static void test_oneshot(void)
{
	int q = new_queue(0);
	struct ukevent uk[2];
	timer_t tid;

	is_int(kevent_timer(q, &tag_a, &tid), 0, "timer_create(SIGEV_KEVENT)");
	is_int(fdinfo_has_timer(q), 1, "the queue holds a KEVENT_POSIX_TIMER");
	is_int(harvest(q, uk, 2), 0, "nothing before the timer is armed");
	arm(tid, 20000, 0);
	is_int(wait1(q, uk, 2000), 1, "one-shot: reported");
	is_ukevent(uk, UKEV(.type = KEVENT_POSIX_TIMER,
			    .event = KEVENT_MASK_ALL), UK_TYPE | UK_EVENT,
		   "type KEVENT_POSIX_TIMER, event KEVENT_MASK_ALL");
	is_ukevent(uk, UKEV(.id.raw = { (__u32)timer_id(tid), 0 }), UK_ID,
		   "id is the timer ID (timer %d)", timer_id(tid));
	is_ukevent(uk, UKEV(.ptr = (__u64)(uintptr_t)&tag_a), UK_PTR,
		   "ptr is sival_ptr");
	is_int(uk[0].ret_flags, KEVENT_RET_DONE, "ret_flags DONE");
	is_int(uk[0].ret_data[0], 1, "ret_data[0]: one expiry");
	is_int(uk[0].ret_data[1], 0, "ret_data[1]: overrun 0");
	msleep(50);
	is_int(harvest(q, uk, 2), 0, "one-shot: reported once");
	arm(tid, 10000, 0);
	is_int(wait1(q, uk, 2000), 1, "rearmed: reported again");

	/* timer_delete(): broken once, and removed. */
	is_int(timer_delete(tid), 0, "timer_delete");
	is_int(harvest(q, uk, 2), 1, "timer_delete: reported");
	ok(uk[0].ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
	   (int)uk[0].ret_data[1] == -EBADF,
	   "timer_delete: BROKEN|DONE, -EBADF (flags %#x, %d)",
	   uk[0].ret_flags, (int)uk[0].ret_data[1]);
	is_int(harvest(q, uk, 2), 0, "timer_delete: reported once");
	is_int(fdinfo_has_timer(q), 0, "timer_delete: the registration is gone");
	close(q);
}

/*
 * How long a timer ran, bracketed: the clock is read on both sides of the
 * call that arms it and of the call that ends the count (a disarm or a
 * harvest), so that a preemption between a call and a clock reading
 * widens the bracket instead of failing the test.
 */
struct run_time {
	long long arm_from, arm_by;	/* around timer_settime() */
	long long min_ns, max_ns;	/* what the timer ran, at least and at most */
};

static void arm_timed(struct run_time *rt, timer_t tid, long first_us,
		      long every_us)
{
	rt->arm_from = now_ns();
	arm(tid, first_us, every_us);
	rt->arm_by = now_ns();
}

static void run_ended(struct run_time *rt, long long end_from, long long end_by)
{
	rt->min_ns = end_from - rt->arm_by;
	rt->max_ns = end_by - rt->arm_from;
}

static void disarm_timed(struct run_time *rt, timer_t tid)
{
	long long from = now_ns();

	arm(tid, 0, 0);
	run_ended(rt, from, now_ns());
}

/* Every expiry of a period_ns timer counted, give or take the one due. */
static int expiries_fit(unsigned int n, const struct run_time *rt,
			long long period_ns)
{
	return n + 1 >= rt->min_ns / period_ns && n <= rt->max_ns / period_ns + 1;
}

static void test_periodic(void)
{
	int q = new_queue(0), n, events = 0, bad = 0;
	long long from;
	struct run_time rt;
	struct timespec res;
	unsigned int sum = 0;
	long period_ns;
	struct ukevent uk[8];
	timer_t tid;

	is_int(kevent_timer(q, &tag_b, &tid), 0, "periodic: timer_create");
	arm_timed(&rt, tid, 10000, 10000);
	while (ms_since(rt.arm_by) < 300) {
		n = sys_kevent_get_events(q, 1, 8, TSP(0, 50000000), uk, 0);
		for (events += n > 0 ? n : 0; n > 0; n--) {
			sum += uk[n - 1].ret_data[0];
			if (uk[n - 1].ret_data[1] != uk[n - 1].ret_data[0] - 1)
				bad = 1;
		}
	}
	disarm_timed(&rt, tid);
	while ((n = harvest(q, uk, 8)) > 0)
		for (; n > 0; n--)
			sum += uk[n - 1].ret_data[0];
	ok(events > 5, "periodic: reported many times (%d)", events);
	ok(!bad, "periodic: ret_data[1] is ret_data[0] - 1 every time");
	ok(expiries_fit(sum, &rt, 10000000),
	   "periodic: every expiry counted (%u in %lld to %lld ms)", sum,
	   rt.min_ns / 1000000, rt.max_ns / 1000000);

	/* Not harvested for a while: one report, the rest as overrun. */
	arm_timed(&rt, tid, 10000, 10000);
	msleep(105);
	from = now_ns();
	n = harvest(q, uk, 8);
	run_ended(&rt, from, now_ns());
	is_int(n, 1, "unharvested: one report");
	ok(expiries_fit(uk[0].ret_data[0], &rt, 10000000) &&
	   uk[0].ret_data[1] == uk[0].ret_data[0] - 1,
	   "unharvested: %u expiries, overrun %u, in %lld to %lld ms",
	   uk[0].ret_data[0], uk[0].ret_data[1], rt.min_ns / 1000000,
	   rt.max_ns / 1000000);

	/*
	 * 100 us: in high-resolution mode the timer fires once a jiffy and
	 * counts the expiries it skipped; in low-resolution mode its period
	 * is raised to the resolution, a jiffy.
	 */
	clock_getres(CLOCK_MONOTONIC, &res);
	period_ns = res.tv_sec || res.tv_nsec > 100000 ? res.tv_nsec : 100000;
	harvest(q, uk, 8);
	arm_timed(&rt, tid, 100, 100);
	msleep(100);
	disarm_timed(&rt, tid);
	sum = 0;
	events = 0;
	bad = 0;
	while ((n = harvest(q, uk, 8)) > 0)
		for (events += n; n > 0; n--) {
			sum += uk[n - 1].ret_data[0];
			bad |= uk[n - 1].ret_data[1] > 0;
		}
	/* What a jiffy of at most 10 ms ahead can add. */
	ok(sum * 10 >= rt.min_ns / period_ns * 8 &&
	   sum <= (rt.max_ns + 10000000) / period_ns + 1,
	   "100 us period: every expiry counted (%u in %lld to %lld ms, %ld ns each)",
	   sum, rt.min_ns / 1000000, rt.max_ns / 1000000, period_ns);
	ok(bad, "100 us period: reports carry overruns (%d reports)", events);
	ok(timer_getoverrun(tid) >= 0,
	   "timer_getoverrun() works (%d)", timer_getoverrun(tid));
	timer_delete(tid);
	close(q);
}

static void test_userspace_cmds(void)
{
	int q = new_queue(0);
	struct ukevent uk;
	timer_t tid;

	is_int(kevent_timer(q, &tag_a, &tid), 0, "commands: timer_create");

	/* READY: reported with no expiry. */
	uk = timer_key(tid, &tag_a);
	is_int(ctl1(q, KEVENT_CTL_READY, &uk), 0, "READY");
	is_int(harvest(q, &uk, 1), 1, "READY: reported");
	ok(uk.ret_flags == KEVENT_RET_DONE && uk.ret_data[0] == 0,
	   "READY: DONE, no expiry (%u)", uk.ret_data[0]);

	/* MODIFY to ONESHOT: removed after its next report. */
	uk = timer_key(tid, &tag_a);
	uk.req_flags = KEVENT_REQ_ONESHOT;
	is_int(ctl1(q, KEVENT_CTL_MODIFY, &uk), 1, "MODIFY");
	is_int(uk.ret_flags, KEVENT_RET_DONE, "MODIFY: done");
	arm(tid, 5000, 5000);
	is_int(wait1(q, &uk, 2000), 1, "MODIFY to ONESHOT: reported");
	msleep(30);
	is_int(harvest(q, &uk, 1), 0, "MODIFY to ONESHOT: then removed");
	is_int(fdinfo_has_timer(q), 0, "MODIFY to ONESHOT: gone");
	is_int(timer_delete(tid), 0,
	       "timer_delete of a timer whose registration is gone");
	is_int(harvest(q, &uk, 1), 0, "and nothing is reported");

	/* REMOVE: the timer goes on, reporting nowhere. */
	is_int(kevent_timer(q, &tag_b, &tid), 0, "REMOVE: timer_create");
	arm(tid, 5000, 5000);
	uk = timer_key(tid, &tag_b);
	is_int(ctl1(q, KEVENT_CTL_REMOVE, &uk), 1, "REMOVE");
	is_int(uk.ret_flags, KEVENT_RET_DONE, "REMOVE: found");
	msleep(30);
	is_int(harvest(q, &uk, 1), 0, "REMOVE: nothing reported since");
	{
		struct itimerspec cur;

		ok(timer_gettime(tid, &cur) == 0 &&
		   (cur.it_value.tv_sec || cur.it_value.tv_nsec),
		   "REMOVE: the timer still runs");
	}
	is_int(timer_delete(tid), 0, "REMOVE: timer_delete still works");
	is_int(harvest(q, &uk, 1), 0, "REMOVE: and reports nothing");
	close(q);
}

static void test_close_queue(void)
{
	int q = new_queue(0), q2;
	struct itimerspec cur;
	struct ukevent uk;
	timer_t tid;

	is_int(kevent_timer(q, &tag_a, &tid), 0, "close: timer_create");
	arm(tid, 2000, 2000);
	msleep(10);
	close(q);
	q2 = new_queue(0);
	msleep(30);
	is_int(harvest(q2, &uk, 1), 0,
	       "close: a new queue (fd %d, was %d) gets nothing", q2, q);
	ok(timer_gettime(tid, &cur) == 0, "close: the timer still exists");
	is_int(timer_delete(tid), 0, "close: timer_delete still works");
	close(q2);
}

static void test_two_timers(void)
{
	int q = new_queue(0), n, seen_a = 0, seen_b = 0;
	timer_t ta, tb;
	struct ukevent uk[4];
	long long start = now_ns();

	is_int(kevent_timer(q, &tag_a, &ta), 0, "two timers: first");
	is_int(kevent_timer(q, &tag_b, &tb), 0, "two timers: second");
	arm(ta, 5000, 0);
	arm(tb, 10000, 0);
	while ((!seen_a || !seen_b) && ms_since(start) < 2000) {
		n = sys_kevent_get_events(q, 1, 4, TSP(0, 100000000), uk, 0);
		for (; n > 0; n--) {
			if (uk[n - 1].ptr == (__u64)(uintptr_t)&tag_a &&
			    uk[n - 1].id.raw[0] == (__u32)timer_id(ta))
				seen_a++;
			if (uk[n - 1].ptr == (__u64)(uintptr_t)&tag_b &&
			    uk[n - 1].id.raw[0] == (__u32)timer_id(tb))
				seen_b++;
		}
	}
	ok(seen_a == 1 && seen_b == 1,
	   "two timers: each reported with its id and ptr");
	timer_delete(ta);
	timer_delete(tb);
	close(q);
}

static void test_exit(void)
{
	int q = new_queue(0), status = -1, n, broken = 0, fired = 0;
	struct ukevent uk[4];
	timer_t tid;
	pid_t pid;

	is_int(kevent_timer(q, &tag_a, &tid), 0, "exit: the parent's timer");
	pid = fork();
	if (pid == 0) {
		timer_t ct;
		struct sigevent sev;

		/* The same ID and ptr as the parent's, in the same queue. */
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_NONE;
		while (timer_create(CLOCK_MONOTONIC, &sev, &ct) == 0 &&
		       timer_id(ct) + 1 < timer_id(tid))
			;
		if (kevent_timer(q, &tag_a, &ct) != -1 || errno != EEXIST)
			_exit(1);
		if (kevent_timer(q, &tag_b, &ct))
			_exit(2);
		arm(ct, 1000, 1000);
		msleep(20);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "exit: the child got EEXIST for the same ID and ptr (status %#x) "
	   "[kevent_posix_timer.7 EEXIST]", status);
	while ((n = harvest(q, uk, 4)) > 0)
		for (; n > 0; n--) {
			if (uk[n - 1].ptr != (__u64)(uintptr_t)&tag_b)
				continue;
			/* The last expiries may come with the broken report. */
			fired += uk[n - 1].ret_data[0];
			if (uk[n - 1].ret_flags & KEVENT_RET_BROKEN)
				broken++;
		}
	ok(fired >= 1, "exit: the child's timer reported to the queue");
	is_int(broken, 1, "exit: its registration reported broken once");
	is_int(fdinfo_has_timer(q), 1, "exit: the parent's is still there");
	timer_delete(tid);
	harvest(q, uk, 4);
	is_int(fdinfo_has_timer(q), 0, "exit: nothing left");
	close(q);
}

int main(void)
{
	plan(65);
	tap_watchdog(60);
	kevent_require();
	test_errors();
	test_oneshot();
	test_periodic();
	test_userspace_cmds();
	test_close_queue();
	test_two_timers();
	test_exit();
	return tap_done();
}
