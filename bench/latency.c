// SPDX-License-Identifier: MIT
/*
 * Workload 5: latency.
 *
 * wake: a thread sleeps in a mechanism's wait, on one pipe; another
 * thread, on the other CPU when there are two, takes the time and writes
 * a byte.  The latency is from before the write to the return of the
 * wait.  The writer waits for the sleeper's acknowledgement, then
 * 200 us, so that the sleeper is asleep again at the next write.  The
 * plain blocking read(2) is the floor.
 *
 * timer: how late a timer's report arrives.  One-shot: a 1 ms timer is
 * armed and waited for, again and again; the lateness is the time from
 * arming to the return of the wait, less 1 ms.  Periodic: a 1 ms timer
 * runs for P periods; each report's lateness is measured against the
 * period it reports, arming time + k ms, k the expiries reported so far
 * (kevent's ret_data[1], timerfd's read count, the POSIX timer's
 * overrun + 1), and the counts must add up to the periods that passed.
 * KEVENT_TIMER, timerfd, a POSIX timer with SIGEV_SIGNAL taken by
 * sigwaitinfo(), and a POSIX timer with SIGEV_KEVENT.
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "kbench.h"

static void pin(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	if (cpu < 0) {
		/* Every CPU again. */
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(cpu, &set);
	}
	sched_setaffinity(0, sizeof(set), &set);
}

struct wake {
	int data[2], ack[2];
	int samples;
	volatile uint64_t sent;
};

static void *writer(void *arg)
{
	struct wake *w = arg;
	struct timespec pause = { 0, 200000 };
	char c = 'x';

	pin(0);
	for (int i = 0; i < w->samples; i++) {
		nanosleep(&pause, NULL);
		w->sent = now_ns();
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (write(w->data[1], &c, 1) != 1)
			die("wake: write: %s", strerror(errno));
		if (read(w->ack[0], &c, 1) != 1)
			die("wake: ack: %s", strerror(errno));
	}
	return NULL;
}

static void summary(uint64_t *v, int n, uint64_t *med, uint64_t *p99,
		    uint64_t *max)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	*med = v[n / 2];
	*p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	*max = v[n - 1];
}

