// SPDX-License-Identifier: GPL-2.0
/*
 * Queues and epoll sets watching each other, and waits that end when
 * kevent_get_events(2) and kevent_wait(2) say: the findings of the third
 * kernel review, C7, C8 and M8-M11 (doc/reliability.md), as an
 * unprivileged user.  A call that could hang or stay in the kernel runs
 * in a child with a time bound, so that a regression is a failed point.
 *
 * Usage: nesting [GROUP...]   (default: every group)
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"

#define NOBODY		65534
#define CHAIN_LONG	8000	/* far beyond what a kernel stack holds */


/* fdinfo's "ready:" of a queue, or -1. */
static long ready_of(int fd)
{
	char buf[4096];

	if (read_fdinfo(fd, buf, sizeof(buf)) < 0)
		return -1;
	return fdinfo_value(buf, "ready");
}

/* Wait up to ms for fdinfo of fd to say ready >= 1. */
static int wait_ready(int fd, unsigned int ms)
{
	long long start = now_ns();

	while (ms_since(start) < ms) {
		if (ready_of(fd) >= 1)
			return 1;
		msleep(2);
	}
	return 0;
}

/* C7: the caller of epoll_ctl() must not deadlock on the set's mutex. */
static int c7_ctl_child(void *arg)
{
	int ep = *(int *)arg, q;
	struct epoll_event ev = { .events = EPOLLIN };
	struct ukevent uk;

	q = new_queue(KEVENT_INIT_CLOEXEC);
	uk = poll_ukevent(ep, POLLIN, KEVENT_REQ_ALWAYS_QUEUE, 1);
	if (add1(q, uk))
		return 1;
	if (ready_of(q) != 1)
		return 1;
	ev.data.fd = q;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, q, &ev))
		return 1;
	/* The set is readable (the eventfd), and so is the queue in it. */
	return epoll_wait(ep, &ev, 1, 0) != 1;
}

static void c7_epoll_ctl(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), efd = eventfd(1, EFD_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };

	diag("C7: a queue watching an epoll set that is added to the set");
	must(ep >= 0 && efd >= 0, "epoll_create1, eventfd");
	must(!epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev), "epoll_ctl");
	bounded(c7_ctl_child, &ep, 10000,
		"[kevent_poll.7 nesting] epoll_ctl(ADD) of a queue that "
		"watches the set returns, and epoll_wait() on the set too");
	close(efd);
	close(ep);
}

static int c7_wait_child(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC), q = new_queue(KEVENT_INIT_CLOEXEC), n;
	struct ukevent uk, out[2];

	(void)arg;
	ev.data.fd = q;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, q, &ev))
		return 1;
	if (add1(q, poll_ukevent(ep, POLLIN, 0, 1)) ||
	    add1(q, timer_ms(1, KEVENT_REQ_ONESHOT, 2)))
		return 1;
	/* The timer fires, the set sees the queue, the queue the set. */
	if (!wait_ready(q, 5000) || wait1(q, &uk, 1000) != 1 || uk.ptr != 2)
		return 1;
	msleep(20);
	if (epoll_wait(ep, &ev, 1, 0) < 0)
		return 1;
	n = harvest(q, out, 2);
	return n < 0;
}

static void c7_epoll_wait(void)
{
	diag("C7: epoll_wait() on a set that a queue in it watches");
	bounded(c7_wait_child, NULL, 10000,
		"[kevent_poll.7 nesting] epoll_wait() on a set and a harvest "
		"of the queue in it, which watches the set, both return");
}

/* Nothing but the result of the call: the kernel must survive it. */
static int c8_chain_child(void *arg)
{
	int n = *(int *)arg, i, *q = calloc((size_t)n, sizeof(int));
	struct pollfd pf;
	struct ukevent uk, out[1];

	if (!q)
		return 1;
	for (i = 0; i < n; i++)
		q[i] = new_queue(KEVENT_INIT_CLOEXEC);
	for (i = 0; i < n - 1; i++)
		if (add1(q[i], poll_ukevent(q[i + 1], POLLIN, 0, (__u64)i)))
			return 2;
	uk = timer_ukevent(1000, 0, 0, 99);
	if (add1(q[n - 1], uk) || ctl1(q[n - 1], KEVENT_CTL_READY, &uk) != 0)
		return 3;
	/* The wakeups run along the chain, one irq_work per queue. */
	if (!wait_ready(q[0], 60000))
		return 4;
	pf = (struct pollfd){ .fd = q[0], .events = POLLIN };
	if (poll(&pf, 1, 0) != 1 || !(pf.revents & POLLIN))
		return 5;
	if (harvest(q[0], out, 1) != 1 || out[0].ptr != 0)
		return 6;
	return 0;
}

