// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the kernel-filled ring (KEVENT_INIT_DIRECT): written at
 * notification, one slot per registration, spill and drain, ordering,
 * shared consumers, hostile rings.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <grp.h>
#include <poll.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "../lib/tap.h"
#include "../lib/kevent_sys.h"
#include "../lib/child.h"
#include "../lib/harness.h"

#define NOBODY		65534
#define RECV		KEVENT_SOCKET_RECV

struct dq {
	int fd;
	unsigned int size;
	struct kevent_ring *ring;
	struct kevent_ring_tail *t;
	size_t len;
	__u32 head;		/* slots consumed */
};

static void *map_rw(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bail_out("mmap: %s", strerror(errno));
	memset(p, 0xff, len);
	return p;
}

static size_t page_round(size_t len)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);

	return (len + psz - 1) & ~(psz - 1);
}

static void dq_open(struct dq *q, unsigned int size)
{
	memset(q, 0, sizeof(*q));
	q->size = size;
	q->len = page_round(KEVENT_DIRECT_RING_BYTES(size));
	q->ring = map_rw(q->len);
	q->fd = sys_kevent_init(q->ring, size, KEVENT_INIT_DIRECT);
	if (q->fd < 0)
		bail_out("kevent_init(DIRECT, %u): %s", size, strerror(errno));
	q->t = kevent_ring_tail(q->ring, size);
}

static void dq_close(struct dq *q)
{
	close(q->fd);
	munmap(q->ring, q->len);
}

static __u32 ktail(const struct dq *q)
{
	return __atomic_load_n(&q->t->ktail, __ATOMIC_ACQUIRE);
}

static __u32 kflags(const struct dq *q)
{
	return __atomic_load_n(&q->t->flags, __ATOMIC_RELAXED);
}

static struct ukevent *slot(const struct dq *q, __u32 pos)
{
	return &q->ring->event[pos & (q->size - 1)];
}

/* Consume every slot written so far; return how many. */
static unsigned int consume(struct dq *q)
{
	__u32 t = ktail(q), n = t - q->head;

	q->head = t;
	__atomic_store_n(&q->t->uhead, q->head, __ATOMIC_RELEASE);
	return n;
}

static int dwait(struct dq *q, unsigned int num, long ms)
{
	return sys_kevent_wait(q->fd, num, q->head,
			       ms < 0 ? NULL : TSP(ms / 1000,
						   (ms % 1000) * 1000000L),
			       0);
}

static struct ukevent pipe_uk(int fd, __u32 req_flags, __u64 ptr)
{
	return fd_ukevent(KEVENT_PIPE, fd, RECV, req_flags, ptr);
}

static void make_pipe(int p[2])
{
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		bail_out("pipe2: %s", strerror(errno));
}

static void put_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		bail_out("write: %s", strerror(errno));
}

static unsigned int drain_fd(int fd)
{
	char buf[256];
	unsigned int n = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) > 0)
		n += (unsigned int)r;
	return n;
}

/* Anonymous and shared memory hold a direct ring; a regular file not. */
static void test_init_memory_kinds(size_t len)
{
	char path[] = "/direct-ring-XXXXXX";
	struct statfs sfs;
	void *p;
	int mfd, fd;

	mfd = memfd_create("ring", 0);
	must(mfd >= 0 && !ftruncate(mfd, (off_t)len), "memfd: %s",
	     strerror(errno));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	must(p != MAP_FAILED, "mmap of a memfd");
	fd = sys_kevent_init(p, 16, KEVENT_INIT_DIRECT);
	ok(fd >= 0, "DIRECT in shared memory (a memfd) succeeds (%s) "
	   "[KEVENT_INIT_DIRECT.2const]", fd < 0 ? strerror(errno) : "ok");
	close(fd);
	munmap(p, len);
	close(mfd);

	/* The root file system: a regular file unless it is tmpfs (shmem). */
	mfd = mkstemp(path);
	must(mfd >= 0 && !ftruncate(mfd, (off_t)len) && !fstatfs(mfd, &sfs),
	     "a file in /: %s", strerror(errno));
	unlink(path);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	must(p != MAP_FAILED, "mmap of a file");
	fd = sys_kevent_init(p, 16, KEVENT_INIT_DIRECT);
	if (sfs.f_type == TMPFS_MAGIC)
		ok(fd >= 0, "DIRECT in a tmpfs file (shared memory) succeeds");
	else
		ok(fd == -1 && errno == EFAULT,
		   "DIRECT in a mapping of a regular file (fs %#lx): EFAULT "
		   "(got %d) [kevent_init.2 EFAULT direct-write]",
		   (unsigned long)sfs.f_type, fd);
	if (fd >= 0)
		close(fd);
	munmap(p, len);
	close(mfd);
}

