// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the ring: kevent_wait(2), kevent_commit(2), wraps, no loss.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <pthread.h>

#include "../lib/tap.h"
#include "../lib/kevent_sys.h"

/*
 * The consumer's view: pos counts committed slots since init, wpos the
 * slots the kernel wrote.  uidx = pos % size, over = pos / size.
 */
struct ring_q {
	int fd;
	unsigned int size;
	struct kevent_ring *ring;
	size_t mapped;
	unsigned long long pos, wpos;
};

static void rq_open(struct ring_q *q, unsigned int size)
{
	memset(q, 0, sizeof(*q));
	q->size = size;
	q->ring = ring_alloc(size, &q->mapped);
	if (!q->ring)
		bail_out("mmap");
	q->fd = sys_kevent_init(q->ring, size, 0);
	if (q->fd < 0)
		bail_out("kevent_init(ring, %u): %s", size, strerror(errno));
}

static void rq_close(struct ring_q *q)
{
	close(q->fd);
	munmap(q->ring, q->mapped);
}

static unsigned int rq_uidx(const struct ring_q *q)
{
	return (unsigned int)(q->pos % q->size);
}

/* Commit up to position p: kevent_commit(p % size, p / size). */
static int rq_commit_to(struct ring_q *q, unsigned long long p)
{
	int ret = sys_kevent_commit(q->fd, (unsigned int)(p % q->size),
				    (unsigned int)(p / q->size));

	if (ret > 0)
		q->pos = p;
	return ret;
}

static struct ukevent *rq_slot(struct ring_q *q, unsigned long long p)
{
	return &q->ring->event[p % q->size];
}

/*
 * Make n events ready now: ADD n ONESHOT 100 s timers, ptr base ..
 * base + n - 1, then KEVENT_CTL_READY them.  ONESHOT, so each is gone
 * once delivered and can be added again.
 */
static void make_ready(int fd, unsigned int n, __u64 base)
{
	struct ukevent uk[64];
	unsigned int i;

	for (i = 0; i < n; i++)
		uk[i] = timer_ukevent(100, i, KEVENT_REQ_ONESHOT, base + i);
	if (sys_kevent_ctl(fd, KEVENT_CTL_ADD, n, uk) != 0)
		bail_out("ADD of %u timers failed", n);
	for (i = 0; i < n; i++)
		uk[i] = timer_ukevent(100, i, KEVENT_REQ_ONESHOT, base + i);
	if (sys_kevent_ctl(fd, KEVENT_CTL_READY, n, uk) != 0)
		bail_out("READY of %u entries failed", n);
}

static void test_wait_errors(void)
{
	struct ring_q q;
	int fd = sys_kevent_init(NULL, 0, 0);

	is_err(sys_kevent_wait(fd, 1, 0, TSP(0, 0), 0), EINVAL,
	       "kevent_wait on a queue without a ring is EINVAL "
	       "[kevent_wait.2 EINVAL no-ring]");
	is_err(sys_kevent_commit(fd, 0, 0), EINVAL,
	       "kevent_commit on a queue without a ring is EINVAL "
	       "[kevent_commit.2 EINVAL no-ring]");
	close(fd);

	rq_open(&q, 4);
	is_err(sys_kevent_wait(q.fd, 5, 0, TSP(0, 0), 0), EINVAL,
	       "kevent_wait with num 5 > ring_size 4 is EINVAL "
	       "[kevent_wait.2 EINVAL num]");
	is_err(sys_kevent_wait(q.fd, 0xffffffffU, 0, TSP(0, 0), 0), EINVAL,
	       "kevent_wait with num 0xffffffff is EINVAL "
	       "[kevent_wait.2 EINVAL num]");
	is_err(sys_kevent_wait(q.fd, 1, 0, TSP(0, 0), 1U << 1), EINVAL,
	       "kevent_wait with flag 0x2 is EINVAL [kevent_wait.2 EINVAL flags]");
	is_err(sys_kevent_wait(q.fd, 1, 0, TSP(0, 0), 1U << 31), EINVAL,
	       "kevent_wait with flag 0x80000000 is EINVAL "
	       "[kevent_wait.2 EINVAL flags]");
	is_err(sys_kevent_commit(q.fd, 4, 0), EINVAL,
	       "kevent_commit with new_uidx == ring_size is EINVAL "
	       "[kevent_commit.2 EINVAL uidx-range]");
	is_err(sys_kevent_commit(q.fd, 0xffffffffU, 0), EINVAL,
	       "kevent_commit with new_uidx 0xffffffff is EINVAL "
	       "[kevent_commit.2 EINVAL uidx-range]");
	is_err(sys_kevent_commit(q.fd, 1, 0), EINVAL,
	       "kevent_commit beyond what the kernel wrote (nothing) is EINVAL "
	       "[kevent_commit.2 EINVAL uidx-unwritten]");
	is_int(sys_kevent_commit(q.fd, 0, 0), 0,
	       "kevent_commit at uidx returns 0");
	rq_close(&q);
}

