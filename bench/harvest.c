// SPDX-License-Identifier: MIT
/*
 * Workloads 1 and 3: the harvest, in the shape of Eric Dumazet's
 * epoll_bench (2006), and its scaling with idle registrations.
 *
 * N pipes (or AF_UNIX socket pairs, or TCP loopback connections) are
 * registered; each round writes a
 * byte into A of them, taken in turn around the set, then harvests until
 * A events came, reading each reported byte as it goes.  Every event
 * must name a descriptor written this round and not reported yet; at
 * the end, a harvest that does not block must find nothing.  Two rates
 * are printed: the events per second of the whole round (write, harvest,
 * read: what a program sees), and of the harvest calls alone (the time
 * spent in kevent_wait() + kevent_commit(), kevent_get_events(),
 * epoll_wait(), io_uring_enter() or poll()).  The second leaves out what
 * each mechanism does in the writer's system call (epoll and kevent
 * queue the event there; io_uring with DEFER_TASKRUN only queues task
 * work), so the first is the one to compare.
 */
#include <getopt.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kbench.h"

struct fds {
	int n;
	enum kind kind;
	int *rfd, *wfd;
};

static const char *const kind_name[] = {
	[K_PIPE] = "pipe",
	[K_UNIX] = "unix",
	[K_TCP] = "tcp",
};

/*
 * A TCP connection over loopback, made with @lfd listening: the
 * accepted end reads, the connecting end writes, without Nagle's delay
 * (a byte a round would otherwise wait for the delayed ACK).
 */
static void tcp_pair(int lfd, int p[2])
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int one = 1;

	if (getsockname(lfd, (struct sockaddr *)&sin, &len))
		die("getsockname: %s", strerror(errno));
	p[1] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p[1] < 0 || connect(p[1], (struct sockaddr *)&sin, len))
		die("TCP connect: %s", strerror(errno));
	p[0] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (p[0] < 0)
		die("accept: %s", strerror(errno));
	if (setsockopt(p[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    fcntl(p[1], F_SETFL, O_NONBLOCK))
		die("TCP_NODELAY: %s", strerror(errno));
}

static void make_fds(struct fds *f, int n, enum kind kind)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int p[2], lfd = -1, ret;

	f->n = n;
	f->kind = kind;
	f->rfd = xcalloc(n, sizeof(int));
	f->wfd = xcalloc(n, sizeof(int));
	if (kind == K_TCP) {
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    listen(lfd, 16))
			die("TCP listener: %s", strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		ret = 0;
		if (kind == K_PIPE)
			ret = pipe2(p, O_CLOEXEC | O_NONBLOCK);
		else if (kind == K_UNIX)
			ret = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
					 SOCK_NONBLOCK, 0, p);
		else
			tcp_pair(lfd, p);
		if (ret)
			die("%s %d of %d: %s", kind_name[kind], i, n,
			    strerror(errno));
		f->rfd[i] = p[0];
		f->wfd[i] = p[1];
	}
	if (lfd >= 0)
		close(lfd);
}

static void free_fds(struct fds *f)
{
	for (int i = 0; i < f->n; i++) {
		close(f->rfd[i]);
		close(f->wfd[i]);
	}
	free(f->rfd);
	free(f->wfd);
}

struct rounds {
	unsigned long rounds, events, calls, eintr;
	uint64_t ns, harvest_ns;
	/*
	 * The fastest call that took a whole round's events, and the
	 * fastest round: the host's load only ever adds time, so the
	 * minimum is the cost with the least interference.
	 */
	uint64_t hmin, rmin;
};

/* A byte into descriptors @base .. @base + @a - 1, around the set of @n. */
static void write_round(struct fds *f, int n, int base, int a,
			unsigned char *expect)
{
	char c = 'x';

	for (int j = 0; j < a; j++) {
		int i = (base + j) % n;

		if (write(f->wfd[i], &c, 1) != 1)
			die("write: %s", strerror(errno));
		expect[i] = 1;
	}
}

/*
 * The @k events of @idx: each must be a descriptor written this round
 * and not reported yet, whose byte is then read.  With @retries (the
 * null round, which reads without being told), a byte not there yet is
 * waited for and each try counted: TCP over loopback may deliver it
 * from ksoftirqd, after the write returned.
 */
