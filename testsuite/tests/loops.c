// SPDX-License-Identifier: GPL-2.0
/*
 * The event loops of kevent(7) ("Writing an event loop") and the facts
 * the manual states for them: ready at ADD on each source page, end of
 * stream and close per source, kevent_ctl(2)'s write-back and its
 * whole-call EINVAL, which request flags combine (ukevent(2type)), and
 * the limits and waiters of kevent_get_events(2).
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "tap.h"
#include "kevent_sys.h"
#include "harness.h"

#define RECV		KEVENT_SOCKET_RECV
#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)

static void new_pipe(int p[2])
{
	must(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2: %s",
	     strerror(errno));
}

/*
 * Ready at ADD, for one source: the entry is handed back with DONE and
 * not kept; with ALWAYS_QUEUE it is kept and delivered.  Two points.
 */
static void ready_at_add(const char *page, struct ukevent uk)
{
	struct ukevent ev;
	int q = new_queue(KEVENT_INIT_CLOEXEC), n, later;

	n = ctl1(q, KEVENT_CTL_ADD, &uk);
	later = harvest(q, &ev, 1);
	ok(n == 1 && uk.ret_flags == KEVENT_RET_DONE && later == 0,
	   "ready at ADD: handed back with DONE alone (%d, flags %#x), not kept: no later event (%d) [%s ready-when-added]",
	   n, uk.ret_flags, later, page);
	close(q);

	q = new_queue(KEVENT_INIT_CLOEXEC);
	uk.req_flags |= KEVENT_REQ_ALWAYS_QUEUE;
	uk.ret_flags = 0;
	n = ctl1(q, KEVENT_CTL_ADD, &uk);
	later = harvest(q, &ev, 1);
	ok(n == 0 && later == 1 && ev.ptr == uk.ptr,
	   "ready at ADD with ALWAYS_QUEUE: not handed back (%d), delivered (%d) [%s ready-when-added]",
	   n, later, page);
	close(q);
}

static void test_ready_at_add(void)
{
	struct sockaddr_un sa;
	int p[2], l, c;

	new_pipe(p);
	must(write(p[1], "x", 1) == 1, "write");
	ready_at_add("kevent_pipe.7", fd_ukevent(KEVENT_PIPE, p[0], RECV, 0, 1));
	ready_at_add("kevent_poll.7",
		     fd_ukevent(KEVENT_POLL, p[0], KEVENT_POLL_POLLIN, 0, 2));
	close(p[0]);
	close(p[1]);

	/* The listener added after a client connected. */
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/loops-%d",
		 (int)getpid());
	unlink(sa.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(l >= 0 && c >= 0 &&
	     bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	     listen(l, 4) == 0 &&
	     connect(c, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	     "listener: %s", strerror(errno));
	ready_at_add("kevent_socket.7",
		     fd_ukevent(KEVENT_SOCKET, l, KEVENT_SOCKET_ACCEPT, 0, 3));
	close(c);
	close(l);
	unlink(sa.sun_path);
}

/* An AF_UNIX stream pair whose first end q watches for RECV. */
static void watched_pair(int q, int sv[2], __u32 req_flags, __u64 ptr)
{
	must(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0, sv) == 0, "socketpair");
	must(add1(q, fd_ukevent(KEVENT_SOCKET, sv[0], RECV, req_flags, ptr)) == 0,
	     "ADD");
}

/* End of stream of an AF_UNIX stream, and nothing more at close. */
static void test_end_of_stream(void)
{
	struct ukevent ev;
	int q = new_queue(KEVENT_INIT_CLOEXEC), sv[2], n;
	char c;

	/* The peer shuts down its sending side: ready, a read of 0. */
	watched_pair(q, sv, KEVENT_REQ_ET, 1);
	shutdown(sv[1], SHUT_WR);
	n = wait1(q, &ev, 2000);
	ok(n == 1 && ev.ret_flags == KEVENT_RET_DONE &&
	   read(sv[0], &c, 1) == 0,
	   "AF_UNIX stream, peer SHUT_WR: RECV ready (%d, flags %#x), read returns 0 [kevent_socket.7 end-of-stream]",
	   n, n == 1 ? ev.ret_flags : 0);
	close(sv[1]);
	n = wait1(q, &ev, 2000);
	ok(n == 1 && ev.ret_flags == BROKEN_DONE &&
	   (int)ev.ret_data[1] == -EPIPE,
	   "AF_UNIX stream, peer closed: reported broken with -EPIPE (%d, %d) [kevent_socket.7 end-of-stream]",
	   n, n == 1 ? (int)ev.ret_data[1] : 0);
	close(sv[0]);
	n = wait1(q, &ev, 200);
	is_int(n, 0, "a registration reported broken is not reported again at close [kevent_socket.7 close-reported-once]");
	close(q);
}