static void test_init_errors(void)
{
	struct kevent_ring *ring, *ro;
	size_t len = page_round(KEVENT_DIRECT_RING_BYTES(16));
	int fd;

	ring = map_rw(len + 4096);
	is_err(sys_kevent_init(NULL, 0, KEVENT_INIT_DIRECT), EINVAL,
	       "DIRECT without a ring [kevent_init.2 EINVAL direct-no-ring]");
	is_err(sys_kevent_init(ring, 12, KEVENT_INIT_DIRECT), EINVAL,
	       "DIRECT with 12 slots, not a power of two "
	       "[kevent_init.2 EINVAL direct-size]");
	is_err(sys_kevent_init((struct kevent_ring *)((char *)ring + 4), 16,
			       KEVENT_INIT_DIRECT), EINVAL,
	       "DIRECT with a ring 4 bytes off alignment "
	       "[kevent_init.2 EINVAL direct-align]");
	ro = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		bail_out("mmap");
	is_err(sys_kevent_init(ro, 16, KEVENT_INIT_DIRECT), EFAULT,
	       "DIRECT in read-only memory [kevent_init.2 EFAULT direct-write]");
	munmap(ro, len);
	is_err(sys_kevent_init(unmapped_page(), 16, KEVENT_INIT_DIRECT),
	       EFAULT, "DIRECT in unmapped memory "
	       "[kevent_init.2 EFAULT direct-write]");
	/* The trailer is part of the ring: one unmapped byte of it faults. */
	munmap((char *)ring + len, 4096);
	fd = sys_kevent_init((struct kevent_ring *)((char *)ring + len -
						    KEVENT_DIRECT_RING_BYTES(16) + 64),
			     16, KEVENT_INIT_DIRECT);
	ok(fd == -1 && errno == EFAULT,
	   "DIRECT: the trailer must be mapped too (got %d, %s) "
	   "[kevent_init.2 EFAULT direct-write]", fd, strerror(errno));
	munmap(ring, len);
	test_init_memory_kinds(len);
}

static long vm_pin_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void memlock_child(void *arg)
{
	struct rlimit rl = { 0, 0 };
	struct kevent_ring *ring;
	size_t len = page_round(KEVENT_DIRECT_RING_BYTES(256));
	long before;
	int fd;

	(void)arg;
	cok(!setgroups(0, NULL) && !setgid(NOBODY) && !setuid(NOBODY),
	    "memlock: the child runs as uid %d, without CAP_IPC_LOCK", NOBODY);
	ring = map_rw(len);
	rl.rlim_cur = 4096;
	rl.rlim_max = len;
	setrlimit(RLIMIT_MEMLOCK, &rl);
	fd = sys_kevent_init(ring, 256, KEVENT_INIT_DIRECT);
	cok(fd == -1 && errno == ENOMEM,
	    "a %zu-byte ring beyond RLIMIT_MEMLOCK of 4096 bytes: ENOMEM "
	    "(got %d, %s) [kevent_init.2 ENOMEM direct-memlock]", len, fd,
	    strerror(errno));
	rl.rlim_cur = len;
	setrlimit(RLIMIT_MEMLOCK, &rl);
	before = vm_pin_kb();
	fd = sys_kevent_init(ring, 256, KEVENT_INIT_DIRECT);
	cok(fd >= 0, "within RLIMIT_MEMLOCK it succeeds (%s)",
	    fd < 0 ? strerror(errno) : "ok");
	cok(vm_pin_kb() - before == (long)(len / 1024),
	    "its pages count as pinned memory: VmPin %ld -> %ld kB "
	    "[KEVENT_INIT_DIRECT.2const]", before, vm_pin_kb());
	close(fd);
	cok(vm_pin_kb() == before,
	    "and no longer once the queue is closed (VmPin %ld kB)",
	    vm_pin_kb());
}