static void test_wait_copies(void)
{
	struct ring_q q;
	int n, i, seen[4] = { 0 }, good = 1;
	struct ukevent *e;

	rq_open(&q, 8);
	for (i = 1; i <= 3; i++)
		setup_add(q.fd, timer_ukevent(0, 10000000U + (__u32)i,
					      KEVENT_REQ_ONESHOT, (__u64)i));
	msleep(60);
	n = sys_kevent_wait(q.fd, 8, 0, TSP(1, 0), 0);
	is_int(n, 3, "kevent_wait moves the 3 ready events into the ring");
	is_int(q.ring->ring_kidx, 3, "ring_kidx advances to 3");
	for (i = 0; i < 3; i++) {
		e = &q.ring->event[i];
		if (e->type != KEVENT_TIMER || e->ret_flags != KEVENT_RET_DONE ||
		    e->ptr < 1 || e->ptr > 3)
			good = 0;
		else
			seen[e->ptr]++;
	}
	ok(good && seen[1] == 1 && seen[2] == 1 && seen[3] == 1,
	   "slots 0..2 hold the three timer events, DONE, once each");
	is_int(q.ring->event[3].type, 0xffffffffU,
	       "slot 3 is not written");
	is_int(q.ring->ring_over, 0, "ring_over is still 0");
	is_int(sys_kevent_wait(q.fd, 8, 0, TSP(0, 0), 0), 0,
	       "the ONESHOT events were moved once");
	is_int(sys_kevent_commit(q.fd, 3, 0), 3, "kevent_commit returns 3 freed");

	/* num bounds how many are moved. */
	make_ready(q.fd, 3, 10);
	is_int(sys_kevent_wait(q.fd, 2, 3, TSP(1, 0), 0), 2,
	       "kevent_wait with num 2 moves 2 of 3 ready events");
	is_int(q.ring->ring_kidx, 5, "ring_kidx advances by 2");
	is_int(sys_kevent_wait(q.fd, 2, 3, TSP(1, 0), 0), 1,
	       "the third stays queued and comes with the next call");
	is_int(q.ring->ring_kidx, 6, "ring_kidx advances by 1");

	/* num 0 only waits. */
	make_ready(q.fd, 1, 20);
	is_int(sys_kevent_wait(q.fd, 0, 3, TSP(1, 0), 0), 0,
	       "kevent_wait with num 0 returns 0 when an event is ready");
	is_int(q.ring->ring_kidx, 6, "num 0 moves nothing");
	is_int(sys_kevent_wait(q.fd, 8, 3, TSP(1, 0), 0), 1,
	       "the event is still queued after num 0");
	rq_close(&q);
}

static void test_old_uidx(void)
{
	struct ring_q q;
	long long start;

	rq_open(&q, 4);
	setup_add(q.fd, timer_ms(100000, 0, 1));
	start = now_ns();
	is_int(sys_kevent_wait(q.fd, 4, 3, TSP(3, 0), 0), 0,
	       "old_uidx 3 != uidx 0: kevent_wait returns 0");
	ok(ms_since(start) < 1000, "old_uidx != uidx: does not sleep (%lld ms)",
	   ms_since(start));
	start = now_ns();
	is_int(sys_kevent_wait(q.fd, 4, 0, TSP(0, 100000000), 0), 0,
	       "old_uidx == uidx: waits for the timeout, returns 0");
	ok(ms_since(start) >= 99, "old_uidx == uidx: it slept (%lld ms)",
	   ms_since(start));
	rq_close(&q);
}