/* KEVENT_POLL with an event mask of 0: POLLERR and POLLHUP only. */
static void test_poll_event_zero(void)
{
	struct ukevent ev;
	int q = new_queue(KEVENT_INIT_CLOEXEC), p[2], n;

	new_pipe(p);
	n = add1(q, fd_ukevent(KEVENT_POLL, p[0], 0, KEVENT_REQ_ALWAYS_QUEUE, 7));
	must(write(p[1], "x", 1) == 1, "write");
	ok(n == 0 && wait1(q, &ev, 200) == 0,
	   "KEVENT_POLL with event 0: accepted (%d); data to read is not reported [kevent_poll.7 event-zero]",
	   n);
	close(p[1]);
	n = wait1(q, &ev, 2000);
	ok(n == 1 && (ev.ret_data[0] & KEVENT_POLL_POLLHUP) &&
	   !(ev.ret_data[0] & KEVENT_POLL_POLLIN),
	   "KEVENT_POLL with event 0: the writer's close is reported, POLLHUP alone (%d, %#x) [kevent_poll.7 event-zero]",
	   n, n == 1 ? ev.ret_data[0] : 0);
	close(p[0]);
	close(q);
}

/* kevent_ctl(2): ADD packs at the front; the rest is the caller's. */
static void test_ctl_write_back(void)
{
	struct ukevent uk[3];
	int q = new_queue(KEVENT_INIT_CLOEXEC), n;

	uk[0] = timer_ms(100000, 0, 10);
	uk[1] = fd_ukevent(KEVENT_PIPE, -1, RECV, 0, 11);	/* fails: EBADF */
	uk[2] = timer_ms(100000, 0, 12);
	n = sys_kevent_ctl(q, KEVENT_CTL_ADD, 3, uk);
	ok(n == 1 && uk[0].ptr == 11 && uk[0].ret_flags == BROKEN_DONE &&
	   (int)uk[0].ret_data[1] == -EBADF && uk[1].ptr == 11 &&
	   uk[1].ret_flags == 0 && uk[2].ptr == 12,
	   "ADD: the failed entry is packed at the front (%d, ptr %llu); the entries after it are as the caller wrote them [kevent_ctl.2 packed-write-back]",
	   n, (unsigned long long)uk[0].ptr);
	close(q);
}

/*
 * The whole-call EINVAL, and the pattern of kevent_ctl(2): one entry at
 * a time, EINVAL for a single entry taken as ENOENT.
 */
static void test_ctl_count(void)
{
	struct ukevent uk[2];
	int q = new_queue(KEVENT_INIT_CLOEXEC), a[2], b[2], n, one, two;

	new_pipe(a);
	new_pipe(b);
	uk[0] = fd_ukevent(KEVENT_PIPE, a[0], RECV, 0, 20);
	uk[1] = fd_ukevent(KEVENT_PIPE, b[0], RECV, 0, 21);
	must(add1(q, uk[0]) == 0 && add1(q, uk[1]) == 0, "ADD");
	close(b[0]);
	close(b[1]);		/* the pipe goes: its registration leaves */
	n = sys_kevent_ctl(q, KEVENT_CTL_REMOVE, 2, uk);
	ok(n == -1 && errno == EINVAL,
	   "REMOVE of 2 after one object went away fails whole with EINVAL (%d) [kevent_ctl.2 EINVAL num-too-big] [kevent_ctl.2 whole-call-einval]",
	   n);
	one = ctl1(q, KEVENT_CTL_REMOVE, &uk[0]);
	two = ctl1(q, KEVENT_CTL_REMOVE, &uk[1]);
	ok(one == 1 && uk[0].ret_flags == KEVENT_RET_DONE && two == -1 &&
	   errno == EINVAL,
	   "one at a time: the live one is removed (%d), the gone one on the emptied queue gives EINVAL (%d) [kevent_ctl.2 whole-call-einval]",
	   one, two);
	close(a[0]);
	close(a[1]);
	close(q);
}

/*
 * KEVENT_CTL_ADD(2const): an event received is added again as it is;
 * its ret_* fields are not read, and its event may change.
 */