static void c8_chain(void)
{
	int n = CHAIN_LONG;

	diag("C8: poll() and a harvest on the head of %d nested queues", n);
	bounded(c8_chain_child, &n, 240000,
		"[kevent_poll.7 nesting] poll() on the head of a chain of "
		"8000 queues says POLLIN and a harvest returns its event");
}

/* A chain alternating queues and epoll sets, 2 * n deep. */
static int c8_mixed_child(void *arg)
{
	int n = *(int *)arg, i, prev = -1, q, ep, head = -1;
	struct epoll_event ev = { .events = EPOLLIN };
	struct ukevent uk, out[1];
	struct pollfd pf;

	/* Built from the inside out: each level watches the one before. */
	for (i = 0; i < n; i++) {
		q = new_queue(KEVENT_INIT_CLOEXEC);
		if (prev < 0) {
			uk = timer_ukevent(1000, 0, 0, 99);
			if (add1(q, uk) ||
			    ctl1(q, KEVENT_CTL_READY, &uk) != 0)
				return 1;
		} else if (add1(q, poll_ukevent(prev, POLLIN,
					       KEVENT_REQ_ALWAYS_QUEUE, 7))) {
			return 2;
		}
		ep = epoll_create1(EPOLL_CLOEXEC);
		ev.data.fd = q;
		if (ep < 0)
			return 3;
		/* epoll's own limit of nested sets does not see queues. */
		if (epoll_ctl(ep, EPOLL_CTL_ADD, q, &ev))
			return 4;
		prev = ep;
		head = q;
	}
	if (!wait_ready(head, 60000))
		return 5;
	pf = (struct pollfd){ .fd = prev, .events = POLLIN };
	if (poll(&pf, 1, 1000) != 1)
		return 6;
	return harvest(head, out, 1) != 1;
}

static void c8_mixed(void)
{
	int n = 500;

	diag("C8: a chain of %d queues and %d epoll sets, alternating", n, n);
	bounded(c8_mixed_child, &n, 120000,
		"[kevent_poll.7 nesting] poll() on a chain alternating queues "
		"and epoll sets, 1000 deep, returns POLLIN");
}

struct getter {
	int q;
	unsigned int min_nr, ms;
	int n;
	long long took_ms;
};

static void *getter_thread(void *arg)
{
	struct getter *g = arg;
	struct ukevent out[4];
	long long start = now_ns();

	g->n = sys_kevent_get_events(g->q, g->min_nr, 4,
				     TSP(g->ms / 1000,
					 (g->ms % 1000) * 1000000LL), out, 0);
	g->took_ms = ms_since(start);
	return NULL;
}

/*
 * M8: a call waiting for min_nr 2 must not keep the one event that is
 * ready while level-triggered registrations queued for a recheck no
 * longer are.
 */
static void m8_min_nr(void)
{
	struct getter a = { .min_nr = 2, .ms = 1500 };
	struct ukevent uk, out[2];
	int p[2], n, b;
	pthread_t t;
	char c = 'x';

	diag("M8: min_nr 2 with a stale level-triggered registration");
	a.q = new_queue(KEVENT_INIT_CLOEXEC);
	must(!pipe2(p, O_CLOEXEC), "pipe2");
	setup_add(a.q, poll_ukevent(p[0], POLLIN, KEVENT_REQ_ALWAYS_QUEUE, 1));
	must(write(p[1], &c, 1) == 1, "write");
	must(wait1(a.q, &uk, 1000) == 1 && uk.ptr == 1, "the pipe reported");
	must(read(p[0], &c, 1) == 1, "read");
	uk = timer_ukevent(1000, 0, 0, 2);
	setup_add(a.q, uk);
	must(ctl1(a.q, KEVENT_CTL_READY, &uk) == 0, "READY");
	must(ready_of(a.q) == 2, "two queued, one of them stale");
	must(!pthread_create(&t, NULL, getter_thread, &a), "pthread_create");
	msleep(300);
	b = harvest(a.q, out, 2);
	is_int(b, 1, "[kevent_get_events.2 min_nr] another thread takes the "
	       "one ready event while a call waits for two");
	ok(b == 1 && out[0].ptr == 2, "and it is the forced timer");
	pthread_join(t, NULL);
	is_int(a.n, 0, "the waiting call took nothing and returned 0 at "
	       "its timeout (after %lld ms)", a.took_ms);
	n = harvest(a.q, out, 2);
	is_int(n, 0, "nothing is left to report");
	close(p[0]);
	close(p[1]);
	close(a.q);
}

/* M9: stop the child every 150 ms (or interrupt it with ptrace). */
enum disturb { BY_STOP, BY_PTRACE };