static void wake_one(int m, int samples, int rep)
{
	struct wake w = { .samples = samples };
	uint64_t *lat = xcalloc(samples, sizeof(uint64_t)), t, med, p99, max;
	struct engine *e = NULL;
	pthread_t th;
	int idx[4], k;
	char c;

	if (pipe2(w.data, O_CLOEXEC) || pipe2(w.ack, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	if (m < M_NR) {
		e = engine_new(m, 1, 4);
		engine_add(e, w.data, 0, 1, K_PIPE);
	}
	pin(1);
	if (pthread_create(&th, NULL, writer, &w))
		die("pthread_create");
	for (int i = 0; i < samples; i++) {
		if (e) {
			k = engine_harvest(e, idx, 4, 5000);
			t = now_ns();
			if (k != 1 || idx[0] != 0)
				fail("wake %s: sample %d: %d events, not 1",
				     mech_name[m], i, k);
		}
		/* Without a mechanism, the blocking read is the wait. */
		if (read(w.data[0], &c, 1) != 1)
			fail("wake: read: %s", strerror(errno));
		if (!e)
			t = now_ns();
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		lat[i] = t - w.sent;
		if (write(w.ack[1], &c, 1) != 1)
			die("wake: ack: %s", strerror(errno));
	}
	pthread_join(th, NULL);
	if (e) {
		k = engine_harvest(e, idx, 4, 0);
		if (k)
			fail("wake %s: %d events more than written",
			     mech_name[m], k);
		engine_free(e);
	}
	summary(lat, samples, &med, &p99, &max);
	if (opt.smoke)
		tap_ok("wake %s: %d wakeups, one event each", e ?
		       mech_name[m] : "read", samples);
	else
		result("wl=wake mech=%s rep=%d med_us=%.1f p99_us=%.1f "
		       "max_us=%.1f samples=%d", m < M_NR ? mech_name[m] :
		       "read", rep, med / 1e3, p99 / 1e3, max / 1e3, samples);
	free(lat);
	close(w.data[0]);
	close(w.data[1]);
	close(w.ack[0]);
	close(w.ack[1]);
	pin(-1);
}

/* kbench wake [-s SAMPLES] [-m MECHS] */
int wl_wake(int argc, char **argv)
{
	int samples = 1000, use[M_NR], ch, rep, m;

	parse_mechs("ring,getev,epoll-et,uring,poll", use);
	while ((ch = getopt(argc, argv, "s:m:")) != -1) {
		switch (ch) {
		case 's': samples = atoi(optarg); break;
		case 'm':
			if (parse_mechs(optarg, use))
				die("unknown mechanism in %s", optarg);
			break;
		default: die("usage: wake [-s SAMPLES] [-m MECHS]");
		}
	}
	for (rep = 1; rep <= opt.reps; rep++) {
		for (m = 0; m < M_NR; m++)
			if (use[m])
				wake_one(m, samples, rep);
		wake_one(M_NR, samples, rep);
	}
	return 0;
}

enum tmech { T_KEVENT, T_TIMERFD, T_SIGNAL, T_KPOSIX, T_NR };

static const char *const tmech_name[T_NR] = {
	"kevent-timer", "timerfd", "posix-signal", "posix-kevent",
};

#define PERIOD_NS	1000000ULL

struct tctx {
	enum tmech t;
	int fd;			/* kevent queue or timerfd */
	timer_t timer;
	sigset_t set;
};

static void tctx_init(struct tctx *c, enum tmech t)
{
	struct sigevent sev;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->fd = -1;
	sigemptyset(&c->set);
	sigaddset(&c->set, SIGRTMIN);
	switch (t) {
	case T_KEVENT:
		c->fd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
		break;
	case T_TIMERFD:
		c->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		break;
	case T_SIGNAL:
		pthread_sigmask(SIG_BLOCK, &c->set, NULL);
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIGRTMIN;
		if (timer_create(CLOCK_MONOTONIC, &sev, &c->timer))
			die("timer_create: %s", strerror(errno));
		c->fd = 0;
		break;
	case T_KPOSIX:
		c->fd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_KEVENT;
		sev._sigev_un._tid = c->fd;
		sev.sigev_value.sival_ptr = c;
		if (timer_create(CLOCK_MONOTONIC, &sev, &c->timer))
			die("timer_create SIGEV_KEVENT: %s", strerror(errno));
		break;
	default:
		break;
	}
	if (c->fd < 0)
		die("%s: %s", tmech_name[t], strerror(errno));
}

static void tctx_free(struct tctx *c)
{
	if (c->t == T_SIGNAL || c->t == T_KPOSIX)
		timer_delete(c->timer);
	if (c->t != T_SIGNAL)
		close(c->fd);
}

/* Arm: one 1 ms expiry, or every 1 ms. */
static void tarm(struct tctx *c, int periodic)
{
	struct itimerspec its = {
		.it_value = { 0, PERIOD_NS },
		.it_interval = { 0, periodic ? PERIOD_NS : 0 },
	};
	struct ukevent uk;

	switch (c->t) {
	case T_KEVENT:
		memset(&uk, 0, sizeof(uk));
		uk.type = KEVENT_TIMER;
		uk.id.raw[0] = 0;
		uk.id.raw[1] = PERIOD_NS;
		uk.event = KEVENT_TIMER_FIRED;
		uk.req_flags = periodic ? 0 : KEVENT_REQ_ONESHOT;
		if (kevent_ctl(c->fd, KEVENT_CTL_ADD, 1, &uk) != 0)
			fail("kevent-timer: ADD: %s", strerror(errno));
		break;
	case T_TIMERFD:
		if (timerfd_settime(c->fd, 0, &its, NULL))
			fail("timerfd_settime: %s", strerror(errno));
		break;
	default:
		if (timer_settime(c->timer, 0, &its, NULL))
			fail("timer_settime: %s", strerror(errno));
		break;
	}
}

static void tdisarm(struct tctx *c)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	struct ukevent uk;

	switch (c->t) {
	case T_KEVENT:
		memset(&uk, 0, sizeof(uk));
		uk.type = KEVENT_TIMER;
		uk.id.raw[1] = PERIOD_NS;
		if (kevent_ctl(c->fd, KEVENT_CTL_REMOVE, 1, &uk) != 1 ||
		    uk.ret_flags != KEVENT_RET_DONE)
			fail("kevent-timer: REMOVE failed");
		break;
	case T_TIMERFD:
		timerfd_settime(c->fd, 0, &its, NULL);
		break;
	default:
		timer_settime(c->timer, 0, &its, NULL);
		break;
	}
}

/* Wait for the next report; return the expiries it counts. */
static uint64_t twait(struct tctx *c)
{
	struct __kernel_timespec ts = { 5, 0 };
	struct timespec sts = { 5, 0 };
	struct ukevent uk;
	siginfo_t si;
	uint64_t n;
	int ret;

	switch (c->t) {
	case T_KEVENT:
	case T_KPOSIX:
		/* EINTR without a signal: see engine_eintr(). */
		while ((ret = kevent_get_events(c->fd, 1, 1, &ts, &uk, 0)) < 0 &&
		       errno == EINTR)
			;
		if (ret != 1)
			fail("%s: %d events (%s)", tmech_name[c->t], ret,
			     ret < 0 ? strerror(errno) : "timed out");
		if (uk.ret_flags != KEVENT_RET_DONE)
			fail("%s: ret_flags %#x", tmech_name[c->t],
			     uk.ret_flags);
		/* KEVENT_TIMER counts in [1], the POSIX timer in [0]. */
		n = c->t == T_KEVENT ? uk.ret_data[1] : uk.ret_data[0];
		if (!n)
			fail("%s: a report of no expiry", tmech_name[c->t]);
		return n;
	case T_TIMERFD:
		if (read(c->fd, &n, sizeof(n)) != sizeof(n))
			fail("timerfd: read: %s", strerror(errno));
		return n;
	default:
		while ((ret = sigtimedwait(&c->set, &si, &sts)) < 0 &&
		       errno == EINTR)
			;
		if (ret != SIGRTMIN)
			fail("posix-signal: sigtimedwait: %d", ret);
		return (uint64_t)si.si_overrun + 1;
	}
}

static void timer_one(enum tmech t, int periodic, int samples, int rep)
{
	uint64_t *late = xcalloc(samples, sizeof(uint64_t)), t0, t1, k, n;
	uint64_t med, p99, max;
	struct tctx c;
	int i;

	tctx_init(&c, t);
	if (!periodic) {
		for (i = 0; i < samples; i++) {
			t0 = now_ns();
			tarm(&c, 0);
			n = twait(&c);
			t1 = now_ns();
			if (n != 1)
				fail("%s one-shot: %llu expiries",
				     tmech_name[t], (unsigned long long)n);
			late[i] = t1 - t0 > PERIOD_NS ? t1 - t0 - PERIOD_NS : 0;
			if (t1 - t0 < PERIOD_NS)
				fail("%s one-shot: reported after %llu ns, "
				     "early", tmech_name[t],
				     (unsigned long long)(t1 - t0));
		}
	} else {
		k = 0;
		t0 = now_ns();
		tarm(&c, 1);
		for (i = 0; i < samples; i++) {
			k += twait(&c);
			t1 = now_ns();
			if (t1 < t0 + k * PERIOD_NS)
				fail("%s periodic: expiry %llu reported early",
				     tmech_name[t], (unsigned long long)k);
			late[i] = t1 - (t0 + k * PERIOD_NS);
		}
		t1 = now_ns();
		tdisarm(&c);
		/*
		 * Never more expiries than periods passed.  (Fewer may be
		 * reported by the last wakeup than have passed by t1: a
		 * vCPU the host does not run for a while still sees the
		 * time go on.)
		 */
		n = (t1 - t0) / PERIOD_NS;
		if (k > n + 1)
			fail("%s periodic: %llu expiries reported in %llu "
			     "periods", tmech_name[t], (unsigned long long)k,
			     (unsigned long long)n);
	}
	tctx_free(&c);
	summary(late, samples, &med, &p99, &max);
	if (opt.smoke)
		tap_ok("timer %s %s: %d reports, counts add up",
		       tmech_name[t], periodic ? "periodic" : "one-shot",
		       samples);
	else
		result("wl=timer mode=%s mech=%s rep=%d med_us=%.1f "
		       "p99_us=%.1f max_us=%.1f samples=%d",
		       periodic ? "periodic" : "oneshot", tmech_name[t], rep,
		       med / 1e3, p99 / 1e3, max / 1e3, samples);
	free(late);
}

/* kbench timer [-s SAMPLES] */
int wl_timer(int argc, char **argv)
{
	int samples = 300, ch, rep;

	while ((ch = getopt(argc, argv, "s:")) != -1) {
		switch (ch) {
		case 's': samples = atoi(optarg); break;
		default: die("usage: timer [-s SAMPLES]");
		}
	}
	for (rep = 1; rep <= opt.reps; rep++)
		for (int periodic = 0; periodic <= 1; periodic++)
			for (int t = 0; t < T_NR; t++)
				timer_one(t, periodic, samples, rep);
	return 0;
}