static void test_commit_rules(void)
{
	struct ring_q q;

	rq_open(&q, 4);
	make_ready(q.fd, 2, 1);
	is_int(sys_kevent_wait(q.fd, 4, 0, TSP(1, 0), 0), 2,
	       "two events written (kidx 2)");
	is_err(sys_kevent_commit(q.fd, 3, 0), EINVAL,
	       "commit to 3, beyond kidx 2, is EINVAL "
	       "[kevent_commit.2 EINVAL uidx-unwritten]");
	is_int(sys_kevent_commit(q.fd, 1, 0), 1, "commit to 1 frees 1");
	is_int(sys_kevent_commit(q.fd, 1, 0), 0,
	       "commit to 1 again (at uidx) returns 0");
	is_int(sys_kevent_commit(q.fd, 0, 0), 0,
	       "commit to 0 (behind uidx 1) returns 0");
	is_int(sys_kevent_commit(q.fd, 2, 0), 1, "commit to 2 frees 1");

	/* Two more: slots 2, 3; commit to 0 wraps. */
	make_ready(q.fd, 2, 1);
	is_int(sys_kevent_wait(q.fd, 4, 2, TSP(1, 0), 0), 2,
	       "two more events written (slots 2, 3)");
	is_int(q.ring->ring_kidx, 0, "ring_kidx wrapped to 0");
	is_int(q.ring->ring_over, 0, "ring_over 0 before the commit wraps");
	is_int(sys_kevent_commit(q.fd, 0, 1), 2,
	       "commit to 0 with over 1 (past the wrap) frees 2");
	is_int(q.ring->ring_over, 1, "ring_over increments on the wrap");

	make_ready(q.fd, 2, 1);
	is_int(sys_kevent_wait(q.fd, 4, 0, TSP(1, 0), 0), 2,
	       "two more events written (slots 0, 1)");
	is_err(sys_kevent_commit(q.fd, 1, 0), EOVERFLOW,
	       "stale over (ring_over - 1) is EOVERFLOW "
	       "[kevent_commit.2 EOVERFLOW]");
	is_err(sys_kevent_commit(q.fd, 1, 3), EOVERFLOW,
	       "over ring_over + 2 is EOVERFLOW [kevent_commit.2 EOVERFLOW]");
	is_int(sys_kevent_commit(q.fd, 2, 1), 2,
	       "the failed commits freed nothing: commit to 2 frees 2");
	is_int(q.ring->ring_over, 1, "ring_over unchanged without a wrap");
	rq_close(&q);
}

/* Fill a ring of 4 with 10 ONESHOT events: the rest wait for commits. */
static void test_ring_full(void)
{
	struct ring_q q;
	int n, i, seen[10] = { 0 }, good = 1, calls = 0;
	long long start;

	rq_open(&q, 4);
	for (i = 0; i < 10; i++)
		setup_add(q.fd, timer_ukevent(0, 10000000U + (__u32)i,
					      KEVENT_REQ_ONESHOT, (__u64)i));
	msleep(80);
	n = sys_kevent_wait(q.fd, 4, 0, TSP(1, 0), 0);
	is_int(n, 4, "ring of 4, 10 ready: kevent_wait fills the 4 slots");
	q.wpos = 4;
	start = now_ns();
	is_int(sys_kevent_wait(q.fd, 4, 0, TSP(0, 100000000), 0), 0,
	       "ring full: kevent_wait moves nothing");
	ok(ms_since(start) >= 99,
	   "ring full: it sleeps although events are ready (%lld ms)",
	   ms_since(start));

	while (q.pos < 10 && calls++ < 40) {
		for (; q.pos < q.wpos; q.pos++) {
			__u64 p = rq_slot(&q, q.pos)->ptr;

			if (p < 10)
				seen[p]++;
		}
		if (sys_kevent_commit(q.fd, rq_uidx(&q),
				      (unsigned int)(q.pos / q.size)) < 0)
			good = 0;
		if (q.pos >= 10)
			break;
		n = sys_kevent_wait(q.fd, 4, rq_uidx(&q), TSP(1, 0), 0);
		if (n <= 0)
			good = 0;
		else
			q.wpos += (unsigned int)n;
	}
	ok(good && q.wpos == 10, "after commits the queued events follow");
	for (i = 0, n = 0; i < 10; i++)
		n += seen[i] == 1;
	is_int(n, 10, "each of the 10 events is seen exactly once");
	rq_close(&q);
}