static void take_events(const char *what, unsigned long round, struct fds *f,
			int n, unsigned char *expect, const int *idx, int k,
			unsigned long *retries)
{
	char c;

	for (int j = 0; j < k; j++) {
		int i = idx[j];

		if (i < 0 || i >= n || !expect[i])
			fail("%s: round %lu: event for descriptor %d, %s",
			     what, round, i, i < 0 || i >= n ?
			     "not registered" :
			     "not written or reported already");
		expect[i] = 0;
		while (retries && read(f->rfd[i], &c, 1) < 0 &&
		       errno == EAGAIN) {
			++*retries;
			sched_yield();
		}
		if (!retries && read(f->rfd[i], &c, 1) != 1)
			fail("%s: descriptor %d reported, nothing to read: %s",
			     what, i, strerror(errno));
	}
}

/*
 * Rounds of @a writes and their harvest over descriptors 0 .. @n - 1 of
 * @f, registered with @e, for @secs seconds (at least @min_rounds).
 */
static void run_rounds(struct engine *e, const char *what, struct fds *f,
		       int n, int a, double secs, unsigned long min_rounds,
		       struct rounds *r)
{
	unsigned char *expect = xcalloc(n, 1);
	int *idx = xcalloc(a, sizeof(int));
	uint64_t start, t0, t1, tr, limit = (uint64_t)(secs * 1e9);
	int base = 0, got, k;

	memset(r, 0, sizeof(*r));
	r->eintr = engine_eintr(e);
	r->hmin = r->rmin = UINT64_MAX;
	start = now_ns();
	do {
		tr = now_ns();
		write_round(f, n, base, a, expect);
		for (got = 0; got < a; got += k) {
			t0 = now_ns();
			k = engine_harvest(e, idx, a - got, 5000);
			t1 = now_ns();
			r->harvest_ns += t1 - t0;
			r->calls++;
			if (k == a && t1 - t0 < r->hmin)
				r->hmin = t1 - t0;
			if (k == 0)
				fail("%s: round %lu: %d of %d events lost "
				     "(none for 5 s)", what, r->rounds, a - got,
				     a);
			take_events(what, r->rounds, f, n, expect, idx, k,
				    NULL);
		}
		base = (base + a) % n;
		t1 = now_ns();
		if (t1 - tr < r->rmin)
			r->rmin = t1 - tr;
		r->rounds++;
		r->events += a;
	} while (now_ns() - start < limit || r->rounds < min_rounds);
	r->ns = now_ns() - start;
	r->eintr = engine_eintr(e) - r->eintr;
	k = engine_harvest(e, idx, a, 0);
	if (k)
		fail("%s: %d events after the last round (duplicates), "
		     "first for descriptor %d", what, k, idx[0]);
	free(expect);
	free(idx);
}

/*
 * The counted rounds: @rounds of them between two markers, and no clock
 * read, so that what the plugin counts is the writes, the harvest and
 * the reads alone.  @e is NULL for the null round: the same writes and
 * the same reads, with no mechanism between them, whose count is taken
 * from the others' to give each mechanism's own.  Return the harvest
 * calls made.
 */
static unsigned long count_rounds(struct engine *e, const char *what,
				  struct fds *f, int n, int a,
				  unsigned long rounds, unsigned long *retries)
{
	unsigned char *expect = xcalloc(n, 1);
	int *idx = xcalloc(a, sizeof(int));
	unsigned long r, calls = 0;
	int base = 0, got, k;

	settle();
	MARK(MARK_BEGIN);
	for (r = 0; r < rounds; r++) {
		write_round(f, n, base, a, expect);
		for (got = 0; got < a; got += k) {
			if (e) {
				k = engine_harvest(e, idx, a - got, 5000);
				calls++;
			} else {
				for (k = 0; k < a; k++)
					idx[k] = (base + k) % n;
			}
			if (k == 0)
				fail("%s: round %lu: %d of %d events lost "
				     "(none for 5 s)", what, r, a - got, a);
			take_events(what, r, f, n, expect, idx, k,
				    e ? NULL : retries);
		}
		base = (base + a) % n;
	}
	MARK(MARK_END);
	if (e && (k = engine_harvest(e, idx, a, 0)))
		fail("%s: %d events after the last round (duplicates), "
		     "first for descriptor %d", what, k, idx[0]);
	free(expect);
	free(idx);
	return calls;
}

static void usage_mechs(int *use, const char *list)
{
	if (parse_mechs(list, use))
		die("unknown mechanism in '%s'", list);
}

/*
 * kbench harvest [-n N] [-a A] [-k pipe|unix|tcp] [-m MECHS] [-b BATCH]
 *                [-R ROUNDS]
 *
 * -R: the counted bench, ROUNDS rounds between two markers for each
 * mechanism (null among them), instead of rounds for a given time.
 */
