// SPDX-License-Identifier: GPL-2.0
/*
 * Resource limits and long loops: regression tests for the kernel
 * review's findings C5 (a per-user limit on registrations, a per-object
 * limit that bounds a notification's walk, timers that cannot load the
 * CPU) and M7 (huge kevent_ctl() calls, close and fdinfo of a huge queue
 * stay preemptible).
 *
 * The test lowers and raises fs.kevent.max_user_kevents and
 * fs.kevent.max_object_kevents.  A parent process does nothing but
 * restore their values once the test is over, whatever becomes of it,
 * and bound its time.
 *
 * Usage: limits [PART...]   (default: every part)
 *
 * Conformance: checks the documented limits (fs.kevent.max_user_kevents),
 * and properties of this tree that another implementation need not
 * share: how long a huge call, close or fdinfo may take.
 */
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"
#include "child.h"

#define RECV		KEVENT_SOCKET_RECV
#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)
#define SYSCTL		"/proc/sys/fs/kevent/max_user_kevents"
#define OBJECT_SYSCTL	"/proc/sys/fs/kevent/max_object_kevents"
#define OBJECT_LIMIT	1024
/*
 * The longest a write() or kill() may take with a full object, in ms:
 * 1024 registrations take less than a tick of the emulated guest's
 * clock, and one user's quota on one object took 40 to 116 ms before
 * the limit.
 */
#define OBJECT_WALK_MS	20
#define NOBODY		65534
#define SMALL_LIMIT	1000

/* Most scheduling latency a sleeping thread may see, in ms. */
#define LATENCY_MS	500

static int slow_kernel;


static struct ukevent pipe_uk(int fd, __u64 ptr)
{
	return fd_ukevent(KEVENT_PIPE, fd, RECV, 0, ptr);
}

static int entry_err(const struct ukevent *uk, int err)
{
	return uk->ret_flags == BROKEN_DONE && (int)uk->ret_data[1] == -err;
}

/* ADD of one entry: 0, or the errno it came back with (-1: no copy). */
static int add_err(int q, struct ukevent uk)
{
	int r = ctl1(q, KEVENT_CTL_ADD, &uk);

	if (r == 0)
		return 0;
	if (r == 1 && (uk.ret_flags & KEVENT_RET_BROKEN))
		return -(int)uk.ret_data[1];
	return -1;
}

static int remove1(int q, struct ukevent uk)
{
	return ctl1(q, KEVENT_CTL_REMOVE, &uk) == 1 &&
	       uk.ret_flags == KEVENT_RET_DONE;
}

static int sysctl_read_path(const char *path, long *v)
{
	char buf[64];
	ssize_t n;
	int f = open(path, O_RDONLY | O_CLOEXEC);

	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*v = strtol(buf, NULL, 10);
	return 0;
}

static int sysctl_read(long *v)
{
	return sysctl_read_path(SYSCTL, v);
}