/* A 5 ms periodic timer while the ring is full: no expiry is lost. */
static void test_no_loss_periodic(void)
{
	struct ring_q q;
	unsigned long long sum = 0;
	__u32 t0, last = 0;
	int i, n, good = 1, full_ok = 1;
	long long expected;
	struct ukevent *e;

	rq_open(&q, 2);
	t0 = mono_ms32();
	setup_add(q.fd, timer_ms(5, 0, 1));
	for (i = 0; i < 6; i++) {
		while (q.wpos - q.pos < q.size) {
			n = sys_kevent_wait(q.fd, 2, rq_uidx(&q), TSP(1, 0), 0);
			if (n <= 0) {
				good = 0;
				break;
			}
			q.wpos += (unsigned int)n;
		}
		msleep(30);		/* the timer runs on, ring full */
		if (sys_kevent_wait(q.fd, 2, rq_uidx(&q), TSP(0, 0), 0) != 0)
			full_ok = 0;
		for (; q.pos < q.wpos; q.pos++) {
			e = rq_slot(&q, q.pos);
			sum += e->ret_data[1];
			last = e->ret_data[0];
		}
		if (sys_kevent_commit(q.fd, rq_uidx(&q),
				      (unsigned int)(q.pos / q.size)) != 2)
			good = 0;
	}
	ok(good, "6 rounds of fill, wait 30 ms, commit 2");
	ok(full_ok, "a full ring takes nothing");
	n = sys_kevent_wait(q.fd, 2, rq_uidx(&q), TSP(1, 0), 0);
	e = rq_slot(&q, q.pos);
	ok(n >= 1 && e->ret_data[1] >= 4,
	   "the event held back while full counts the expiries meanwhile (%u)",
	   e->ret_data[1]);
	if (n >= 1) {
		sum += e->ret_data[1];
		last = e->ret_data[0];
	}
	expected = (long long)(__u32)(last - t0) / 5;
	ok(sum + 3 >= (unsigned long long)expected &&
	   sum <= (unsigned long long)expected + 3,
	   "sum of ret_data[1] (%llu) equals the expiries up to the last (%lld)",
	   sum, expected);
	rq_close(&q);
}

/* 200 ONESHOT events through a ring of 4: 50 wraps. */
static void test_wrap_many(void)
{
	enum { N = 200 };
	static struct ukevent uk[N];
	static int seen[N];
	struct ring_q q;
	int i, n, good = 1, calls = 0, dups = 0, missing = 0;
	unsigned long long p;

	rq_open(&q, 4);
	for (i = 0; i < N; i++)
		uk[i] = timer_ukevent(0, 10000000U + (__u32)i,
				      KEVENT_REQ_ONESHOT, (__u64)i);
	if (sys_kevent_ctl(q.fd, KEVENT_CTL_ADD, N, uk) != 0)
		bail_out("ADD of %d timers failed", N);
	while (q.pos < N && calls++ < 1000 && good) {
		n = sys_kevent_wait(q.fd, 4, rq_uidx(&q), TSP(2, 0), 0);
		if (n <= 0 || n > 4) {
			diag("kevent_wait returned %d at pos %llu", n, q.pos);
			good = 0;
			break;
		}
		q.wpos += (unsigned int)n;
		if (q.ring->ring_kidx != q.wpos % 4) {
			diag("ring_kidx %u, want %llu", q.ring->ring_kidx,
			     q.wpos % 4);
			good = 0;
		}
		for (p = q.pos; p < q.wpos; p++)
			if (rq_slot(&q, p)->ptr < N)
				seen[rq_slot(&q, p)->ptr]++;
		if (calls & 1) {	/* one slot at a time */
			while (good && q.pos < q.wpos)
				if (rq_commit_to(&q, q.pos + 1) != 1)
					good = 0;
		} else if (rq_commit_to(&q, q.wpos) != n) {
			good = 0;
		}
		if (q.ring->ring_over != q.pos / 4) {
			diag("ring_over %u, want %llu", q.ring->ring_over,
			     q.pos / 4);
			good = 0;
		}
	}
	ok(good, "every kevent_wait/commit consistent over %d events", N);
	for (i = 0; i < N; i++) {
		dups += seen[i] > 1;
		missing += seen[i] == 0;
	}
	ok(!dups && !missing, "each of %d events seen once (%d twice, %d missing)",
	   N, dups, missing);
	is_int(q.ring->ring_over, N / 4, "ring_over counts the 50 wraps");
	rq_close(&q);
}