int wl_harvest(int argc, char **argv)
{
	int n = 1000, a = 100, batch = 1024, use[M_NR], ch, rep, m;
	unsigned long count = 0, calls, retries;
	enum kind kind = K_PIPE;
	struct engine *e;
	struct rounds r;
	struct fds sets[2], *f;
	char what[64];

	usage_mechs(use, "ring,getev,direct,epoll-lt,epoll-et,uring,poll");
	while ((ch = getopt(argc, argv, "n:a:k:m:b:R:")) != -1) {
		switch (ch) {
		case 'R': count = strtoul(optarg, NULL, 0); break;
		case 'n': n = atoi(optarg); break;
		case 'a': a = atoi(optarg); break;
		case 'b': batch = atoi(optarg); break;
		case 'k':
			kind = !strcmp(optarg, "unix") ? K_UNIX :
			       !strcmp(optarg, "tcp") ? K_TCP : K_PIPE;
			break;
		case 'm': usage_mechs(use, optarg); break;
		default: die("usage: harvest [-n N] [-a A] [-k pipe|unix|tcp] "
			     "[-m MECHS] [-b BATCH] [-R ROUNDS]");
		}
	}
	if (a > n || a > batch)
		die("harvest: A must be at most N and the batch");
	if (use[M_NULL] && !count)
		die("harvest: the null mechanism is for the counted bench (-R)");
	/*
	 * kevent's mechanisms take descriptors of their own: a pipe or a
	 * socket that kevent watched once keeps its storage, and every
	 * write and read of it then asks the storage whom to tell, which
	 * would weigh in the rounds of the other mechanisms, the null
	 * round's included, and so come off kevent's own count.
	 */
	raise_nofile(4L * n + 64);
	make_fds(&sets[0], n, kind);
	make_fds(&sets[1], n, kind);
	for (rep = 1; rep <= opt.reps; rep++) {
		for (m = 0; m < M_NR; m++) {
			if (!use[m])
				continue;
			f = &sets[engine_is_kevent(m)];
			snprintf(what, sizeof(what), "harvest %s n=%d",
				 mech_name[m], n);
			if (count) {
				e = NULL;
				if (m != M_NULL) {
					e = engine_new(m, n, batch);
					engine_add(e, f->rfd, 0, n, kind);
				}
				retries = 0;
				calls = count_rounds(e, what, f, n, a, count,
						     &retries);
				if (e && engine_rearms(e))
					fail("%s: %lu multishot polls ended",
					     what, engine_rearms(e));
				if (e)
					engine_free(e);
				counted("wl=harvest kind=%s n=%d ready=%d "
					"mech=%s rep=%d events=%lu rounds=%lu "
					"calls=%lu retries=%lu", kind_name[kind],
					n, a, mech_name[m], rep, count * a,
					count, calls, retries);
				if (opt.smoke)
					tap_ok("%s a=%d: %lu counted rounds, "
					       "none lost or repeated", what, a,
					       count);
				continue;
			}
			e = engine_new(m, n, batch);
			engine_add(e, f->rfd, 0, n, kind);
			run_rounds(e, what, f, n, a, opt.secs, 3, &r);
			if (engine_rearms(e))
				fail("%s: %lu multishot polls ended", what,
				     engine_rearms(e));
			engine_free(e);
			if (opt.smoke) {
				tap_ok("harvest %s %s n=%d a=%d: %lu events "
				       "in %lu rounds, none lost or repeated",
				       mech_name[m],
				       kind_name[kind], n, a,
				       r.events, r.rounds);
				continue;
			}
			result("wl=harvest kind=%s n=%d ready=%d mech=%s "
			       "rep=%d evs=%.0f hevs=%.0f events=%lu "
			       "rounds=%lu calls=%lu eintr=%lu hmin=%llu "
			       "rmin=%llu",
			       kind_name[kind], n, a,
			       mech_name[m], rep, r.events * 1e9 / r.ns,
			       r.events * 1e9 / r.harvest_ns, r.events,
			       r.rounds, r.calls, r.eintr,
			       (unsigned long long)r.hmin,
			       (unsigned long long)r.rmin);
		}
	}
	free_fds(&sets[0]);
	free_fds(&sets[1]);
	return 0;
}

static int parse_list(const char *s, int *v, int max)
{
	int n = 0;

	while (*s && n < max) {
		v[n++] = atoi(s);
		s = strchr(s, ',');
		if (!s)
			break;
		s++;
	}
	return n;
}