static void test_add_again(void)
{
	struct ukevent ev, again;
	int q = new_queue(KEVENT_INIT_CLOEXEC), p[2], n;

	new_pipe(p);
	must(add1(q, fd_ukevent(KEVENT_PIPE, p[0], RECV, KEVENT_REQ_ONESHOT |
			   KEVENT_REQ_ALWAYS_QUEUE, 35)) == 0, "ADD");
	must(write(p[1], "x", 1) == 1, "write");
	must(wait1(q, &ev, 2000) == 1 && ev.ret_flags == KEVENT_RET_DONE,
	     "the one-shot report");
	/* As received, and with more in ret_*: a report has none of it. */
	again = ev;
	again.ret_flags |= KEVENT_RET_BROKEN | KEVENT_RET_COPY_FAILED;
	again.ret_data[0] = 0xdead;
	again.ret_data[1] = (__u32)-EPIPE;
	n = ctl1(q, KEVENT_CTL_ADD, &again);
	ok(n == 0 && wait1(q, &ev, 2000) == 1 && ev.ptr == 35 &&
	   ev.ret_flags == KEVENT_RET_DONE && ev.ret_data[0] == 0 &&
	   ev.ret_data[1] == 0,
	   "the report added again with BROKEN and errors in ret_*: accepted (%d), reported clean (flags %#x, ret_data %u %u) [KEVENT_CTL_ADD.2const ret-fields-ignored] [kevent.7 add-again]",
	   n, ev.ret_flags, ev.ret_data[0], ev.ret_data[1]);

	/* Its mask changed on the way back: a pipe with room is writable. */
	ev.event = KEVENT_SOCKET_SEND;
	n = ctl1(q, KEVENT_CTL_ADD, &ev);
	ok(n == 0 && wait1(q, &again, 2000) == 1 && again.ptr == 35 &&
	   again.event == KEVENT_SOCKET_SEND,
	   "added again with SEND for RECV: accepted (%d) and reported for SEND (event %#x) [KEVENT_CTL_ADD.2const ret-fields-ignored] [kevent.7 add-again]",
	   n, again.event);
	close(p[0]);
	close(p[1]);
	close(q);
}

/* kevent(7): a one-shot entry added again after its peer closed. */
static void test_readd_broken(void)
{
	struct ukevent ev;
	int q = new_queue(KEVENT_INIT_CLOEXEC), sv[2], n;
	char c;

	watched_pair(q, sv, KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE, 36);
	must(write(sv[1], "x", 1) == 1, "write");
	must(wait1(q, &ev, 2000) == 1 && read(sv[0], &c, 1) == 1,
	     "the one-shot report, read");
	close(sv[1]);		/* after the read, before the ADD */
	n = ctl1(q, KEVENT_CTL_ADD, &ev);
	ok(n == 1 && ev.ptr == 36 && ev.ret_flags == BROKEN_DONE &&
	   (int)ev.ret_data[1] == -EPIPE,
	   "the report added again after the peer closed: handed back (%d), broken with -EPIPE (flags %#x, %d) [kevent.7 readd-broken]",
	   n, ev.ret_flags, (int)ev.ret_data[1]);
	close(sv[0]);
	close(q);
}