/* Two threads commit halves of each batch at the same time. */
struct committer {
	struct ring_q *q;
	pthread_barrier_t *go, *done;
	unsigned long long target;
	int ret, err, stop;
	long long freed, stale, behind;
};

static void *committer_main(void *arg)
{
	struct committer *c = arg;

	for (;;) {
		pthread_barrier_wait(c->go);
		if (c->stop)
			return NULL;
		c->ret = sys_kevent_commit(c->q->fd,
					   (unsigned int)(c->target % c->q->size),
					   (unsigned int)(c->target / c->q->size));
		c->err = errno;
		pthread_barrier_wait(c->done);
	}
}

static void test_concurrent_commit(void)
{
	enum { SIZE = 8, ROUNDS = 300 };
	pthread_barrier_t go, done;
	struct committer c[2];
	pthread_t th[2];
	struct ring_q q;
	unsigned long long produced = 0, freed = 0;
	int i, r, n, bad = 0, badret = 0;

	rq_open(&q, SIZE);
	pthread_barrier_init(&go, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 2; i++) {
		c[i].q = &q;
		c[i].go = &go;
		c[i].done = &done;
		pthread_create(&th[i], NULL, committer_main, &c[i]);
	}
	for (r = 0; r < ROUNDS && !bad; r++) {
		unsigned int want = 1 + (unsigned int)r % SIZE;

		make_ready(q.fd, want, 0);
		n = sys_kevent_wait(q.fd, SIZE, rq_uidx(&q), TSP(1, 0), 0);
		if (n != (int)want) {
			diag("round %d: kevent_wait %d, want %u", r, n, want);
			bad = 1;
			break;
		}
		produced += (unsigned int)n;
		c[0].target = q.pos + (unsigned int)n / 2;
		c[1].target = q.pos + (unsigned int)n;
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		for (i = 0; i < 2; i++) {
			if (c[i].ret > 0)
				freed += (unsigned int)c[i].ret;
			else if (c[i].ret < 0 && c[i].err != EOVERFLOW)
				badret++;
		}
		q.pos += (unsigned int)n;
		if (freed != produced) {
			diag("round %d: freed %llu, produced %llu", r, freed,
			     produced);
			bad = 1;
		}
	}
	for (i = 0; i < 2; i++)
		c[i].stop = 1;
	pthread_barrier_wait(&go);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ok(!bad && r == ROUNDS, "concurrent commits: %d rounds completed", r);
	is_int(freed, produced,
	       "concurrent commits: total freed equals total produced");
	is_int(badret, 0, "concurrent commits: only 0, counts or EOVERFLOW");
	make_ready(q.fd, SIZE, 0);
	is_int(sys_kevent_wait(q.fd, SIZE, rq_uidx(&q), TSP(1, 0), 0), SIZE,
	       "afterwards the whole ring is free");
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	rq_close(&q);
}