static void test_init(void)
{
	struct dq q;

	dq_open(&q, 16);
	ok(q.ring->ring_kidx == 0 && q.ring->ring_over == 0 &&
	   q.t->ktail == 0 && q.t->flags == 0 && q.t->uhead == 0 &&
	   q.t->uclaim == 0,
	   "kevent_init() zeroes the header and the trailer "
	   "[kevent_ring_tail.2type]");
	{
		struct ukevent buf[2];

		is_err(sys_kevent_get_events(q.fd, 0, 2, TSP(0, 0), buf, 0),
		       EINVAL, "kevent_get_events() on a direct queue "
		       "[kevent_get_events.2 EINVAL direct]");
	}
	dq_close(&q);
	child_points(4, 20000, memlock_child, NULL, NULL, "memlock", NULL);
}

/* Written at notification, one slot a registration, ET and LT. */
static void test_delivery(void)
{
	struct ukevent *e;
	struct dq q;
	int p[2], l[2];

	dq_open(&q, 16);
	make_pipe(p);
	make_pipe(l);
	must(add1(q.fd, pipe_uk(p[0], KEVENT_REQ_ET, 0x11)) == 0, "ADD ET");
	must(add1(q.fd, pipe_uk(l[0], 0, 0x22)) == 0, "ADD LT");
	ok(ktail(&q) == 0, "nothing is ready: ktail stays 0");

	put_byte(p[1]);
	e = slot(&q, 0);
	ok(ktail(&q) == 1 && e->ptr == 0x11 && e->type == KEVENT_PIPE &&
	   e->id.raw[0] == (__u32)p[0] && (e->ret_flags & KEVENT_RET_DONE) &&
	   q.ring->ring_kidx == 1,
	   "a write into the pipe puts its report in slot 0 with no system "
	   "call of the consumer (ktail %u) [KEVENT_INIT_DIRECT.2const]",
	   ktail(&q));
	put_byte(p[1]);
	ok(ktail(&q) == 1 && (kflags(&q) & KEVENT_RING_F_PENDING),
	   "notified again before its slot is consumed: no second slot, "
	   "PENDING set (ktail %u, flags %#x) [KEVENT_RING_F_PENDING.2const]",
	   ktail(&q), kflags(&q));
	consume(&q);
	is_int(dwait(&q, q.size, 0), 1,
	       "once the slot is consumed, kevent_wait() writes the event "
	       "remembered [KEVENT_RING_F_PENDING.2const]");
	ok(ktail(&q) == 2 && slot(&q, 1)->ptr == 0x11 &&
	   !(kflags(&q) & KEVENT_RING_F_PENDING),
	   "in slot 1, and PENDING is clear (flags %#x)", kflags(&q));
	consume(&q);
	is_int(drain_fd(p[0]), 2, "both bytes are there");
	is_int(dwait(&q, q.size, 0), 0,
	       "edge-triggered, read empty: nothing more");
	ok(ktail(&q) == 2, "ktail stays 2");

	/* Level-triggered: re-reported by kevent_wait() while ready. */
	put_byte(l[1]);
	ok(ktail(&q) == 3 && slot(&q, 2)->ptr == 0x22,
	   "a level-triggered registration is written at notification too");
	consume(&q);
	is_int(dwait(&q, q.size, 0), 1,
	       "its slot consumed, still readable: kevent_wait() reports it "
	       "again");
	consume(&q);
	drain_fd(l[0]);
	is_int(dwait(&q, q.size, 0), 0,
	       "read empty: the next kevent_wait() reports nothing");
	ok(ktail(&q) == 4, "ktail 4 (got %u)", ktail(&q));

	/* A kevent_wait() that sleeps until a notification writes. */
	{
		pid_t pid = fork();

		if (!pid) {
			msleep(100);
			put_byte(p[1]);
			_exit(0);
		}
		is_int(dwait(&q, q.size, 5000), 0,
		       "kevent_wait() sleeps until a notification writes; it "
		       "counts only what it wrote itself");
		ok(ktail(&q) == 5 && slot(&q, 4)->ptr == 0x11,
		   "the notification's event is in the ring (ktail %u)",
		   ktail(&q));
		waitpid(pid, NULL, 0);
	}
	is_int(dwait(&q, q.size, 0), 0,
	       "kevent_wait() returns at once while the caller has not "
	       "consumed what the ring holds");
	consume(&q);
	drain_fd(p[0]);
	{
		long long t0 = now_ns();

		is_int(dwait(&q, q.size, 200), 0,
		       "an empty ring: kevent_wait() times out");
		ok(ms_since(t0) >= 190, "after its timeout (%lld ms)",
		   ms_since(t0));
	}

	/* A source decided in process context: through the ready list. */
	add1(q.fd, timer_ms(20, KEVENT_REQ_ONESHOT, 0x33));
	is_int(dwait(&q, q.size, 5000), 1,
	       "a timer reaches the ring through kevent_wait()");
	ok(ktail(&q) == 6 && slot(&q, 5)->ptr == 0x33 &&
	   slot(&q, 5)->type == KEVENT_TIMER,
	   "in the next slot (ktail %u)", ktail(&q));
	consume(&q);
	{
		struct pollfd pf = { .fd = q.fd, .events = POLLIN };

		is_int(poll(&pf, 1, 0), 0, "poll(): not readable when empty");
		put_byte(p[1]);
		is_int(poll(&pf, 1, 0), 1,
		       "poll(): readable while the ring holds a slot not "
		       "consumed");
		consume(&q);
		drain_fd(p[0]);
	}
	/* kevent_commit() frees slots and moves uhead. */
	put_byte(p[1]);
	is_int(sys_kevent_commit(q.fd, 8, 0), 1,
	       "kevent_commit() frees the slot, as on any ring");
	ok(q.t->uhead == 8, "and moves uhead (got %u)", q.t->uhead);
	q.head = 8;
	drain_fd(p[0]);
	close(p[0]);
	close(p[1]);
	close(l[0]);
	close(l[1]);
	dq_close(&q);
}