/* ukevent(2type): how the request flags combine. */
static void test_flag_combinations(void)
{
	struct ukevent ev, uk;
	int q = anchored_queue(), p[2], n;	/* REMOVE of 1 is not refused */
	char c;

	new_pipe(p);
	uk = fd_ukevent(KEVENT_PIPE, p[0], RECV, KEVENT_REQ_ONESHOT | KEVENT_REQ_ET,
		   30);
	must(add1(q, uk) == 0, "ADD");
	must(write(p[1], "x", 1) == 1, "write");
	n = wait1(q, &ev, 2000);
	ok(n == 1 && ctl1(q, KEVENT_CTL_REMOVE, &uk) == 1 &&
	   uk.ret_flags == BROKEN_DONE && (int)uk.ret_data[1] == -ENOENT,
	   "ONESHOT|ET: delivered once (%d), then removed: ONESHOT prevails [ukevent.2type combining-flags]",
	   n);
	must(read(p[0], &c, 1) == 1, "read");

	uk = fd_ukevent(KEVENT_PIPE, p[0], RECV,
		   KEVENT_REQ_ONESHOT | KEVENT_REQ_LAST_CHECK, 31);
	must(add1(q, uk) == 0, "ADD");
	must(write(p[1], "x", 1) == 1, "write");
	must(read(p[0], &c, 1) == 1, "read");	/* gone before the harvest */
	n = harvest(q, &ev, 1);
	uk.ret_flags = 0;
	ok(n == 0 && ctl1(q, KEVENT_CTL_REMOVE, &uk) == 1 &&
	   uk.ret_flags == KEVENT_RET_DONE,
	   "ONESHOT|LAST_CHECK on a pipe read before the harvest: not reported (%d), and still registered [ukevent.2type combining-flags]",
	   n);

	uk = timer_ms(20, KEVENT_REQ_WAKEUP_ALL | KEVENT_REQ_ET |
		      KEVENT_REQ_LAST_CHECK | KEVENT_REQ_ALWAYS_QUEUE, 32);
	n = ctl1(q, KEVENT_CTL_ADD, &uk);
	ok(n == 0 && wait1(q, &ev, 2000) == 1 && ev.ptr == 32,
	   "a timer takes every other flag at once, and fires (%d) [ukevent.2type combining-flags]",
	   n);
	close(p[0]);
	close(p[1]);
	close(q);
}

/* kevent_timer(7): KEVENT_CTL_READY's count is taken at delivery. */
static void test_timer_ready_count(void)
{
	struct ukevent ev, uk = timer_ms(20, 0, 40);
	int q = new_queue(KEVENT_INIT_CLOEXEC), n;

	must(add1(q, uk) == 0, "ADD");
	must(ctl1(q, KEVENT_CTL_READY, &uk) == 0, "READY");
	msleep(110);
	n = harvest(q, &ev, 1);
	ok(n == 1 && ev.ret_data[1] >= 3,
	   "READY at once, delivered 110 ms later: ret_data[1] counts the expiries at the delivery (%u, want >= 3) [kevent_timer.7 ready-count-at-delivery]",
	   n == 1 ? ev.ret_data[1] : 0);
	close(q);
}