static void test_get_events_ring(void)
{
	struct ring_q q;
	struct ukevent buf[4];
	int n;

	rq_open(&q, 2);
	make_ready(q.fd, 4, 1);
	n = sys_kevent_get_events(q.fd, 1, 4, TSP(1, 0), buf, 0);
	is_int(n, 4, "kevent_get_events on a ring queue returns all 4");
	ok(n == 4 && !(buf[0].ret_flags & KEVENT_RET_COPY_FAILED) &&
	   !(buf[1].ret_flags & KEVENT_RET_COPY_FAILED),
	   "the 2 that fit in the ring have no COPY_FAILED "
	   "[KEVENT_RET_COPY_FAILED.2const]");
	ok(n == 4 && (buf[2].ret_flags & KEVENT_RET_COPY_FAILED) &&
	   (buf[3].ret_flags & KEVENT_RET_COPY_FAILED),
	   "the 2 that do not fit have COPY_FAILED in buf "
	   "[KEVENT_RET_COPY_FAILED.2const]");
	ok(q.ring->event[0].ptr == buf[0].ptr &&
	   q.ring->event[1].ptr == buf[1].ptr,
	   "kevent_get_events also wrote the first 2 to the ring");
	ok(!(q.ring->event[0].ret_flags & KEVENT_RET_COPY_FAILED) &&
	   (q.ring->event[0].ret_flags & KEVENT_RET_DONE),
	   "ring copies have DONE and no COPY_FAILED "
	   "[KEVENT_RET_COPY_FAILED.2const]");
	is_int(q.ring->ring_kidx, 0, "ring_kidx wrapped to 0 (ring full)");

	make_ready(q.fd, 1, 1);
	n = sys_kevent_get_events(q.fd, 1, 4, TSP(1, 0), buf, 0);
	is_event(n, buf, UKEV(.ptr = 1, .ret_flags = KEVENT_RET_DONE |
					       KEVENT_RET_COPY_FAILED),
		 UK_PTR | UK_RET_FLAGS,
		 "ring full: the event is still returned in buf, COPY_FAILED "
		 "[KEVENT_RET_COPY_FAILED.2const]");
	is_int(sys_kevent_commit(q.fd, 0, 1), 2,
	       "the ring holds exactly the 2 written slots");
	rq_close(&q);
}

static void test_ring_efault(void)
{
	struct ring_q q;
	void *addr, *again;
	int n;

	rq_open(&q, 4);
	make_ready(q.fd, 1, 5);
	addr = q.ring;
	munmap(addr, q.mapped);
	is_err(sys_kevent_wait(q.fd, 4, 0, TSP(0, 0), 0), EFAULT,
	       "ring unmapped after init: kevent_wait is EFAULT "
	       "[kevent_wait.2 EFAULT ring-write]");
	again = mmap(addr, q.mapped, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (again != addr)
		bail_out("mmap MAP_FIXED");
	n = sys_kevent_wait(q.fd, 4, 0, TSP(1, 0), 0);
	ok(n == 1 && q.ring->event[0].ptr == 5 && q.ring->ring_kidx == 1,
	   "the event stays queued: delivered once the ring is back "
	   "[kevent_wait.2 EFAULT ring-write]");
	rq_close(&q);
}

/* A commit that wraps writes ring_over: unmapped, it fails and frees nothing. */
static void test_commit_efault(void)
{
	struct ring_q q;
	void *addr;

	rq_open(&q, 4);
	make_ready(q.fd, 4, 50);
	is_int(sys_kevent_wait(q.fd, 4, 0, TSP(1, 0), 0), 4,
	       "commit EFAULT: the ring is filled");
	addr = q.ring;
	munmap(addr, q.mapped);
	is_err(sys_kevent_commit(q.fd, 0, 1), EFAULT,
	       "a wrapping commit with the ring unmapped is EFAULT "
	       "[kevent_commit.2 EFAULT]");
	if (mmap(addr, q.mapped, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != addr)
		bail_out("mmap MAP_FIXED");
	is_int(sys_kevent_commit(q.fd, 0, 1), 4,
	       "the failed commit freed nothing: all 4 slots free now "
	       "[kevent_commit.2 EFAULT]");
	is_int((int)q.ring->ring_over, 1, "ring_over written as 1");
	rq_close(&q);
}

int main(void)
{
	plan(74);
	tap_watchdog(18);
	kevent_require();
	test_wait_errors();
	test_wait_copies();
	test_old_uidx();
	test_commit_rules();
	test_ring_full();
	test_no_loss_periodic();
	test_wrap_many();
	test_concurrent_commit();
	test_get_events_ring();
	test_ring_efault();
	test_commit_efault();
	return tap_done();
}