static int m9_child(void *arg)
{
	int ring_mode = *(int *)arg, q, n;
	struct kevent_ring *ring = NULL;
	struct ukevent out[1];
	long long start, took;

	if (ring_mode) {
		ring = ring_alloc(4, NULL);
		q = ring ? sys_kevent_init(ring, 4, 0) : -1;
	} else {
		q = new_queue(KEVENT_INIT_CLOEXEC);
	}
	if (q < 0)
		return 1;
	start = now_ns();
	if (ring_mode)
		n = sys_kevent_wait(q, 1, 0, TSP(0, 600000000), 0);
	else
		n = sys_kevent_get_events(q, 1, 1, TSP(0, 600000000), out, 0);
	took = ms_since(start);
	/* The disturbance lasts 3 s: a wait restarted in full ends later. */
	printf("# %s: returned %d after %lld ms\n",
	       ring_mode ? "kevent_wait" : "kevent_get_events", n, took);
	fflush(stdout);
	return n != 0 || took < 590 || took > 2500;
}

static void m9_run(int ring_mode, enum disturb how, const char *what)
{
	int st = -1, ended = 0;
	long long start;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	must(pid >= 0, "fork");
	if (!pid)
		_exit(m9_child(&ring_mode) ? 1 : 0);
	if (how == BY_PTRACE)
		must(!ptrace(PTRACE_SEIZE, pid, NULL, NULL), "PTRACE_SEIZE: %s",
		     strerror(errno));
	start = now_ns();
	while (!ended && ms_since(start) < 3000) {
		msleep(75);
		if (how == BY_STOP) {
			kill(pid, SIGSTOP);
			msleep(75);
			kill(pid, SIGCONT);
			continue;
		}
		/* The tracee stops, or has ended meanwhile. */
		ptrace(PTRACE_INTERRUPT, pid, NULL, NULL);
		if (waitpid(pid, &st, __WALL) != pid)
			break;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			ended = 1;
			break;
		}
		msleep(75);
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	if (how == BY_PTRACE && !ended)
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (!ended)
		st = wait_child(pid, 10000);
	ok(st != -1 && WIFEXITED(st) && !WEXITSTATUS(st), "%s", what);
}

static void m9_deadlines(void)
{
	diag("M9: a 600 ms timeout with the caller stopped every 150 ms");
	m9_run(0, BY_STOP, "[kevent_get_events.2 timeout] a relative timeout "
	       "is a deadline across SIGSTOP and SIGCONT");
	m9_run(1, BY_STOP, "[kevent_wait.2 timeout] a relative timeout is a "
	       "deadline across SIGSTOP and SIGCONT");
	m9_run(0, BY_PTRACE, "[kevent_get_events.2 timeout] a relative "
	       "timeout is a deadline across ptrace stops");
	m9_run(1, BY_PTRACE, "[kevent_wait.2 timeout] a relative timeout is "
	       "a deadline across ptrace stops");
}

struct ring_waiter {
	int q;
	pid_t tid;
	int n;
	long long ended_ns;
};

/* Far beyond the commit, so that a timeout cannot pass for a wake-up. */
#define RING_WAITER_TIMEOUT_S 20

static void *ring_waiter_thread(void *arg)
{
	struct ring_waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	w->n = sys_kevent_wait(w->q, 1, 0, TSP(RING_WAITER_TIMEOUT_S, 0), 0);
	w->ended_ns = now_ns();
	return NULL;
}

/* M10: one commit ends every kevent_wait() whose old_uidx it staled. */
static void m10_commit_wakes_all(void)
{
	struct kevent_ring *ring = ring_alloc(2, NULL);
	struct ring_waiter w[3];
	struct ukevent uk;
	pthread_t t[3];
	long long start;
	int q, i, asleep = 0;

	diag("M10: three kevent_wait() sleepers, one commit");
	must(ring, "ring_alloc");
	q = sys_kevent_init(ring, 2, KEVENT_INIT_CLOEXEC);
	must(q >= 0, "kevent_init");
	for (i = 0; i < 2; i++) {
		uk = timer_ukevent(1000, 0, 0, (__u64)i);
		setup_add(q, uk);
		must(ctl1(q, KEVENT_CTL_READY, &uk) == 0, "READY");
	}
	must(sys_kevent_wait(q, 2, 0, TSP(1, 0), 0) == 2, "the ring is full");
	for (i = 0; i < 3; i++) {
		w[i] = (struct ring_waiter){ .q = q, .tid = 0 };
		must(!pthread_create(&t[i], NULL, ring_waiter_thread, &w[i]),
		     "pthread_create");
	}
	for (i = 0; i < 3; i++) {
		while (!__atomic_load_n(&w[i].tid, __ATOMIC_ACQUIRE))
			msleep(1);
		asleep += wait_sleeping(w[i].tid, 5000);
	}
	msleep(50);
	must(asleep == 3, "the three threads sleep");
	start = now_ns();
	must(sys_kevent_commit(q, 1, 0) == 1, "commit one slot");
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 3; i++)
		ok(w[i].n == 0 && w[i].ended_ns - start <
		   RING_WAITER_TIMEOUT_S * 1000000000LL / 2,
		   "[kevent_wait.2 commit] sleeper %d ends at the commit "
		   "(returned %d, %lld ms after it)", i, w[i].n,
		   (w[i].ended_ns - start) / 1000000);
	close(q);
	munmap(ring, kevent_ring_bytes(2));
}