/*
 * A MODIFY keeps the registration's slot; one whose pipe goes away while
 * its report is in the ring, and whose key a new ADD takes, is freed
 * with the queue.
 */
static void test_modify_and_gone(void)
{
	struct ukevent uk;
	int p[2], p2[2], base, err;
	long was;
	struct dq q;

	base = limit_probe(&err, &was);
	dq_open(&q, 16);
	make_pipe(p);
	must(add1(q.fd, pipe_uk(p[0], KEVENT_REQ_ET, 0x77)) == 0, "ADD");
	put_byte(p[1]);
	uk = pipe_uk(p[0], KEVENT_REQ_ET, 0x77);
	must(ctl1(q.fd, KEVENT_CTL_MODIFY, &uk) == 1, "MODIFY");
	ok(ktail(&q) == 1 && (kflags(&q) & KEVENT_RING_F_PENDING),
	   "MODIFY of a registration whose report is in the ring, its pipe "
	   "still readable: no second slot, PENDING (ktail %u)", ktail(&q));
	consume(&q);
	is_int(dwait(&q, q.size, 0), 1,
	       "its slot back, kevent_wait() reports it");
	consume(&q);
	drain_fd(p[0]);

	put_byte(p[1]);
	close(p[0]);
	close(p[1]);
	ok(ktail(&q) == 3 && (kflags(&q) & KEVENT_RING_F_PENDING),
	   "its pipe gone while its report is in the ring: the end waits "
	   "for the slot (ktail %u, flags %#x)", ktail(&q), kflags(&q));
	make_pipe(p2);
	is_int(p2[0] == p[0] ? add1(q.fd, pipe_uk(p2[0], KEVENT_REQ_ET, 0x77)) :
	       -1, 0, "the same request for the reused descriptor is added");
	dq_close(&q);
	close(p2[0]);
	close(p2[1]);
	leak_point(base, "closing a direct queue with a gone registration "
		   "in a slot");
}