/*
 * kbench scale [-i IDLE,IDLE,...] [-a A] [-m MECHS] [-R ROUNDS]
 *
 * One instance per mechanism holds the idle registrations (eventfds,
 * which never fire), grown from one size to the next; the A active
 * pipes are registered for each run and removed after it, so that the
 * instances never see each other's events.  -R: the counted bench,
 * ROUNDS rounds between markers, as for harvest.
 */
int wl_scale(int argc, char **argv)
{
	int sizes[8], nsizes, a = 100, use[M_NR], ch, rep, m, s, maxidle;
	int *allfd, have = 0;
	unsigned long count = 0, calls;
	struct engine *e[M_NR] = { 0 };
	struct rounds r;
	struct fds f;
	char what[64];

	nsizes = parse_list("10,1000,10000,100000", sizes, 8);
	usage_mechs(use, "ring,getev,epoll-lt,epoll-et,uring");
	while ((ch = getopt(argc, argv, "i:a:m:R:")) != -1) {
		switch (ch) {
		case 'R': count = strtoul(optarg, NULL, 0); break;
		case 'i': nsizes = parse_list(optarg, sizes, 8); break;
		case 'a': a = atoi(optarg); break;
		case 'm': usage_mechs(use, optarg); break;
		default: die("usage: scale [-i IDLE,...] [-a A] [-m MECHS] "
			     "[-R ROUNDS]");
		}
	}
	if (use[M_POLL] || use[M_NULL])
		die("scale: poll(2) scans every descriptor, null has no "
		    "registrations; leave them out");
	maxidle = 0;
	for (s = 0; s < nsizes; s++)
		if (sizes[s] > maxidle)
			maxidle = sizes[s];
	raise_nofile(maxidle + 2L * a + 64);
	make_fds(&f, a, K_PIPE);
	/* Indexes 0 .. a-1: the active pipes; a ..: the idle eventfds. */
	allfd = xcalloc(a + maxidle, sizeof(int));
	memcpy(allfd, f.rfd, a * sizeof(int));
	for (int i = 0; i < maxidle; i++) {
		allfd[a + i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (allfd[a + i] < 0)
			die("eventfd %d of %d: %s", i, maxidle,
			    strerror(errno));
	}
	for (m = 0; m < M_NR; m++)
		if (use[m])
			e[m] = engine_new(m, a + maxidle, a);
	for (s = 0; s < nsizes; s++) {
		for (m = 0; m < M_NR; m++)
			if (e[m] && sizes[s] > have)
				engine_add(e[m], allfd, a + have, a + sizes[s],
					   K_IDLE);
		if (sizes[s] > have)
			have = sizes[s];
		for (rep = 1; rep <= opt.reps; rep++) {
			for (m = 0; m < M_NR; m++) {
				if (!e[m])
					continue;
				snprintf(what, sizeof(what),
					 "scale %s idle=%d", mech_name[m], have);
				engine_add(e[m], allfd, 0, a, K_PIPE);
				if (count) {
					calls = count_rounds(e[m], what, &f, a,
							     a, count, NULL);
					counted("wl=scale kind=pipe idle=%d "
						"ready=%d mech=%s rep=%d "
						"events=%lu rounds=%lu "
						"calls=%lu", have, a,
						mech_name[m], rep, count * a,
						count, calls);
				} else {
					run_rounds(e[m], what, &f, a, a,
						   opt.secs, 3, &r);
				}
				engine_del(e[m], allfd, 0, a, K_PIPE);
				if (engine_rearms(e[m]))
					fail("%s: multishot polls ended", what);
				if (opt.smoke) {
					tap_ok("scale %s idle=%d: %lu events, "
					       "none lost or repeated",
					       mech_name[m], have, count ?
					       count * a : r.events);
					continue;
				}
				if (count)
					continue;
				result("wl=scale idle=%d ready=%d mech=%s "
				       "rep=%d nspe=%.1f hnspe=%.1f "
				       "events=%lu rounds=%lu eintr=%lu "
				       "rminpe=%.1f",
				       have, a, mech_name[m], rep,
				       (double)r.ns / r.events,
				       (double)r.harvest_ns / r.events,
				       r.events, r.rounds, r.eintr,
				       (double)r.rmin / a);
			}
		}
	}
	for (m = 0; m < M_NR; m++)
		if (e[m])
			engine_free(e[m]);
	for (int i = 0; i < maxidle; i++)
		close(allfd[a + i]);
	free(allfd);
	free_fds(&f);
	return 0;
}