/* kevent_get_events(2) NOTES: min_nr, max_nr. */
static void test_limits(void)
{
	struct ukevent *buf = calloc(2, sizeof(*buf));
	int q = new_queue(KEVENT_INIT_CLOEXEC), p[2], n;
	long long start;

	must(buf != NULL, "calloc");
	new_pipe(p);
	must(write(p[1], "x", 1) == 1, "write");
	must(add1(q, fd_ukevent(KEVENT_PIPE, p[0], RECV, KEVENT_REQ_ALWAYS_QUEUE,
			   50)) == 0, "ADD");
	start = now_ns();
	n = sys_kevent_get_events(q, 2, 8, TSP(0, 200000000), buf, 0);
	ok(n == 1 && ms_since(start) >= 150,
	   "min_nr 2 with one registration: returns the one event at the timeout (%d after %lld ms) [kevent_get_events.2 min-nr-above-count]",
	   n, ms_since(start));
	n = sys_kevent_get_events(q, 1, 1U << 20, TSP(1, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 50,
	   "max_nr 1 << 20 on a buffer of 2 events: no cap, the call writes what it returns (%d) [kevent_get_events.2 max-nr-no-limit]",
	   n);
	free(buf);
	close(p[0]);
	close(p[1]);
	close(q);
}

struct waiter {
	int q;
	unsigned int ms;
	pid_t tid;
	int n;
	long long took_ms;
	struct ukevent ev;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	long long start;

	start = now_ns();
	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	w->n = sys_kevent_get_events(w->q, 1, 1,
				     TSP(w->ms / 1000, (w->ms % 1000) * 1000000LL),
				     &w->ev, 0);
	w->took_ms = ms_since(start);
	return NULL;
}

static void start_waiter(pthread_t *th, struct waiter *w, int q,
			 unsigned int ms)
{
	memset(w, 0, sizeof(*w));
	w->q = q;
	w->ms = ms;
	w->tid = 0;
	must(pthread_create(th, NULL, waiter_main, w) == 0, "pthread_create");
	while (!__atomic_load_n(&w->tid, __ATOMIC_ACQUIRE))
		msleep(1);
	must(wait_sleeping(w->tid, 2000), "the waiter did not sleep");
}

/* Which waiter is woken; closing the queue under a waiter. */
static void test_waiters(void)
{
	struct waiter a, b;
	pthread_t ta, tb;
	int q = new_queue(KEVENT_INIT_CLOEXEC), p[2];

	new_pipe(p);
	must(add1(q, fd_ukevent(KEVENT_PIPE, p[0], RECV, KEVENT_REQ_ONESHOT, 60)) == 0,
	     "ADD");
	start_waiter(&ta, &a, q, 1500);
	start_waiter(&tb, &b, q, 1500);
	must(write(p[1], "x", 1) == 1, "write");
	must(timed_join(ta, now_ns() + 5000000000LL) == 0 &&
	     timed_join(tb, now_ns() + 5000000000LL) == 0, "join");
	ok(a.n == 1 && b.n == 0,
	   "two threads asleep, one event: the one that slept longest gets it (%d, %d) [kevent.7 which-waiter]",
	   a.n, b.n);
	close(p[0]);
	close(p[1]);

	start_waiter(&ta, &a, q, 400);
	close(q);
	must(timed_join(ta, now_ns() + 5000000000LL) == 0, "join");
	ok(a.n == 0 && a.took_ms >= 300,
	   "closing the queue's descriptor does not end a wait: it returns at its timeout (%d after %lld ms) [kevent.7 close-queue-waiters]",
	   a.n, a.took_ms);
}

/* The minimal ring loop of kevent(7), over several wraps. */
static void test_ring_loop(void)
{
	enum { RING_SIZE = 4, NREG = 5, ROUNDS = 6 };
	struct ukevent uk[NREG];
	struct kevent_ring *ring = malloc(sizeof(*ring) +
					  RING_SIZE * sizeof(ring->event[0]));
	unsigned int uidx = 0, over = 0, seen = 0, i, r;
	int q, n, bad = 0;

	must(ring != NULL, "malloc");
	q = sys_kevent_init(ring, RING_SIZE, KEVENT_INIT_CLOEXEC);
	must(q >= 0, "kevent_init: %s", strerror(errno));
	for (i = 0; i < NREG; i++) {
		uk[i] = timer_ms(100000, 0, 70 + i);
		must(add1(q, uk[i]) == 0, "ADD");
	}
	for (r = 0; r < ROUNDS; r++) {
		unsigned int got = 0;

		must(sys_kevent_ctl(q, KEVENT_CTL_READY, NREG, uk) == 0,
		     "READY");
		while (got < NREG) {
			n = sys_kevent_wait(q, RING_SIZE, uidx, TSP(2, 0), 0);
			if (n <= 0) {
				bad++;
				break;
			}
			for (i = 0; i < (unsigned int)n; i++)
				if (ring->event[(uidx + i) % RING_SIZE].ptr < 70)
					bad++;
			got += (unsigned int)n;
			if (uidx + (unsigned int)n >= RING_SIZE)
				over++;
			uidx = (uidx + (unsigned int)n) % RING_SIZE;
			if (sys_kevent_commit(q, uidx, over) != n)
				bad++;
		}
		seen += got;
	}
	ok(!bad && seen == NREG * ROUNDS && ring->ring_over == over,
	   "the minimal ring loop: %u events over %u wraps, every commit accepted (%d bad) [kevent.7 minimal-ring-loop]",
	   seen, over, bad);
	close(q);
	free(ring);
}

/* kevent_init(2): the kernel checks no alignment of the ring. */
static void test_ring_alignment(void)
{
	static __u64 mem[1 + 2 * 5 + 1];	/* 8-aligned */
	struct kevent_ring *ring = (void *)((char *)mem + 4);
	struct ukevent ev;
	__u32 kidx;
	int q, n;

	q = sys_kevent_init(ring, 2, 0);
	must(q >= 0, "kevent_init at 4 bytes past 8: %s", strerror(errno));
	must(add1(q, timer_ms(10, KEVENT_REQ_ONESHOT, 80)) == 0, "ADD");
	n = sys_kevent_wait(q, 1, 0, TSP(2, 0), 0);
	memcpy(&kidx, (char *)ring, sizeof(kidx));
	memcpy(&ev, (char *)ring + sizeof(struct kevent_ring), sizeof(ev));
	ok(n == 1 && kidx == 1 && ev.ptr == 80,
	   "a ring 4 bytes off 8-byte alignment is accepted and written (%d, kidx %u) [kevent_init.2 ring-alignment]",
	   n, kidx);
	close(q);
}

/*
 * The recipe for several threads: ONESHOT|ALWAYS_QUEUE, added again by
 * the thread that served it, and a level-triggered WAKEUP_ALL pipe that
 * stops them all.
 */
enum { NPIPES = 20, NWRITES = 400, NTHREADS = 2, STOP = 0 };
static int pool_q, pool_pipes[NPIPES][2], stop_pipe[2];
static atomic_int pool_read, pool_empty, pool_stopped;

static void *consumer(void *arg)
{
	struct ukevent ev[16];
	int i, n, got;
	char buf[64];
	ssize_t len;

	(void)arg;
	for (;;) {
		n = sys_kevent_get_events(pool_q, 1, 16, TSP(10, 0), ev, 0);
		if (n == 0 || (n == -1 && errno == EINTR))
			continue;	/* woken by the stop, held by another */
		if (n < 0)
			return NULL;
		for (i = 0; i < n; i++) {
			if (ev[i].ptr == STOP) {
				atomic_fetch_add(&pool_stopped, 1);
				return NULL;
			}
			got = 0;
			while ((len = read((int)ev[i].id.raw[0], buf,
					   sizeof(buf))) > 0)
				got += (int)len;
			atomic_fetch_add(&pool_read, got);
			if (!got)
				atomic_fetch_add(&pool_empty, 1);
			if (sys_kevent_ctl(pool_q, KEVENT_CTL_ADD, 1, &ev[i]))
				return NULL;
		}
	}
}

static void test_threads(void)
{
	pthread_t th[NTHREADS];
	struct ukevent uk;
	int i, joined = 0;
	long long end;

	pool_q = new_queue(KEVENT_INIT_CLOEXEC);
	new_pipe(stop_pipe);
	uk = fd_ukevent(KEVENT_PIPE, stop_pipe[0], RECV,
		   KEVENT_REQ_WAKEUP_ALL | KEVENT_REQ_ALWAYS_QUEUE, STOP);
	must(add1(pool_q, uk) == 0, "ADD stop");
	for (i = 0; i < NPIPES; i++) {
		new_pipe(pool_pipes[i]);
		uk = fd_ukevent(KEVENT_PIPE, pool_pipes[i][0], RECV,
			   KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE,
			   100 + (__u64)i);
		must(add1(pool_q, uk) == 0, "ADD");
	}
	for (i = 0; i < NTHREADS; i++)
		must(pthread_create(&th[i], NULL, consumer, NULL) == 0,
		     "pthread_create");
	for (i = 0; i < NWRITES; i++) {
		must(write(pool_pipes[i % NPIPES][1], "x", 1) == 1, "write");
		if (i % 16 == 0)
			msleep(1);
	}
	end = now_ns() + 10000000000LL;
	while (atomic_load(&pool_read) < NWRITES && now_ns() < end)
		msleep(5);
	ok(atomic_load(&pool_read) == NWRITES && atomic_load(&pool_empty) == 0,
	   "%d threads, ONESHOT|ALWAYS_QUEUE added again after each event: every byte read (%d of %d), no report found nothing to read (%d) [kevent.7 threads-oneshot]",
	   NTHREADS, atomic_load(&pool_read), NWRITES,
	   atomic_load(&pool_empty));
	must(write(stop_pipe[1], "", 1) == 1, "write stop");
	for (i = 0; i < NTHREADS; i++)
		joined += timed_join(th[i], now_ns() + 5000000000LL) == 0;
	ok(joined == NTHREADS && atomic_load(&pool_stopped) == NTHREADS,
	   "one byte in a level-triggered WAKEUP_ALL pipe stops every thread (%d joined, %d saw it) [kevent.7 stop-threads]",
	   joined, atomic_load(&pool_stopped));
	for (i = 0; i < NPIPES; i++) {
		close(pool_pipes[i][0]);
		close(pool_pipes[i][1]);
	}
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	close(pool_q);
}

int main(void)
{
	plan(29);
	tap_watchdog(120);
	kevent_require();

	test_ready_at_add();		/* 6 */
	test_end_of_stream();		/* 3 */
	test_poll_event_zero();		/* 2 */
	test_ctl_write_back();		/* 1 */
	test_ctl_count();		/* 2 */
	test_add_again();		/* 2 */
	test_readd_broken();		/* 1 */
	test_flag_combinations();	/* 3 */
	test_timer_ready_count();	/* 1 */
	test_limits();			/* 2 */
	test_waiters();			/* 2 */
	test_ring_loop();		/* 1 */
	test_ring_alignment();		/* 1 */
	test_threads();			/* 2 */
	return tap_done();
}