/* A full ring spills to the ready list; hostile uhead values. */
static void test_full(void)
{
	unsigned int seen[8] = { 0 }, i, n, bad = 0;
	int p[8][2];
	struct dq q;

	dq_open(&q, 4);
	for (i = 0; i < 8; i++) {
		make_pipe(p[i]);
		must(add1(q.fd, pipe_uk(p[i][0], KEVENT_REQ_ET, i)) == 0,
		     "ADD");
	}
	for (i = 0; i < 8; i++)
		put_byte(p[i][1]);
	ok(ktail(&q) == 4 && (kflags(&q) & KEVENT_RING_F_PENDING),
	   "8 events, 4 slots: ktail 4, PENDING (ktail %u, flags %#x)",
	   ktail(&q), kflags(&q));
	is_int(dwait(&q, q.size, 0), 0,
	       "a consumer that never advances: nothing is overwritten");
	__atomic_store_n(&q.t->uhead, 1000, __ATOMIC_RELEASE);
	is_int(dwait(&q, q.size, 0), 0,
	       "a uhead past ktail frees nothing");
	__atomic_store_n(&q.t->uhead, 0xfffffff0, __ATOMIC_RELEASE);
	is_int(dwait(&q, q.size, 0), 0, "nor one behind it");
	for (i = 0; i < 4; i++)
		seen[slot(&q, i)->ptr & 7]++;
	__atomic_store_n(&q.t->uhead, 4, __ATOMIC_RELEASE);
	q.head = 4;
	is_int(dwait(&q, q.size, 0), 4,
	       "the slots given back: kevent_wait() writes the other 4");
	for (i = 4; i < 8; i++)
		seen[slot(&q, i)->ptr & 7]++;
	for (i = 0; i < 8; i++)
		bad += seen[i] != 1;
	ok(!bad && !(kflags(&q) & KEVENT_RING_F_PENDING),
	   "each of the 8 reported once, PENDING clear [kevent_wait.2]");
	consume(&q);
	n = 0;
	for (i = 0; i < 8; i++)
		n += drain_fd(p[i][0]);
	is_int(n, 8, "8 bytes read");
	for (i = 0; i < 8; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	dq_close(&q);
}

/*
 * A writer on the other CPU, the consumer with no system call while
 * events are pending: every byte is read, no registration is ever in
 * two slots not consumed, and the consumer makes few calls.
 */
#define XP	16
#define XROUNDS	20000

struct xctx {
	int p[XP][2];
	volatile int stop;
};

static void *writer(void *arg)
{
	struct xctx *x = arg;
	unsigned int r;

	for (r = 0; r < XROUNDS; r++)
		put_byte(x->p[r % XP][1]);
	return NULL;
}

static void test_cross_cpu(void)
{
	unsigned long long got = 0, calls = 0, events = 0;
	unsigned int i, dup = 0;
	struct xctx x;
	pthread_t th;
	struct dq q;

	dq_open(&q, 64);
	for (i = 0; i < XP; i++) {
		make_pipe(x.p[i]);
		must(add1(q.fd, pipe_uk(x.p[i][0], KEVENT_REQ_ET, i)) == 0,
		     "ADD");
	}
	if (pthread_create(&th, NULL, writer, &x))
		bail_out("pthread_create");
	while (got < XROUNDS) {
		__u32 t = ktail(&q), h;
		unsigned int inring[XP] = { 0 };

		for (h = q.head; h != t; h++)
			if (++inring[slot(&q, h)->ptr % XP] > 1)
				dup++;
		for (; q.head != t; q.head++) {
			events++;
			got += drain_fd(x.p[slot(&q, q.head)->ptr % XP][0]);
		}
		__atomic_store_n(&q.t->uhead, q.head, __ATOMIC_RELEASE);
		if (ktail(&q) == q.head ||
		    (kflags(&q) & KEVENT_RING_F_PENDING)) {
			calls++;
			if (dwait(&q, q.size, 5000) < 0 && errno != EINTR)
				break;
			if (ktail(&q) == q.head && got < XROUNDS &&
			    !(kflags(&q) & KEVENT_RING_F_PENDING) && calls > 4 *
			    XROUNDS)
				break;
		}
	}
	pthread_join(th, NULL);
	is_int((int)got, XROUNDS, "a writer thread, a consumer: every byte "
	       "is read (%llu events, %llu kevent_wait calls)", events, calls);
	is_int(dup, 0, "no registration is ever in two slots not consumed "
	       "[KEVENT_INIT_DIRECT.2const]");
	/*
	 * A report written while the consumer was draining its pipe for an
	 * earlier one finds it empty, as with EPOLLET: consumed, nothing
	 * else may come.
	 */
	got = consume(&q);
	ok(dwait(&q, q.size, 0) == 0 && ktail(&q) == q.head &&
	   !(kflags(&q) & KEVENT_RING_F_PENDING),
	   "nothing is left pending at the end (%llu reports of bytes read "
	   "already)", got);
	for (i = 0; i < XP; i++) {
		close(x.p[i][0]);
		close(x.p[i][1]);
	}
	dq_close(&q);
}

/* Several consumer threads share one ring with kevent_ring_take_shared(). */
#define SP	32
#define SROUNDS	4000

struct sctx {
	struct dq *q;
	int p[SP][2];
	unsigned long long taken, bytes;
	int done;
	pthread_mutex_t lock;
};

static void *shared_consumer(void *arg)
{
	struct sctx *s = arg;
	unsigned long long taken = 0, bytes = 0;
	struct ukevent ev;

	while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) {
		if (kevent_ring_take_shared(s->q->ring, s->q->size, &ev)) {
			taken++;
			bytes += drain_fd(s->p[ev.ptr % SP][0]);
			continue;
		}
		sys_kevent_wait(s->q->fd, s->q->size,
				__atomic_load_n(&s->q->t->uclaim,
						__ATOMIC_ACQUIRE),
				TSP(0, 20000000), 0);
	}
	pthread_mutex_lock(&s->lock);
	s->taken += taken;
	s->bytes += bytes;
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void test_shared(unsigned int threads)
{
	unsigned long long deadline;
	pthread_t th[4];
	struct sctx s;
	unsigned int i, r;
	struct dq q;

	dq_open(&q, 16);
	memset(&s, 0, sizeof(s));
	s.q = &q;
	pthread_mutex_init(&s.lock, NULL);
	for (i = 0; i < SP; i++) {
		make_pipe(s.p[i]);
		must(add1(q.fd, pipe_uk(s.p[i][0], KEVENT_REQ_ET, i)) == 0,
		     "ADD");
	}
	for (i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, shared_consumer, &s))
			bail_out("pthread_create");
	for (r = 0; r < SROUNDS; r++) {
		put_byte(s.p[r % SP][1]);
		if (!(r % 64))
			sched_yield();
	}
	/* Until every byte is read: what is left is in pipes or the ring. */
	deadline = (unsigned long long)now_ns() + 20000000000ULL;
	for (;;) {
		unsigned long long left = 0;

		for (i = 0; i < SP; i++) {
			int n = 0;

			if (!ioctl(s.p[i][0], FIONREAD, &n))
				left += (unsigned int)n;
		}
		if ((!left && ktail(&q) == q.t->uhead &&
		     !(kflags(&q) & KEVENT_RING_F_PENDING)) ||
		    (unsigned long long)now_ns() > deadline)
			break;
		msleep(10);
	}
	__atomic_store_n(&s.done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	is_int((int)s.bytes, SROUNDS,
	       "%u consumer threads: every byte is read [kevent_ring_take.3]",
	       threads);
	ok(s.taken == ktail(&q) && q.t->uhead == ktail(&q) &&
	   q.t->uclaim == ktail(&q),
	   "%u threads took %llu slots: each slot written was taken once "
	   "(ktail %u, uhead %u, uclaim %u) [kevent_ring_take.3]", threads,
	   s.taken, ktail(&q), q.t->uhead, q.t->uclaim);
	for (i = 0; i < SP; i++) {
		close(s.p[i][0]);
		close(s.p[i][1]);
	}
	dq_close(&q);
}

/* munmap, mremap, fork and exec: the kernel writes only its own pages. */
static void fork_child(void *arg)
{
	struct dq *q = arg;

	errno = 0;
	cok(sys_kevent_wait(q->fd, 1, 0, TSP(0, 0), 0) == -1 &&
	    errno == EPERM, "fork: the child gets EPERM from kevent_wait() "
	    "(%s) [KEVENT_INIT_DIRECT.2const]", strerror(errno));
	cok(sys_kevent_commit(q->fd, 0, 0) == -1 && errno == EPERM,
	    "and from kevent_commit()");
}

static int exec_main(int fd)
{
	if (sys_kevent_wait(fd, 1, 0, TSP(0, 0), 0) != -1 || errno != EPERM)
		return 1;
	return 0;
}

static void test_hostile(void)
{
	struct kevent_ring *moved;
	int p[2], st = -1;
	unsigned int i;
	struct dq q;
	pid_t pid;

	dq_open(&q, 16);
	make_pipe(p);
	must(add1(q.fd, pipe_uk(p[0], KEVENT_REQ_ET, 0x55)) == 0, "ADD");
	child_points(2, 10000, fork_child, NULL, &q, "fork", NULL);
	put_byte(p[1]);
	ok(ktail(&q) == 1 && slot(&q, 0)->ptr == 0x55,
	   "after fork the parent's ring still gets events");
	consume(&q);
	drain_fd(p[0]);

	moved = mremap(q.ring, q.len, q.len, MREMAP_MAYMOVE | MREMAP_FIXED,
		       (char *)map_rw(q.len + 4096) + 4096);
	ok(moved != MAP_FAILED, "mremap() moves the ring");
	if (moved != MAP_FAILED) {
		q.ring = moved;
		q.t = kevent_ring_tail(moved, q.size);
		put_byte(p[1]);
		ok(ktail(&q) == 2 && slot(&q, 1)->ptr == 0x55,
		   "moved by mremap(), the ring still gets events: the pages "
		   "are the same");
		consume(&q);
		drain_fd(p[0]);
	}
	munmap(q.ring, q.len);
	for (i = 0; i < 100; i++) {
		put_byte(p[1]);
		drain_fd(p[0]);
	}
	is_int(sys_kevent_wait(q.fd, q.size, 0, TSP(0, 0), 0), 0,
	       "unmapped, the ring goes on being written where the process "
	       "no longer sees it; the calls still work");
	ok(close(q.fd) == 0, "and the queue closes");
	close(p[0]);
	close(p[1]);

	/* execve() with the queue open: EPERM in the new image. */
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (!pid) {
		char arg[16];

		dq_open(&q, 16);
		snprintf(arg, sizeof(arg), "%d", q.fd);
		fcntl(q.fd, F_SETFD, 0);
		execl("/proc/self/exe", "direct", "--exec", arg, (char *)NULL);
		_exit(11);
	}
	if (!reap_within(pid, 10000, &st)) {
		kill(pid, SIGKILL);
		reap_within(pid, 3000, &st);
	}
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "execve() with the queue open: kevent_wait() gets EPERM "
	   "(status %#x)", st);
}