/* M11: poll() on queues of a chain must not hide its events. */
#define M11_CHAIN	12
static volatile int m11_stop;

static void *m11_poller(void *arg)
{
	struct pollfd pf = { .fd = *(int *)arg, .events = POLLIN };

	while (!__atomic_load_n(&m11_stop, __ATOMIC_RELAXED))
		poll(&pf, 1, 0);
	return NULL;
}

static void m11_poll_hides_nothing(void)
{
	int q[M11_CHAIN], p[2], i, slept = 0, calls = 0;
	struct ukevent uk;
	pthread_t t[2];
	long long start;
	char c = 'x';

	diag("M11: pollers of a chain of %d level-triggered queues",
	     M11_CHAIN);
	must(!pipe2(p, O_CLOEXEC), "pipe2");
	for (i = 0; i < M11_CHAIN; i++)
		q[i] = new_queue(KEVENT_INIT_CLOEXEC);
	for (i = 0; i < M11_CHAIN - 1; i++)
		setup_add(q[i], poll_ukevent(q[i + 1], POLLIN,
					     KEVENT_REQ_ALWAYS_QUEUE,
					     (__u64)i));
	setup_add(q[M11_CHAIN - 1], poll_ukevent(p[0], POLLIN,
						 KEVENT_REQ_ALWAYS_QUEUE, 50));
	must(write(p[1], &c, 1) == 1, "write: the pipe keeps one byte");
	must(wait_ready(q[0], 10000), "the head is ready");
	must(!pthread_create(&t[0], NULL, m11_poller, &q[0]) &&
	     !pthread_create(&t[1], NULL, m11_poller, &q[1]),
	     "pthread_create");
	start = now_ns();
	while (ms_since(start) < 3000) {
		if (wait1(q[0], &uk, 500) != 1)
			slept++;
		calls++;
	}
	__atomic_store_n(&m11_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	is_int(slept, 0, "[kevent.7 level-triggered-lasts] no call on a head "
	       "that stays readable sleeps to its timeout while others poll "
	       "the chain (%d calls)", calls);
	ok(wait1(q[0], &uk, 1000) == 1 && uk.ptr == 0,
	   "[kevent.7 level-triggered-lasts] after the pollers stop, the head "
	   "still reports the event");
	ok(ready_of(q[0]) >= 1 && ready_of(q[1]) >= 1,
	   "fdinfo: the head and the next queue still say ready");
	for (i = 0; i < M11_CHAIN; i++)
		close(q[i]);
	close(p[0]);
	close(p[1]);
}

static const struct test_group {
	const char *name;
	void (*run)(void);
	unsigned int points;
} groups[] = {
	{ "c7ctl", c7_epoll_ctl, 1 },
	{ "c7wait", c7_epoll_wait, 1 },
	{ "m8", m8_min_nr, 4 },
	{ "m9", m9_deadlines, 4 },
	{ "m10", m10_commit_wakes_all, 3 },
	{ "m11", m11_poll_hides_nothing, 3 },
	{ "c8mixed", c8_mixed, 1 },
	{ "c8", c8_chain, 1 },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

/* Enough descriptors for the long chain, then the rights of nobody. */
static void become_nobody(void)
{
	struct rlimit rl = { CHAIN_LONG + 200, CHAIN_LONG + 200 };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		bail_out("setrlimit: %s", strerror(errno));
	if (getuid() == 0 &&
	    (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)))
		bail_out("setuid(nobody): %s", strerror(errno));
	/* A change of uid makes the process undumpable: M9 ptraces it. */
	if (prctl(PR_SET_DUMPABLE, 1))
		bail_out("PR_SET_DUMPABLE: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	unsigned int i, total = 0;
	int a, want;

	kevent_require();
	become_nobody();
	for (i = 0; i < NGROUPS; i++) {
		want = argc < 2;
		for (a = 1; a < argc; a++)
			want |= !strcmp(argv[a], groups[i].name);
		if (want)
			total += groups[i].points;
	}
	plan(total);
	tap_watchdog(600);
	diag("uid %d, RLIMIT_NOFILE %d", (int)getuid(), CHAIN_LONG + 200);
	for (i = 0; i < NGROUPS; i++) {
		want = argc < 2;
		for (a = 1; a < argc; a++)
			want |= !strcmp(argv[a], groups[i].name);
		if (want)
			groups[i].run();
	}
	return tap_done();
}