/* 0, or -1 with errno. */
static int sysctl_write_path(const char *path, long v)
{
	char buf[64];
	int f = open(path, O_WRONLY | O_CLOEXEC), n, err;

	if (f < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	if (write(f, buf, (size_t)n) != n) {
		err = errno;
		close(f);
		errno = err;
		return -1;
	}
	return close(f);
}

static int sysctl_write(long v)
{
	return sysctl_write_path(SYSCTL, v);
}

/* Raise a limit to at least v, if the kernel has it. */
static void sysctl_at_least(const char *path, long v)
{
	long cur;

	if (!sysctl_read_path(path, &cur) && cur < v &&
	    sysctl_write_path(path, v))
		bail_out("raise %s: %s", path, strerror(errno));
}

static void limit_at_least(long v)
{
	sysctl_at_least(SYSCTL, v);
}

/* Does /proc/kallsyms name KASAN?  Then the huge parts are scaled down. */
static int kasan_kernel(void)
{
	char line[256];
	FILE *f = fopen("/proc/kallsyms", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " kasan_report") != NULL;
	fclose(f);
	return found;
}

static void pin_cpu0(int on)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	if (on)
		CPU_SET(0, &set);
	else
		for (i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * A thread that sleeps 10 ms over and over and records the worst delay
 * beyond that: its scheduling latency while the main thread, on the same
 * CPU, is in a long system call.
 */
struct latency {
	pthread_t th;
	volatile int stop;
	pid_t tid;
	long long worst_ms;
	int sleeps;
};

static void *latency_thread(void *arg)
{
	struct latency *l = arg;
	struct timespec t = { 0, 10000000 };

	__atomic_store_n(&l->tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	while (!l->stop) {
		long long start = now_ns(), late;

		nanosleep(&t, NULL);
		late = ms_since(start) - 10;
		if (late > l->worst_ms)
			l->worst_ms = late;
		l->sleeps++;
	}
	return NULL;
}

static void latency_start(struct latency *l)
{
	memset(l, 0, sizeof(*l));
	if (pthread_create(&l->th, NULL, latency_thread, l))
		bail_out("pthread_create");
	while (!__atomic_load_n(&l->tid, __ATOMIC_SEQ_CST))
		msleep(1);
	/* Let it sleep a few times first. */
	while (l->sleeps < 3)
		msleep(5);
}

static long long latency_stop(struct latency *l)
{
	l->stop = 1;
	pthread_join(l->th, NULL);
	return l->worst_ms;
}

/* The default limit: > 0, 4 % of memory over a registration's size. */
static void part_default(void)
{
	long v = -1, mem_kb = 0, lo, hi;
	char line[256];
	FILE *f;
	int q, p[2];

	diag("C5: fs.kevent.max_user_kevents, its default from memory size");
	if (!ok(!sysctl_read(&v), "C5: " SYSCTL " exists")) {
		skip(4, "no sysctl");
		return;
	}
	ok(v > 0, "C5: the default limit is > 0 (%ld)", v);
	f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %ld kB", &mem_kb) == 1)
			break;
	if (f)
		fclose(f);
	/* 4 % of memory over a registration of 32 to 2048 bytes. */
	lo = mem_kb * 1024 / 25 / 2048;
	hi = mem_kb * 1024 / 25 / 32;
	ok(v >= lo && v <= hi, "C5: it scales with memory: %ld for MemTotal "
	   "%ld kB, within [%ld, %ld]", v, mem_kb, lo, hi);
	ok(sysctl_write(-1) == -1 && errno == EINVAL,
	   "C5: a negative limit is refused (EINVAL)");
	if (sysctl_write(0))
		bail_out("write 0 to " SYSCTL ": %s", strerror(errno));
	q = new_queue(0);
	if (pipe(p))
		bail_out("pipe");
	is_int(add_err(q, pipe_uk(p[0], 1)), ENOSPC,
	       "C5: limit 0: root's ADD gives ENOSPC too (root is not exempt) "
	       "[kevent_ctl.2 ENOSPC]");
	close(q);
	close(p[0]);
	close(p[1]);
	if (sysctl_write(v))
		bail_out("restore " SYSCTL ": %s", strerror(errno));
}

/* Room for either limit and one entry more. */
static struct ukevent big[(SMALL_LIMIT > OBJECT_LIMIT ? SMALL_LIMIT :
			   OBJECT_LIMIT) + 1];

static int timer_on(int q, timer_t *tid)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev._sigev_un._tid = q;
	sev.sigev_value.sival_ptr = NULL;
	return timer_create(CLOCK_MONOTONIC, &sev, tid);
}

static void nobody_child(void *arg)
{
	int q, q2, p[2], i, r, err;
	timer_t tid;

	(void)arg;
	cok(!setgroups(0, NULL) && !setgid(NOBODY) && !setuid(NOBODY) &&
	    getuid() == NOBODY, "C5: the child runs as uid %d", NOBODY);
	q = new_queue(0);
	if (pipe(p))
		_exit(2);
	for (i = 0; i <= SMALL_LIMIT; i++)
		big[i] = pipe_uk(p[0], (__u64)i);
	r = sys_kevent_ctl(q, KEVENT_CTL_ADD, SMALL_LIMIT + 1, big);
	cok(r == 1, "C5: ADD of %d entries in one call: one comes back "
	    "(got %d)", SMALL_LIMIT + 1, r);
	cok(r == 1 && big[0].ptr == SMALL_LIMIT && entry_err(&big[0], ENOSPC),
	    "C5: ... number %d, BROKEN with ENOSPC (ptr %llu, data %d) "
	    "[kevent_ctl.2 ENOSPC]", SMALL_LIMIT + 1,
	    (unsigned long long)big[0].ptr, (int)big[0].ret_data[1]);
	r = timer_on(q, &tid);
	err = errno;
	cok(r == -1 && err == ENOSPC,
	    "C5: at the limit, timer_create(SIGEV_KEVENT) fails with ENOSPC "
	    "(got %d, %s) [kevent_posix_timer.7 ENOSPC]", r,
	    r ? strerror(err) : "created");
	if (!r)
		timer_delete(tid);
	cok(remove1(q, pipe_uk(p[0], 0)), "C5: REMOVE of one registration");
	cok(add_err(q, pipe_uk(p[0], 0)) == 0,
	    "C5: ... gives its slot back: ADD works again");
	cok(add_err(q, pipe_uk(p[0], 2000)) == ENOSPC,
	    "C5: ... and the next ADD gives ENOSPC again");
	remove1(q, pipe_uk(p[0], 1));
	remove1(q, pipe_uk(p[0], 2));
	r = timer_on(q, &tid);
	cok(r == 0, "C5: two removed: timer_create(SIGEV_KEVENT) works");
	cok(add_err(q, pipe_uk(p[0], 3000)) == 0, "C5: ... one ADD more works");
	cok(add_err(q, pipe_uk(p[0], 3001)) == ENOSPC,
	    "C5: ... and the next gives ENOSPC: the POSIX timer is charged "
	    "[kevent_posix_timer.7 ENOSPC]");
	if (!r)
		timer_delete(tid);
	/* Its BROKEN report delivered: the registration is gone for sure. */
	while (harvest(q, big, 8) > 0)
		;
	cok(add_err(q, pipe_uk(p[0], 3001)) == 0,
	    "C5: timer_delete() gives its slot back");
	q2 = new_queue(0);
	cok(add_err(q2, pipe_uk(p[0], 1)) == ENOSPC,
	    "C5: the limit is per user: a second queue gets ENOSPC "
	    "[kevent_ctl.2 ENOSPC]");
	close(q);
	for (i = 0; i < SMALL_LIMIT; i++)
		big[i] = pipe_uk(p[0], (__u64)i);
	r = sys_kevent_ctl(q2, KEVENT_CTL_ADD, SMALL_LIMIT, big);
	cok(r == 0, "C5: close of the full queue gives every slot back: "
	    "%d ADDs on the other work (%d came back)", SMALL_LIMIT, r);
	close(q2);
}

static void part_nobody(void)
{
	int q, p[2], i, r;
	long orig;
	int have = !sysctl_read(&orig);

	diag("C5: a per-user limit on registrations, uid %d, limit %d",
	     NOBODY, SMALL_LIMIT);
	ok(have && !sysctl_write(SMALL_LIMIT),
	   "C5: the limit is lowered to %d", SMALL_LIMIT);
	q = new_queue(0);
	if (pipe(p))
		bail_out("pipe");
	for (i = 0; i <= SMALL_LIMIT; i++)
		big[i] = pipe_uk(p[0], (__u64)i);
	r = sys_kevent_ctl(q, KEVENT_CTL_ADD, SMALL_LIMIT + 1, big);
	ok(r == 1 && big[0].ptr == SMALL_LIMIT && entry_err(&big[0], ENOSPC),
	   "C5: root: ADD number %d gives ENOSPC (got %d) "
	   "[kevent_ctl.2 ENOSPC]", SMALL_LIMIT + 1, r);
	close(q);
	close(p[0]);
	close(p[1]);
	child_points(13, 20000, nobody_child, NULL, NULL, "C5 nobody", NULL);
	if (have && sysctl_write(orig))
		bail_out("restore " SYSCTL ": %s", strerror(errno));
}

static struct ukevent signal_uk(int sig, __u64 ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_SIGNAL;
	uk.id.raw_u64 = KEVENT_SIGNAL_NOMASK;
	uk.id.raw[0] |= (__u32)sig;
	uk.event = KEVENT_SIGNAL_DELIVERY;
	uk.ptr = ptr;
	return uk;
}

/*
 * Fill one object with registrations, in one call of OBJECT_LIMIT + 1
 * entries: the last comes back with ENOSPC.  Returns 1 if it did.
 */
static int fill_object(int q, struct ukevent (*make)(int, __u64), int id)
{
	int i, r;

	for (i = 0; i <= OBJECT_LIMIT; i++)
		big[i] = make(id, (__u64)i);
	r = sys_kevent_ctl(q, KEVENT_CTL_ADD, OBJECT_LIMIT + 1, big);
	return r == 1 && big[0].ptr == OBJECT_LIMIT &&
	       entry_err(&big[0], ENOSPC);
}

/*
 * The shortest of several rounds of @act on a full object, in us, each
 * round's reports harvested.  Interrupts and the host only add time:
 * the minimum is what the walk costs.
 */
static long long shortest_walk(int q, void (*act)(int), int arg)
{
	long long best = -1, t;
	int round, n;

	for (round = 0; round < 10; round++) {
		t = now_ns();
		act(arg);
		t = (now_ns() - t) / 1000;
		if (best < 0 || t < best)
			best = t;
		n = 0;
		while (n < OBJECT_LIMIT) {
			int got = sys_kevent_get_events(q, 1, OBJECT_LIMIT,
							TSP(1, 0), big, 0);

			if (got <= 0)
				return -1;
			n += got;
		}
	}
	return best;
}

static int walk_pipe[2];

static void write_byte(int fd)
{
	char c = 0;

	if (write(fd, "x", 1) != 1 || read(walk_pipe[0], &c, 1) != 1)
		_exit(3);
}

static void kill_self(int sig)
{
	if (kill(getpid(), sig))
		_exit(3);
}

static void object_child(void *arg)
{
	int q, q2, p2[2];
	long long us;

	(void)arg;
	cok(!setgroups(0, NULL) && !setgid(NOBODY) && !setuid(NOBODY) &&
	    getuid() == NOBODY, "C5: the child runs as uid %d", NOBODY);
	q = new_queue(0);
	q2 = new_queue(0);
	if (pipe(walk_pipe) || pipe(p2))
		_exit(2);
	cok(fill_object(q, pipe_uk, walk_pipe[0]),
	    "C5: %d registrations of one pipe: the next gives ENOSPC "
	    "[kevent_ctl.2 ENOSPC]", OBJECT_LIMIT);
	cok(add_err(q2, pipe_uk(walk_pipe[0], 0)) == ENOSPC,
	    "C5: the limit is per object: another queue gets ENOSPC too "
	    "[kevent_ctl.2 ENOSPC]");
	cok(add_err(q, pipe_uk(p2[0], 0)) == 0,
	    "C5: ... while another pipe can be watched");
	cok(remove1(q, pipe_uk(walk_pipe[0], 7)) &&
	    add_err(q2, pipe_uk(walk_pipe[0], 7)) == 0,
	    "C5: a REMOVE gives the object's slot back");
	remove1(q, pipe_uk(p2[0], 0));
	remove1(q2, pipe_uk(walk_pipe[0], 7));
	add_err(q, pipe_uk(walk_pipe[0], 7));
	us = shortest_walk(q, write_byte, walk_pipe[1]);
	cok(us >= 0 && us < OBJECT_WALK_MS * 1000,
	    "C5: a write() to the full pipe takes %lld us, under %d ms", us,
	    OBJECT_WALK_MS);
	close(q);
	close(q2);

	q = new_queue(0);
	cok(fill_object(q, signal_uk, SIGUSR1),
	    "C5: %d registrations of SIGUSR1: the next gives ENOSPC "
	    "[kevent_ctl.2 ENOSPC]", OBJECT_LIMIT);
	us = shortest_walk(q, kill_self, SIGUSR1);
	cok(us >= 0 && us < OBJECT_WALK_MS * 1000,
	    "C5: a kill() of the process takes %lld us, under %d ms", us,
	    OBJECT_WALK_MS);
	close(q);
}

/* fs.kevent.max_object_kevents bounds the walk of one object's kevents. */
static void part_object(void)
{
	long v = -1;
	int have;

	diag("C5: fs.kevent.max_object_kevents, uid %d", NOBODY);
	have = !sysctl_read_path(OBJECT_SYSCTL, &v);
	ok(have && v == OBJECT_LIMIT,
	   "C5: " OBJECT_SYSCTL " is %d by default (%ld) "
	   "[kevent.7 max-object-kevents]", OBJECT_LIMIT, v);
	ok(sysctl_write_path(OBJECT_SYSCTL, 0) == -1 && errno == EINVAL,
	   "C5: a limit of 0 is refused (EINVAL) [kevent.7 max-object-kevents]");
	limit_at_least(2 * OBJECT_LIMIT + 2);
	child_points(8, 30000, object_child, NULL, NULL, "C5 object", NULL);
}

/*
 * 200000 periodic 100 us timers nobody harvests cost no CPU: they re-arm
 * only once delivered.
 */
static void part_timers(void)
{
	unsigned int n = slow_kernel ? 20000 : 200000, i, chunk = 5000;
	long long t_add0, t_add1, t_h0, t_h1, worst, lo, hi, res_ns, per_ns;
	unsigned int *seen, bad = 0, dup = 0, low = 0, high = 0;
	unsigned int cmin = UINT32_MAX, cmax = 0;
	struct ukevent *buf;
	struct latency lat;
	struct timespec res;
	long orig;
	int have = !sysctl_read(&orig), q, r;

	diag("C5: %u periodic 100 us timers, never harvested, must not "
	     "stall the guest", n);
	if (clock_getres(CLOCK_MONOTONIC, &res))
		bail_out("clock_getres");
	res_ns = res.tv_sec * 1000000000LL + res.tv_nsec;
	per_ns = res_ns > 100000 ? res_ns : 100000;
	diag("C5: CLOCK_MONOTONIC resolution %lld ns: a 100 us period "
	     "expires every %lld ns", res_ns, per_ns);
	limit_at_least(n + 1000);
	buf = calloc(n + 1, sizeof(*buf));
	seen = calloc(n, sizeof(*seen));
	if (!buf || !seen)
		bail_out("calloc");
	pin_cpu0(1);
	q = new_queue(0);
	t_add0 = now_ns();
	for (i = 0; i < n; i += chunk) {
		unsigned int j;

		for (j = 0; j < chunk; j++)
			buf[j] = timer_ukevent(0, 100000, 0, i + j);
		r = sys_kevent_ctl(q, KEVENT_CTL_ADD, chunk, buf);
		if (r != 0)
			bad++;
	}
	t_add1 = now_ns();
	is_int(bad, 0, "C5: %u timers added in %lld ms", n,
	       (t_add1 - t_add0) / 1000000);
	latency_start(&lat);
	msleep(300);
	worst = latency_stop(&lat);
	ok(worst < LATENCY_MS, "C5: while they are armed, a thread on their "
	   "CPU sleeping 10 ms wakes at most %d ms late (%lld ms, %d sleeps)",
	   LATENCY_MS, worst, lat.sleeps);

	t_h0 = now_ns();
	r = sys_kevent_get_events(q, 0, n + 1, TSP(0, 0), buf, 0);
	t_h1 = now_ns();
	is_int(r, n, "C5: one harvest reports each timer (%lld ms)",
	       (t_h1 - t_h0) / 1000000);
	/* Each counts its expiries since it was armed, lazily. */
	lo = (t_h0 - t_add1) / per_ns * 9 / 10 - 2;
	hi = (t_h1 - t_add0) / 100000 + 2;
	for (i = 0; r > 0 && i < (unsigned int)r; i++) {
		__u64 ptr = buf[i].ptr;
		unsigned int c = buf[i].ret_data[1];

		if (ptr >= n || seen[ptr]++)
			dup++;
		if ((long long)c < lo || c < 1)
			low++;
		if ((long long)c > hi)
			high++;
		if (c < cmin)
			cmin = c;
		if (c > cmax)
			cmax = c;
	}
	diag("C5: counts from %u to %u; allowed [%lld, %lld]", cmin, cmax,
	     lo > 1 ? lo : 1, hi);
	is_int(dup, 0, "C5: ... once each");
	ok(!low && !high, "C5: ... each with the count of the periods since "
	   "it was armed (%u too low, %u too high)", low, high);
	t_h0 = now_ns();
	close(q);
	ok(1, "C5: close of the queue of %u timers (%lld ms)", n,
	   ms_since(t_h0));
	pin_cpu0(0);
	free(buf);
	free(seen);
	if (have && sysctl_write(orig))
		bail_out("restore " SYSCTL ": %s", strerror(errno));
}

/* Read a whole file; its size, or -1.  The first bytes go to head. */
static long long read_all(const char *path, char *head, size_t headlen)
{
	static char chunk[1 << 20];
	long long total = 0;
	ssize_t n;
	int f = open(path, O_RDONLY | O_CLOEXEC);

	if (f < 0)
		return -1;
	head[0] = '\0';
	while ((n = read(f, chunk, sizeof(chunk))) > 0) {
		if (!total) {
			size_t k = (size_t)n < headlen - 1 ? (size_t)n :
							     headlen - 1;

			memcpy(head, chunk, k);
			head[k] = '\0';
		}
		total += n;
	}
	close(f);
	return n < 0 ? -1 : total;
}

/* M7: one kevent_ctl() of 10^6 entries; fdinfo and close of the queue. */
static void part_bigctl(void)
{
	unsigned int n_max = slow_kernel ? 100000 : 1000000, n, i;
	long long t0, worst, size, per_ns;
	struct ukevent *buf;
	struct latency lat;
	char head[256], path[64], *k;
	long orig;
	int have = !sysctl_read(&orig), q, p[2], r;

	limit_at_least(n_max + 1000);
	/* One pipe carries them all: the walk of its kevents is not timed. */
	sysctl_at_least(OBJECT_SYSCTL, n_max);
	buf = malloc((size_t)n_max * sizeof(*buf));
	if (!buf || pipe(p))
		bail_out("malloc or pipe");
	for (i = 0; i < n_max; i++)
		buf[i] = pipe_uk(p[0], i);
	pin_cpu0(1);
	/*
	 * As many entries as this guest adds in about 8 s at the rate of a
	 * small ADD (a big one is about three times slower per entry on
	 * TCG), 10^6 at most, a tenth of that at least.
	 */
	q = new_queue(0);
	t0 = now_ns();
	if (sys_kevent_ctl(q, KEVENT_CTL_ADD, 10000, buf))
		bail_out("M7: ADD of 10000: %s", strerror(errno));
	per_ns = (now_ns() - t0) / 10000 + 1;
	close(q);
	n = 8000000000LL / per_ns < n_max ?
	    (unsigned int)(8000000000LL / per_ns) : n_max;
	if (n < n_max / 10)
		n = n_max / 10;
	diag("M7: a kevent_ctl() ADD of %u entries (%lld ns each), fdinfo and "
	     "close of that queue, with a thread on the same CPU measuring "
	     "its latency", n, per_ns);
	q = new_queue(0);

	latency_start(&lat);
	t0 = now_ns();
	r = sys_kevent_ctl(q, KEVENT_CTL_ADD, n, buf);
	t0 = ms_since(t0);
	worst = latency_stop(&lat);
	is_int(r, 0, "M7: ADD of %u entries in one call: all registered "
	       "(%lld ms)", n, t0);
	ok(worst < LATENCY_MS, "M7: ... meanwhile the other thread ran: at "
	   "most %d ms late (%lld ms)", LATENCY_MS, worst);
	free(buf);

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", q);
	latency_start(&lat);
	t0 = now_ns();
	size = read_all(path, head, sizeof(head));
	t0 = ms_since(t0);
	worst = latency_stop(&lat);
	k = strstr(head, "kevents:");
	ok(size > 0 && k && strtoul(k + 8, NULL, 10) == n,
	   "M7: its fdinfo can be read: %lld bytes in %lld ms, kevents %ld",
	   size, t0, k ? (long)strtoul(k + 8, NULL, 10) : -1L);
	ok(worst < LATENCY_MS, "M7: ... meanwhile the other thread ran: at "
	   "most %d ms late (%lld ms)", LATENCY_MS, worst);

	latency_start(&lat);
	t0 = now_ns();
	close(q);
	t0 = ms_since(t0);
	worst = latency_stop(&lat);
	ok(1, "M7: close of the queue of %u registrations (%lld ms)", n, t0);
	ok(worst < LATENCY_MS, "M7: ... meanwhile the other thread ran: at "
	   "most %d ms late (%lld ms)", LATENCY_MS, worst);
	pin_cpu0(0);
	close(p[0]);
	close(p[1]);
	if (have && sysctl_write(orig))
		bail_out("restore " SYSCTL ": %s", strerror(errno));
}

struct part {
	const char *name;
	unsigned int points;
	void (*fn)(void);
};

static const struct part parts[] = {
	{ "default", 5, part_default },
	{ "nobody", 15, part_nobody },
	{ "timers", 6, part_timers },
	{ "bigctl", 6, part_bigctl },
	{ "object", 10, part_object },
};

#define NPARTS (sizeof(parts) / sizeof(parts[0]))

static int worker(const int *want)
{
	unsigned int i, total = 0;

	for (i = 0; i < NPARTS; i++)
		if (want[i])
			total += parts[i].points;
	plan(total);
	tap_watchdog(50);
	kevent_require();
	/* A KASAN kernel, or an emulated arm64 guest, is many times slower. */
	slow_kernel = kasan_kernel() || tap_time_scale() > 1;
	diag("%ld CPUs online%s", sysconf(_SC_NPROCESSORS_ONLN),
	     slow_kernel ? "; a slow kernel (KASAN, or time scale > 1): the "
			    "huge parts are 10 times smaller" : "");
	for (i = 0; i < NPARTS; i++)
		if (want[i])
			parts[i].fn();
	return tap_done();
}

int main(int argc, char **argv)
{
	int j, want[NPARTS] = { 0 }, any = 0, st = -1, have, have_object;
	unsigned int i, limit;
	long orig, orig_object, cur;
	pid_t pid;

	for (j = 1; j < argc; j++) {
		for (i = 0; i < NPARTS; i++)
			if (!strcmp(argv[j], parts[i].name))
				break;
		if (i == NPARTS) {
			printf("Bail out! unknown part %s\n", argv[j]);
			return 1;
		}
		want[i] = any = 1;
	}
	for (i = 0; i < NPARTS; i++)
		if (!any)
			want[i] = 1;

	/* The parent restores the limits, whatever becomes of the test. */
	have = !sysctl_read(&orig);
	have_object = !sysctl_read_path(OBJECT_SYSCTL, &orig_object);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		return 1;
	}
	if (!pid)
		exit(worker(want));
	/* After the worker's own watchdog (50 s, scaled) has had its say. */
	limit = 50 * tap_time_scale() + 5;
	if (!reap_within(pid, limit * 1000LL, &st)) {
		kill(pid, SIGKILL);
		reap_within(pid, 3000, &st);
		printf("Bail out! limits: still running after %u s\n", limit);
		fflush(stdout);
	}
	if (have && (sysctl_read(&cur) || cur != orig) && sysctl_write(orig))
		printf("# could not restore " SYSCTL " to %ld: %s\n", orig,
		       strerror(errno));
	if (have_object &&
	    (sysctl_read_path(OBJECT_SYSCTL, &cur) || cur != orig_object) &&
	    sysctl_write_path(OBJECT_SYSCTL, orig_object))
		printf("# could not restore " OBJECT_SYSCTL " to %ld: %s\n",
		       orig_object, strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