/* Another thread unmaps the ring while events arrive. */
struct uctx {
	struct dq *q;
	int p[2];
};

static void *unmapper(void *arg)
{
	struct uctx *u = arg;

	msleep(5);
	munmap(u->q->ring, u->q->len);
	return NULL;
}

static void test_unmap_race(void)
{
	struct uctx u;
	pthread_t th;
	unsigned int i;
	struct dq q;

	dq_open(&q, 16);
	u.q = &q;
	make_pipe(u.p);
	must(add1(q.fd, pipe_uk(u.p[0], 0, 0x66)) == 0, "ADD");
	if (pthread_create(&th, NULL, unmapper, &u))
		bail_out("pthread_create");
	for (i = 0; i < 2000; i++) {
		put_byte(u.p[1]);
		drain_fd(u.p[0]);
		sys_kevent_wait(q.fd, q.size, i, TSP(0, 0), 0);
	}
	pthread_join(th, NULL);
	ok(close(q.fd) == 0,
	   "a thread unmaps the ring while events arrive and the others "
	   "wait: nothing breaks");
	close(u.p[0]);
	close(u.p[1]);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--exec"))
		return exec_main(atoi(argv[2]));
	plan(65);
	tap_watchdog(120);
	kevent_require();
	test_init_errors();
	test_init();
	test_delivery();
	test_full();
	test_modify_and_gone();
	test_cross_cpu();
	test_shared(2);
	test_shared(4);
	test_hostile();
	test_unmap_race();
	return tap_done();
}
