// SPDX-License-Identifier: GPL-2.0
/*
 * Description: fuzz: random calls of the five system calls, the ioctl and
 * the fdinfo of queues, from several threads and a forked child on the
 * same queues; every result must be success or an error the manual
 * documents for that call; nothing leaks.
 *
 * Usage: fuzz [SECONDS [SEED]]   (default 8 s, seed from the clock)
 *
 * A pool of descriptors of every kind (queues with and without a ring,
 * /dev/kevent, pipes, TCP, UDP, UNIX stream, datagram and seqpacket
 * sockets, netlink, eventfd, timerfd, signalfd, epoll, a file, /dev/null,
 * O_PATH, memfd, closed numbers) is shared by three fuzzing threads and a
 * churner that closes and replaces them, writes and reads them, and
 * unmaps, remaps and write-protects the rings of the queues while they
 * are in use.  A kicker ends every wait: KEVENT_CTL_READY with no entry
 * on every queue, and a signal to each fuzzing thread.  Arguments are
 * drawn from values that matter: NULL, unmapped, read-only, kernel and
 * misaligned pointers, arrays that cross into an unmapped page, counts 0,
 * 1, small and huge, every type, flags with invalid bits, signal numbers
 * 0, 32-64, >64 and NOMASK, timeouts NULL, zero, negative, huge, absolute
 * and with a bad tv_nsec.  A forked child fuzzes the same queues, whose
 * rings belong to the parent's address space (EPERM).
 *
 * Besides the documented-errno check of every call, "oracle" calls with
 * exactly one bad argument on queues nobody closes check the exact errno.
 * POSIX timers with SIGEV_KEVENT are made on random descriptors and
 * clocks, armed and deleted.  At the end everything is closed and a fresh
 * queue's fdinfo must list no registration; if
 * /proc/sys/fs/kevent/max_user_kevents exists, as many ADDs must fit under
 * a limit of 64 as did before the fuzz (nothing left charged), the next
 * failing with ENOSPC.  Iterations, per call and in all, go to diag lines.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/netlink.h>

#include "tap.h"
#include "kevent_sys.h"
#include "harness.h"

#define PAGE		4096UL
#define NSLOTS		40
#define NFUZZ		3
#define RING_REGION	(3 * PAGE)	/* 2 pages of ring, 1 guard */

/* ---------------------------------------------------------------- */
/* What each call may return.                                       */

enum call {
	C_INIT, C_CTL, C_GET, C_WAIT, C_COMMIT, C_IOCTL, C_FDINFO, C_PTIMER,
	C_NR
};

static const char *const call_name[C_NR] = {
	"kevent_init", "kevent_ctl", "kevent_get_events", "kevent_wait",
	"kevent_commit", "ioctl(KEVENT_IOC_GET_ABI)", "fdinfo",
	"timer_create(SIGEV_KEVENT)",
};

/* Documented errors of each call: man/man2 (and decisions.md 9, 13). */
static const int err_init[] = { EFAULT, EINVAL, EMFILE, ENFILE, ENOMEM, 0 };
static const int err_ctl[] = { EBADF, EFAULT, EINVAL, 0 };
static const int err_get[] = { EBADF, EFAULT, EINTR, EINVAL, EPERM, 0 };
static const int err_wait[] = { EBADF, EFAULT, EINTR, EINVAL, EPERM, 0 };
static const int err_commit[] = { EBADF, EFAULT, EINVAL, EOVERFLOW, EPERM, 0 };
/* timer_create(2) and kevent_posix_timer(7); ENOSPC: the per-user limit. */
static const int err_ptimer[] = { EAGAIN, EBADF, EEXIST, EINVAL, ENOMEM,
				  ENOSPC, ENOTSUP, 0 };

/* A pending socket error (sk_err) as socket(7), ip(7), tcp(7) list them. */
static const int sock_errs[] = { ECONNREFUSED, ECONNRESET, ECONNABORTED,
				 ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, EPIPE,
				 EMSGSIZE, EPROTO, EHOSTDOWN, ENETDOWN, 0 };

static int in_list(int e, const int *list)
{
	for (; *list; list++)
		if (*list == e)
			return 1;
	return 0;
}

/* Per-entry errors of kevent_ctl(2) and the pages of the types. */
static int entry_err_ok(unsigned int cmd, const struct ukevent *uk, int e)
{
	switch (cmd) {
	case KEVENT_CTL_REMOVE:
	case KEVENT_CTL_READY:
		return e == ENOENT;
	case KEVENT_CTL_MODIFY:
		/* MODIFY runs the source's checks of ADD (decisions.md 10). */
		return e == ENOENT || e == EINVAL;
	}
	if (e == EEXIST || e == EINVAL || e == ENOMEM || e == ENOSPC ||
	    e == ENOSYS)
		return 1;
	switch (uk->type) {
	case KEVENT_SOCKET:
		return e == EBADF || e == ENOTSOCK || e == EOPNOTSUPP ||
		       in_list(e, sock_errs);
	case KEVENT_PIPE:
		return e == EBADF || e == EPIPE;
	case KEVENT_POLL:
		return e == EBADF;
	}
	return 0;
}

/* The error of a BROKEN report: object gone, pipe/socket error, ESRCH. */
static int broken_err_ok(const struct ukevent *uk, int e)
{
	if (e == EBADF)
		return 1;
	switch (uk->type) {
	case KEVENT_SOCKET:
		return in_list(e, sock_errs);
	case KEVENT_PIPE:
		return e == EPIPE;
	case KEVENT_SIGNAL:
	case KEVENT_POLL:
		return e == ESRCH;	/* thread exit, exec, POLLFREE */
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Counters, shared with the child.                                 */

struct counts {
	uint32_t iter[C_NR];
	uint32_t bad[C_NR];		/* undocumented results */
	uint32_t oracle, oracle_bad;
	uint32_t perm_checks, perm_bad;	/* ring queues from the child */
	uint32_t fdinfo_bad;
	uint32_t events, broken, entries;
	uint32_t done;
};

struct shared {
	struct counts parent, child;
	int stop;
};

static struct shared *sh;
static __thread struct counts *cnt;
static int in_child;
static uint64_t seed;

#define INC(x)	__atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)
#define LOAD(x)	__atomic_load_n(&(x), __ATOMIC_SEQ_CST)

static void bad(enum call c, const char *fmt, ...) TAP_PRINTF(2, 3);

static void bad(enum call c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (INC(cnt->bad[c]) > 6)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag("%s%s: %s", in_child ? "child: " : "", call_name[c], msg);
}

/* ---------------------------------------------------------------- */
/* The pool of descriptors.                                         */

enum fkind {
	F_CLOSED, F_QUEUE, F_QUEUE_RING, F_DEVKEVENT, F_PIPE_R, F_PIPE_W,
	F_FIFO, F_TCP_LISTEN, F_TCP, F_UDP, F_UDP_REFUSED, F_USTREAM,
	F_UDGRAM, F_USEQ, F_NETLINK, F_EVENTFD, F_TIMERFD, F_SIGNALFD,
	F_EPOLL, F_FILE, F_DEVNULL, F_OPATH, F_MEMFD, F_NKINDS
};

struct fslot {
	int fd, peer, kind;
	unsigned int ring_size;
};

static struct fslot pool[NSLOTS];
static unsigned char *regions[NSLOTS];	/* ring memory of slot i */
static int sq, sr, sd;			/* stable queues: plain, ring, /dev */
static struct kevent_ring *sr_ring;
#define SR_SIZE	16
static struct sockaddr_in tcp_addr, refused_addr;
static int tcp_listener;
static char fifo_path[64], file_path[64];

/* Queues the churner closed, kept open a while so that waits are kicked. */
#define GRAVE	64
static int graveyard[GRAVE];
static long long grave_until[GRAVE];
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;

static int make_fd(struct rng *rng, int slot, int *kind, unsigned int *rsize,
		   int *peer)
{
	struct sockaddr_in sin;
	socklen_t len;
	sigset_t set;
	int p[2], fd = -1, k = (int)rng_below(rng, F_NKINDS);

	*rsize = 0;
	*peer = -1;
	switch (k) {
	case F_CLOSED:
		fd = -1;
		break;
	case F_QUEUE:
		fd = kevent_init(NULL, 0, rng_chance(rng, 50) ?
				 KEVENT_INIT_NONBLOCK : 0);
		break;
	case F_QUEUE_RING:
		/* Some rings run into the guard page. */
		*rsize = rng_chance(rng, 70) ? 1 + rng_below(rng, 100) :
			 (unsigned int)((2 * PAGE - 8) / 40) + rng_below(rng, 40);
		mprotect(regions[slot], 2 * PAGE, PROT_READ | PROT_WRITE);
		/* Some are direct: the kernel writes them at notification. */
		if (rng_chance(rng, 30)) {
			*rsize = 1U << rng_below(rng, 7);
			fd = kevent_init((struct kevent_ring *)regions[slot],
					 *rsize, KEVENT_INIT_DIRECT);
			break;
		}
		fd = kevent_init((struct kevent_ring *)regions[slot], *rsize, 0);
		break;
	case F_DEVKEVENT:
		fd = open("/dev/kevent", O_RDWR);
		break;
	case F_PIPE_R:
	case F_PIPE_W:
		if (pipe2(p, O_NONBLOCK))
			break;
		fd = p[k == F_PIPE_W];
		/* Keep the other end open half of the time. */
		if (rng_chance(rng, 50))
			close(p[k != F_PIPE_W]);
		else
			*peer = p[k != F_PIPE_W];
		break;
	case F_FIFO:
		fd = open(fifo_path, O_RDWR | O_NONBLOCK);
		break;
	case F_TCP_LISTEN:
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd >= 0 && (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
				listen(fd, 4))) {
			close(fd);
			fd = -1;
		}
		break;
	case F_TCP:
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&tcp_addr,
				       sizeof(tcp_addr))) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			/* Accept and drop, or keep in the backlog. */
			int a = accept4(tcp_listener, NULL, NULL, SOCK_NONBLOCK);

			if (a >= 0 && rng_chance(rng, 50)) {
				*peer = fd;
				fd = a;
			} else if (a >= 0 && rng_chance(rng, 50)) {
				*peer = a;
			} else if (a >= 0) {
				close(a);
			}
			fcntl(fd, F_SETFL, O_NONBLOCK);
		}
		break;
	case F_UDP:
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(sin);
		if (fd >= 0 && (bind(fd, (struct sockaddr *)&sin, len) ||
				getsockname(fd, (struct sockaddr *)&sin, &len) ||
				connect(fd, (struct sockaddr *)&sin, len))) {
			close(fd);
			fd = -1;
		}
		break;
	case F_UDP_REFUSED:
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&refused_addr,
				       sizeof(refused_addr))) {
			close(fd);
			fd = -1;
		}
		break;
	case F_USTREAM:
	case F_UDGRAM:
	case F_USEQ:
		if (socketpair(AF_UNIX, (k == F_USTREAM ? SOCK_STREAM :
					 k == F_UDGRAM ? SOCK_DGRAM :
					 SOCK_SEQPACKET) | SOCK_NONBLOCK, 0, p))
			break;
		fd = p[0];
		if (rng_chance(rng, 50))
			close(p[1]);
		else
			*peer = p[1];
		break;
	case F_NETLINK:
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK, NETLINK_ROUTE);
		break;
	case F_EVENTFD:
		fd = eventfd(rng_below(rng, 2), EFD_NONBLOCK);
		break;
	case F_TIMERFD:
		fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		if (fd >= 0) {
			struct itimerspec its = { { 0, 0 }, { 0, 1000000 } };

			timerfd_settime(fd, 0, &its, NULL);
		}
		break;
	case F_SIGNALFD:
		sigemptyset(&set);
		sigaddset(&set, SIGURG);
		fd = signalfd(-1, &set, SFD_NONBLOCK);
		break;
	case F_EPOLL:
		fd = epoll_create1(0);
		break;
	case F_FILE:
		fd = open(file_path, O_RDWR | O_CREAT, 0600);
		break;
	case F_DEVNULL:
		fd = open("/dev/null", O_RDWR);
		break;
	case F_OPATH:
		fd = open("/tmp", O_PATH);
		break;
	default:
		fd = (int)syscall(SYS_memfd_create, "fuzz", 0);
		break;
	}
	*kind = fd < 0 ? F_CLOSED : k;
	return fd;
}

/* Close a slot's descriptors; a queue goes to the graveyard first. */
static void slot_close(int i)
{
	struct fslot *s = &pool[i];
	int fd = s->fd, kind = s->kind, j;

	__atomic_store_n(&s->kind, F_CLOSED, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->fd, -1, __ATOMIC_SEQ_CST);
	if (fd >= 0 && (kind == F_QUEUE || kind == F_QUEUE_RING ||
			kind == F_DEVKEVENT)) {
		int keep = dup(fd);

		pthread_mutex_lock(&grave_lock);
		for (j = 0; j < GRAVE && keep >= 0; j++) {
			if (graveyard[j] < 0) {
				graveyard[j] = keep;
				grave_until[j] = now_ns() + 200000000LL;
				keep = -1;
			}
		}
		pthread_mutex_unlock(&grave_lock);
		if (keep >= 0)
			close(keep);
	}
	if (fd >= 0)
		close(fd);
	if (s->peer >= 0)
		close(s->peer);
	s->peer = -1;
	s->ring_size = 0;
}

static void slot_fill(struct rng *rng, int i)
{
	struct fslot *s = &pool[i];
	unsigned int rsize;
	int kind, peer, fd;

	fd = make_fd(rng, i, &kind, &rsize, &peer);
	s->ring_size = rsize;
	s->peer = peer;
	__atomic_store_n(&s->fd, fd, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->kind, kind, __ATOMIC_SEQ_CST);
}

static void grave_kick(int all)
{
	long long now = now_ns();
	int j;

	pthread_mutex_lock(&grave_lock);
	for (j = 0; j < GRAVE; j++) {
		if (graveyard[j] < 0)
			continue;
		kevent_ctl(graveyard[j], KEVENT_CTL_READY, 0, NULL);
		if (all || now > grave_until[j]) {
			close(graveyard[j]);
			graveyard[j] = -1;
		}
	}
	pthread_mutex_unlock(&grave_lock);
}

/* ---------------------------------------------------------------- */
/* Arguments.                                                       */

struct arena {
	unsigned char *rw;	/* 16 pages read-write, then one unmapped */
	unsigned char *ro;	/* one read-only page of random entries */
	unsigned char *none;	/* one unmapped (PROT_NONE) page */
};

#define ARENA_RW	(16 * PAGE)

static void arena_init(struct arena *a, struct rng *rng)
{
	unsigned char *m = mmap(NULL, ARENA_RW + 3 * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (m == MAP_FAILED)
		bail_out("mmap: %s", strerror(errno));
	a->rw = m;
	a->none = m + ARENA_RW;
	a->ro = m + ARENA_RW + PAGE;
	for (i = 0; i < PAGE; i++)
		a->ro[i] = (unsigned char)rng_next(rng);
	if (mprotect(a->none, PAGE, PROT_NONE) ||
	    mprotect(a->ro, PAGE, PROT_READ) ||
	    mprotect(a->ro + PAGE, PAGE, PROT_NONE))
		bail_out("mprotect: %s", strerror(errno));
}

static void *kernel_ptr(void)
{
	if (sizeof(void *) == 8)
		return (void *)(uintptr_t)0xffffffff81000000ULL;
	/* Above the 32-bit process's address space. */
	return (void *)(uintptr_t)0xfffff000UL;
}

enum ptr_kind { P_VALID, P_NULL, P_NONE, P_RO, P_EDGE, P_KERNEL, P_ODD,
		P_NKINDS };

/*
 * A pointer for n entries of size sz: valid ones have room for the n
 * entries (as far as the arena goes), P_EDGE puts the page end after
 * the first one or two entries.
 */
static void *pick_ptr(struct rng *rng, struct arena *a, size_t n, size_t sz,
		      int *kind)
{
	size_t len = n * sz;

	*kind = rng_below(rng, 100) < 55 ? P_VALID :
		(int)(1 + rng_below(rng, P_NKINDS - 1));
	switch (*kind) {
	case P_NULL:
		return NULL;
	case P_NONE:
		return a->none;
	case P_RO:
		return a->ro;
	case P_EDGE:
		return a->rw + ARENA_RW - sz * (1 + rng_below(rng, 2));
	case P_KERNEL:
		return kernel_ptr();
	case P_ODD:
		return a->rw + 1 + rng_below(rng, 7);
	}
	if (len > ARENA_RW || len == 0)
		return a->rw;
	return a->rw + ((ARENA_RW - len) / 8 > 0 ?
			8 * rng_below(rng, (uint32_t)((ARENA_RW - len) / 8 / 4 + 1)) : 0);
}

static int pick_fd(struct rng *rng)
{
	switch (rng_below(rng, 20)) {
	case 0:
		return -1;
	case 1:
		return 1 << 20;
	case 2:
		return sq;
	case 3:
		return sr;
	case 4:
		return sd;
	case 5:
		return (int)rng_below(rng, 3);	/* stdio */
	case 6:
		return 900 + (int)rng_below(rng, 50);	/* never opened */
	default:
		return __atomic_load_n(&pool[rng_below(rng, NSLOTS)].fd,
				       __ATOMIC_RELAXED);
	}
}

static const uint32_t valid_events[KEVENT_MAX] = {
	[KEVENT_SOCKET] = KEVENT_SOCKET_RECV | KEVENT_SOCKET_SEND |
			  KEVENT_SOCKET_ACCEPT,
	[KEVENT_TIMER] = KEVENT_TIMER_FIRED,
	[KEVENT_POLL] = POLLIN | POLLOUT | POLLPRI | POLLERR | POLLHUP |
			POLLRDNORM | POLLWRNORM | POLLRDHUP,
	[KEVENT_PIPE] = KEVENT_SOCKET_RECV | KEVENT_SOCKET_SEND,
	[KEVENT_SIGNAL] = KEVENT_SIGNAL_DELIVERY,
	[KEVENT_POSIX_TIMER] = KEVENT_MASK_ALL,
};

struct fuzzer {
	int id;
	struct rng rng;
	struct arena a;
	struct ukevent recent[16];	/* keys to hit with REMOVE/MODIFY/READY */
	unsigned int nrecent;
	timer_t timers[4];
	int ntimers;
	pthread_t th;
	pid_t tid;
};

static void rand_uk(struct fuzzer *f, struct ukevent *uk)
{
	static const uint32_t secs[] = { 0, 0, 0, 0, 1, 100, 0xffffffff };
	static const uint32_t nsecs[] = { 0, 1, 100000, 1000000, 5000000,
					  999999999, 1000000000, 0xffffffff };
	static const uint32_t sigs[] = { 0, 1, SIGUSR1, SIGUSR2, SIGCHLD,
					 SIGKILL, SIGSTOP, SIGTTIN, SIGTTOU,
					 SIGSEGV, SIGURG, 31, 32, 33, 34, 50,
					 63, 64, 65, 0xffffffff };
	struct rng *rng = &f->rng;
	uint32_t r = rng_below(rng, 100);

	if (r < 15 && f->nrecent) {
		*uk = f->recent[rng_below(rng, f->nrecent)];
		if (rng_chance(rng, 30))
			uk->req_flags = (uint32_t)rng_next(rng) & KEVENT_REQ_MASK;
		return;
	}
	memset(uk, 0, sizeof(*uk));
	if (r < 80)
		uk->type = rng_pick(rng, ((const uint32_t[]){ KEVENT_SOCKET,
				    KEVENT_TIMER, KEVENT_POLL, KEVENT_PIPE,
				    KEVENT_SIGNAL }));
	else if (r < 92)
		uk->type = rng_pick(rng, ((const uint32_t[]){ KEVENT_INODE,
				    KEVENT_NAIO, KEVENT_AIO,
				    KEVENT_POSIX_TIMER }));
	else
		uk->type = rng_pick(rng, ((const uint32_t[]){ KEVENT_MAX, 255,
				    0xffffffff, (uint32_t)rng_next(rng) }));
	switch (uk->type) {
	case KEVENT_SOCKET:
	case KEVENT_POLL:
	case KEVENT_PIPE:
		uk->id.raw[0] = (uint32_t)pick_fd(rng);
		if (rng_chance(rng, 10))
			uk->id.raw[1] = (uint32_t)rng_next(rng);
		break;
	case KEVENT_TIMER:
		uk->id.raw[0] = rng_pick(rng, secs);
		uk->id.raw[1] = rng_pick(rng, nsecs);
		break;
	case KEVENT_SIGNAL:
		uk->id.raw_u64 = rng_pick(rng, sigs);
		if (rng_chance(rng, 30))
			uk->id.raw_u64 |= KEVENT_SIGNAL_NOMASK;
		if (rng_chance(rng, 5))
			uk->id.raw[1] |= (uint32_t)rng_next(rng);
		break;
	default:
		uk->id.raw_u64 = rng_next(rng);
		if (rng_chance(rng, 50))
			uk->id.raw_u64 &= 0xff;
		break;
	}
	r = rng_below(rng, 100);
	if (r < 60 && uk->type < KEVENT_MAX)
		uk->event = valid_events[uk->type] &
			    ((uint32_t)rng_next(rng) | 1);
	else if (r < 80)
		uk->event = (uint32_t)rng_next(rng);
	else if (r < 90)
		uk->event = 0;
	else
		uk->event = KEVENT_MASK_ALL;
	r = rng_below(rng, 100);
	if (r < 75)
		uk->req_flags = (uint32_t)rng_next(rng) & KEVENT_REQ_MASK;
	else if (r < 90)
		uk->req_flags = (uint32_t)rng_next(rng);
	uk->ret_flags = (uint32_t)rng_next(rng);
	uk->ret_data[0] = (uint32_t)rng_next(rng);
	uk->ret_data[1] = (uint32_t)rng_next(rng);
	uk->ptr = rng_chance(rng, 80) ? rng_below(rng, 8) : rng_next(rng);
	if (f->nrecent < 16)
		f->recent[f->nrecent++] = *uk;
	else
		f->recent[rng_below(rng, 16)] = *uk;
}

static struct __kernel_timespec *pick_timeout(struct fuzzer *f,
					      unsigned int *flags)
{
	struct __kernel_timespec *t = (void *)(f->a.rw + ARENA_RW - PAGE);
	struct rng *rng = &f->rng;
	struct timespec rt;

	*flags = rng_chance(rng, 90) ? 0 :
		 rng_chance(rng, 50) ? (uint32_t)rng_next(rng) : 2;
	switch (rng_below(rng, 16)) {
	case 0:
		return NULL;
	case 1:
		return (void *)f->a.none;
	case 2:
		return kernel_ptr();
	case 3:
		t->tv_sec = -1;
		t->tv_nsec = 0;
		return t;
	case 4:
		t->tv_sec = 0;
		t->tv_nsec = rng_chance(rng, 50) ? 1000000000 : -1;
		return t;
	case 5:
		t->tv_sec = 0x7fffffffffffLL;
		t->tv_nsec = 0;
		return t;
	case 6:
	case 7:
		/* Absolute: now + a little, or long past. */
		clock_gettime(CLOCK_REALTIME, &rt);
		t->tv_sec = rng_chance(rng, 50) ? rt.tv_sec : 1;
		t->tv_nsec = rng_chance(rng, 50) ? 999999999 : 0;
		*flags |= KEVENT_FLAGS_ABSTIME;
		return t;
	case 8:
		t->tv_sec = 0;
		t->tv_nsec = 1 + rng_below(rng, 3000000);
		return t;
	default:
		t->tv_sec = 0;
		t->tv_nsec = 0;
		return t;
	}
}

/* Every event a harvest wrote into a buffer it could write: sane? */
static void check_events(const struct ukevent *ev, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct ukevent *e = &ev[i];
		uint32_t flags = e->ret_flags;

		INC(cnt->events);
		if (!(flags & KEVENT_RET_DONE) ||
		    (flags & ~(KEVENT_RET_DONE | KEVENT_RET_BROKEN |
			       KEVENT_RET_COPY_FAILED)) ||
		    e->type >= KEVENT_MAX) {
			bad(C_GET, "event with type %u flags %#x", e->type, flags);
			continue;
		}
		if (flags & KEVENT_RET_BROKEN) {
			INC(cnt->broken);
			if (!broken_err_ok(e, -(int)e->ret_data[1]))
				bad(C_GET, "BROKEN event of type %u with error %d",
				    e->type, (int)e->ret_data[1]);
		}
	}
}

/* ---------------------------------------------------------------- */
/* The calls.                                                       */

static int stable_fd(int fd)
{
	return fd == sq || fd == sr || fd == sd;
}

/* A wait without limit only where the kicker always kicks. */
static void bound_wait(int fd, struct __kernel_timespec **tp,
		       unsigned int *flags, struct fuzzer *f)
{
	struct __kernel_timespec *t = (void *)(f->a.rw + ARENA_RW - PAGE);

	if (stable_fd(fd))
		return;
	if (!*tp || (*tp == t && !(*flags & KEVENT_FLAGS_ABSTIME) &&
		     t->tv_sec > 0)) {
		t->tv_sec = 0;
		t->tv_nsec = 20000000;
		*tp = t;
	}
}

static void do_init(struct fuzzer *f)
{
	static const unsigned int sizes[] = { 0, 1, 2, 16, 100, 53687090,
					      53687091, 0xffffffff };
	unsigned int size = rng_pick(&f->rng, sizes), flags = 0;
	int pk, fd;
	void *ring = pick_ptr(&f->rng, &f->a, 1, 8 + 40, &pk);

	if (rng_chance(&f->rng, 20))
		flags = (uint32_t)rng_next(&f->rng);
	else if (rng_chance(&f->rng, 50))
		flags = KEVENT_INIT_CLOEXEC | KEVENT_INIT_NONBLOCK;
	INC(cnt->iter[C_INIT]);
	fd = kevent_init(ring, size, flags);
	if (fd >= 0) {
		/* The ring lies in our arena: no event ever goes there. */
		close(fd);
		return;
	}
	if (!in_list(errno, err_init))
		bad(C_INIT, "ring %p size %u flags %#x: %s", ring, size, flags,
		    strerror(errno));
}

static void do_ctl(struct fuzzer *f)
{
	static const unsigned int nums[] = { 0, 1, 1, 2, 3, 8, 64, 200,
					     0x10000, 0xffffffff };
	struct ukevent *arg, copy[64];
	unsigned int num = rng_pick(&f->rng, nums), cmd, i, n;
	int pk, fd = pick_fd(&f->rng), ret;

	cmd = rng_below(&f->rng, 100) < 94 ? rng_below(&f->rng, 4) :
	      (uint32_t)rng_next(&f->rng);
	arg = pick_ptr(&f->rng, &f->a, num < 64 ? num : 64, sizeof(*arg), &pk);
	/* Fill what is writable with random entries. */
	n = pk == P_VALID || pk == P_EDGE || pk == P_ODD ? num : 0;
	if (pk == P_EDGE)
		n = (unsigned int)((f->a.rw + ARENA_RW - (unsigned char *)arg) /
				   sizeof(*arg));
	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		rand_uk(f, &arg[i]);
	memcpy(copy, arg, n * sizeof(*arg));
	INC(cnt->iter[C_CTL]);
	ret = kevent_ctl(fd, cmd, num, arg);
	if (ret < 0) {
		if (!in_list(errno, err_ctl))
			bad(C_CTL, "fd %d cmd %u num %u: %s", fd, cmd, num,
			    strerror(errno));
		return;
	}
	if ((unsigned int)ret > num || cmd > KEVENT_CTL_READY) {
		bad(C_CTL, "fd %d cmd %u num %u returned %d", fd, cmd, num, ret);
		return;
	}
	if ((cmd == KEVENT_CTL_REMOVE || cmd == KEVENT_CTL_MODIFY) &&
	    (unsigned int)ret != num)
		bad(C_CTL, "cmd %u num %u copied back %d entries", cmd, num, ret);
	/* The entries copied back, where we can read them. */
	if (pk == P_RO || pk == P_NONE || pk == P_NULL || pk == P_KERNEL)
		return;
	for (i = 0; i < (unsigned int)ret && i < n; i++) {
		const struct ukevent *e = &arg[i];

		INC(cnt->entries);
		if (e->ret_flags == KEVENT_RET_DONE)
			continue;
		if (e->ret_flags != (KEVENT_RET_BROKEN | KEVENT_RET_DONE)) {
			bad(C_CTL, "cmd %u: entry type %u came back with flags %#x",
			    cmd, e->type, e->ret_flags);
			continue;
		}
		if (!entry_err_ok(cmd, e, -(int)e->ret_data[1]))
			bad(C_CTL, "cmd %u: entry type %u id %llx event %#x flags %#x: error %d (%s)",
			    cmd, e->type, (unsigned long long)e->id.raw_u64,
			    e->event, e->req_flags, (int)e->ret_data[1],
			    strerror(-(int)e->ret_data[1]));
	}
	(void)copy;
}

static void do_get(struct fuzzer *f)
{
	static const unsigned int maxes[] = { 0, 1, 2, 2, 8, 64, 300,
					      0x1000000, 0xffffffff };
	unsigned int max_nr = rng_pick(&f->rng, maxes), min_nr, flags;
	struct __kernel_timespec *tp;
	int pk, fd = pick_fd(&f->rng), n;
	struct ukevent *buf = pick_ptr(&f->rng, &f->a, max_nr < 64 ? max_nr : 64,
				       sizeof(*buf), &pk);

	switch (rng_below(&f->rng, 6)) {
	case 0:
		min_nr = 0;
		break;
	case 1:
		min_nr = 1;
		break;
	case 2:
		min_nr = 2;
		break;
	case 3:
		min_nr = max_nr;
		break;
	case 4:
		min_nr = max_nr + 1;
		break;
	default:
		min_nr = (uint32_t)rng_next(&f->rng);
		break;
	}
	tp = pick_timeout(f, &flags);
	bound_wait(fd, &tp, &flags, f);
	INC(cnt->iter[C_GET]);
	n = kevent_get_events(fd, min_nr, max_nr, tp, buf, flags);
	if (n < 0) {
		if (!in_list(errno, err_get))
			bad(C_GET, "fd %d min %u max %u: %s", fd, min_nr, max_nr,
			    strerror(errno));
		return;
	}
	if ((unsigned int)n > max_nr || !max_nr || min_nr > max_nr) {
		bad(C_GET, "fd %d min %u max %u returned %d", fd, min_nr,
		    max_nr, n);
		return;
	}
	if (pk == P_VALID || pk == P_ODD)
		check_events(buf, n < 64 ? n : 64);
	else if (pk == P_EDGE)
		check_events(buf, n < 2 ? n : 1);
}

static void do_wait(struct fuzzer *f)
{
	static const unsigned int nums[] = { 0, 1, 2, 16, 17, 100, 0xffffffff };
	unsigned int num = rng_pick(&f->rng, nums), flags, old;
	struct __kernel_timespec *tp;
	int fd = pick_fd(&f->rng), n;

	old = rng_chance(&f->rng, 50) ? rng_below(&f->rng, 20) :
	      (uint32_t)rng_next(&f->rng);
	tp = pick_timeout(f, &flags);
	bound_wait(fd, &tp, &flags, f);
	INC(cnt->iter[C_WAIT]);
	n = kevent_wait(fd, num, old, tp, flags);
	if (n < 0) {
		if (!in_list(errno, err_wait))
			bad(C_WAIT, "fd %d num %u: %s", fd, num, strerror(errno));
		return;
	}
	if ((unsigned int)n > num)
		bad(C_WAIT, "fd %d num %u returned %d", fd, num, n);
}

static void do_commit(struct fuzzer *f)
{
	unsigned int idx, over;
	int fd = pick_fd(&f->rng), n;

	idx = rng_chance(&f->rng, 70) ? rng_below(&f->rng, 20) :
	      (uint32_t)rng_next(&f->rng);
	over = rng_chance(&f->rng, 70) ? rng_below(&f->rng, 3) :
	       (uint32_t)rng_next(&f->rng);
	INC(cnt->iter[C_COMMIT]);
	n = kevent_commit(fd, idx, over);
	if (n < 0 && !in_list(errno, err_commit))
		bad(C_COMMIT, "fd %d new_uidx %u over %u: %s", fd, idx, over,
		    strerror(errno));
}

static void do_ioctl(struct fuzzer *f)
{
	int pk, fd = pick_fd(&f->rng), ret, err;
	struct kevent_abi *abi = pick_ptr(&f->rng, &f->a, 1, sizeof(*abi), &pk);
	unsigned long cmd = KEVENT_IOC_GET_ABI;

	/* Other commands only on our own queues: other files obey them. */
	if (stable_fd(fd) && rng_chance(&f->rng, 30))
		cmd = (uint32_t)rng_next(&f->rng);
	if (pk == P_VALID)
		memset(abi, 0xa5, sizeof(*abi));
	INC(cnt->iter[C_IOCTL]);
	ret = ioctl(fd, cmd, abi);
	err = errno;
	if (!stable_fd(fd))
		return;
	if (cmd != KEVENT_IOC_GET_ABI) {
		if (!(ret == -1 && err == ENOTTY))
			bad(C_IOCTL, "cmd %#lx on a queue: %d (%s), not ENOTTY",
			    cmd, ret, strerror(err));
		return;
	}
	if (ret == 0 && pk == P_VALID) {
		if (abi->version != KEVENT_ABI_VERSION || abi->reserved[0] ||
		    abi->reserved[1] || abi->reserved[2] ||
		    abi->nr_init != (uint32_t)__NR_kevent_init)
			bad(C_IOCTL, "version %u nr_init %u reserved %x %x %x",
			    abi->version, abi->nr_init, abi->reserved[0],
			    abi->reserved[1], abi->reserved[2]);
	} else if (ret != 0 && err != EFAULT) {
		bad(C_IOCTL, "pointer kind %d: %s", pk, strerror(err));
	} else if (ret == 0 && pk != P_ODD && pk != P_EDGE) {
		bad(C_IOCTL, "pointer kind %d: success", pk);
	}
}

/*
 * Read the fdinfo of a descriptor; for a queue, check its lines: each
 * "kevent:" line parses and their number is "kevents:".
 */
static void do_fdinfo(struct fuzzer *f)
{
	int fd = pick_fd(&f->rng), file, nlines = 0;
	char path[64], buf[65536], *line, *save = NULL;
	long kevents = -1;
	ssize_t n, len = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	INC(cnt->iter[C_FDINFO]);
	file = open(path, O_RDONLY);
	if (file < 0) {
		if (errno != ENOENT)
			bad(C_FDINFO, "open %s: %s", path, strerror(errno));
		return;
	}
	while ((n = read(file, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	close(file);
	if (n < 0) {
		/* Closed between open() and read(): proc(5) says ENOENT. */
		if (errno != ENOENT && errno != EBADF)
			bad(C_FDINFO, "read %s: %s", path, strerror(errno));
		return;
	}
	buf[len] = '\0';
	if (!strstr(buf, "kevents:") || len >= (ssize_t)sizeof(buf) - 1)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int type, event, flags, ready;
		unsigned long long id, user;

		if (!strncmp(line, "kevents:", 8)) {
			kevents = strtol(line + 8, NULL, 10);
		} else if (!strncmp(line, "kevent:", 7)) {
			nlines++;
			if (sscanf(line + 7, " type %u id %llx event %x req_flags %x user %llx ready %u",
				   &type, &id, &event, &flags, &user, &ready) != 6 ||
			    type >= KEVENT_MAX || ready > 1)
				bad(C_FDINFO, "line \"%s\"", line);
		} else if (!strchr(line, ':')) {
			bad(C_FDINFO, "line \"%s\"", line);
		}
	}
	/*
	 * Registrations die without the queue's locks, so the count and
	 * the lines may disagree while objects go away: counted, shown,
	 * not failed.
	 */
	if (kevents != nlines && INC(cnt->fdinfo_bad) <= 3)
		diag("%sfdinfo: kevents: %ld, but %d kevent lines",
		     in_child ? "child: " : "", kevents, nlines);
}

static void do_ptimer(struct fuzzer *f)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
					    CLOCK_BOOTTIME,
					    CLOCK_PROCESS_CPUTIME_ID, 99 };
	struct itimerspec its;
	struct sigevent sev;
	timer_t t;
	int i;

	if (f->ntimers && rng_chance(&f->rng, 40)) {
		i = (int)rng_below(&f->rng, (uint32_t)f->ntimers);
		if (timer_delete(f->timers[i]))
			bad(C_PTIMER, "timer_delete: %s", strerror(errno));
		f->timers[i] = f->timers[--f->ntimers];
		return;
	}
	if (f->ntimers == 4)
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	if (rng_chance(&f->rng, 10))
		sev.sigev_notify |= SIGEV_THREAD_ID;
	sev._sigev_un._tid = pick_fd(&f->rng);
	sev.sigev_value.sival_ptr = (void *)(uintptr_t)rng_next(&f->rng);
	INC(cnt->iter[C_PTIMER]);
	if (timer_create(rng_pick(&f->rng, clocks), &sev, &t)) {
		if (!in_list(errno, err_ptimer))
			bad(C_PTIMER, "fd %d: %s", sev._sigev_un._tid,
			    strerror(errno));
		return;
	}
	f->timers[f->ntimers++] = t;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = rng_pick(&f->rng, ((const long[]){ 0, 1, 1000,
					1000000, 999999999 }));
	its.it_interval.tv_nsec = rng_pick(&f->rng, ((const long[]){ 0, 1,
					   100000, 1000000 }));
	if (timer_settime(t, 0, &its, NULL))
		bad(C_PTIMER, "timer_settime: %s", strerror(errno));
}

/* ---------------------------------------------------------------- */
/* Oracles: one bad argument, on queues nobody closes.              */

static int snull;	/* /dev/null, never closed */

#define OPTR	0x0fac1e	/* the ptr of the oracles' entries */

static void oracle_check(const char *what, long ret, int err, int want)
{
	INC(cnt->oracle);
	if (want ? (ret == -1 && err == want) : ret >= 0)
		return;
	if (INC(cnt->oracle_bad) <= 8)
		diag("%soracle: %s returned %ld (%s), expected %s",
		     in_child ? "child: " : "", what, ret,
		     ret < 0 ? strerror(err) : "success",
		     want ? strerror(want) : "success");
}

#define ORACLE(expr, want) do {					\
		long r_ = (long)(expr);					\
		oracle_check(#expr, r_, errno, (want));			\
	} while (0)

/*
 * On the ring queue from the child: EPERM, or the argument's own error
 * (the manual does not order the two).
 */
#define ORACLE_RING(expr, want) do {					\
		long r_ = (long)(expr);					\
		int e_ = errno;						\
		if (in_child && r_ == -1 && e_ == EPERM)		\
			e_ = (want);					\
		oracle_check(#expr, r_, e_, (want));			\
	} while (0)

/* ADD of one entry that must come back BROKEN with -want. */
static void oracle_entry(const char *what, struct ukevent uk, int want)
{
	int ret = kevent_ctl(sq, KEVENT_CTL_ADD, 1, &uk);

	INC(cnt->oracle);
	if (ret == 1 && uk.ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
	    (int)uk.ret_data[1] == -want)
		return;
	if (INC(cnt->oracle_bad) <= 8)
		diag("%soracle: ADD of %s returned %d, flags %#x, error %d; expected error %d (%s)",
		     in_child ? "child: " : "", what, ret, uk.ret_flags,
		     (int)uk.ret_data[1], -want, strerror(want));
}

static void do_oracle(struct fuzzer *f)
{
	struct ukevent *buf = (void *)f->a.rw, uk;
	void *none = f->a.none;
	int n;

	switch (rng_below(&f->rng, 40)) {
	case 0:
		ORACLE(kevent_get_events(sq, 0, 0, TSP(0, 0), buf, 0), EINVAL);
		break;
	case 1:
		ORACLE(kevent_get_events(sq, 2, 1, TSP(0, 0), buf, 0), EINVAL);
		break;
	case 2:
		ORACLE(kevent_get_events(sq, 0, 1, TSP(0, 0), buf, 2), EINVAL);
		break;
	case 3:
		ORACLE(kevent_get_events(sq, 0, 1, TSP(0, 1000000000), buf, 0),
		       EINVAL);
		break;
	case 4:
		ORACLE(kevent_get_events(sq, 0, 1, TSP(-1, 0), buf, 0), EINVAL);
		break;
	case 5:
		ORACLE(kevent_get_events(sq, 0, 1, kernel_ptr(), buf, 0), EFAULT);
		break;
	case 6:
		ORACLE(kevent_get_events(sq, 0, 1, none, buf, 0), EFAULT);
		break;
	case 7:
		if (sizeof(void *) == 8)
			ORACLE(kevent_get_events(sq, 1, 1, TSP(0, 0), kernel_ptr(), 0),
			       EFAULT);
		break;
	case 8:
		ORACLE(kevent_get_events(snull, 0, 1, TSP(0, 0), buf, 0), EINVAL);
		break;
	case 9:
		ORACLE(kevent_get_events(-1, 0, 1, TSP(0, 0), buf, 0), EBADF);
		break;
	case 10:
		ORACLE(kevent_wait(sq, 1, 0, TSP(0, 0), 0), EINVAL);
		break;
	case 11:
		ORACLE_RING(kevent_wait(sr, SR_SIZE + 1, 0, TSP(0, 0), 0), EINVAL);
		break;
	case 12:
		ORACLE_RING(kevent_wait(sr, 0, 0, TSP(0, 0), 2), EINVAL);
		break;
	case 13:
		ORACLE_RING(kevent_wait(sr, 0, 0, TSP(0, 1000000000), 0), EINVAL);
		break;
	case 14:
		ORACLE_RING(kevent_wait(sr, 0, 0, kernel_ptr(), 0), EFAULT);
		break;
	case 15:
		ORACLE(kevent_commit(sq, 0, 0), EINVAL);
		break;
	case 16:
		ORACLE_RING(kevent_commit(sr, SR_SIZE, 0), EINVAL);
		break;
	case 17:
		ORACLE(kevent_commit(snull, 0, 0), EINVAL);
		break;
	case 18:
		ORACLE(kevent_commit(1 << 20, 0, 0), EBADF);
		break;
	case 19:
		ORACLE(kevent_ctl(sq, 4, 1, buf), EINVAL);
		break;
	case 20:
		ORACLE(kevent_ctl(sq, KEVENT_CTL_ADD, 1, kernel_ptr()), EFAULT);
		break;
	case 21:
		ORACLE(kevent_ctl(sq, KEVENT_CTL_ADD, 1, none), EFAULT);
		break;
	case 22:
		oracle_entry("type 9", mk_uk(KEVENT_MAX, 0, 1, 0, OPTR), ENOSYS);
		break;
	case 23:
		oracle_entry("KEVENT_POSIX_TIMER",
			     mk_uk(KEVENT_POSIX_TIMER, rng_below(&f->rng, 8),
				   KEVENT_MASK_ALL, 0, OPTR), ENOSYS);
		break;
	case 24:
		uk = timer_ukevent(1, 0, 0x20, 0x0fac1e);
		oracle_entry("a timer with req_flags 0x20", uk, EINVAL);
		break;
	case 25:
		uk = timer_ukevent(0, 1000000000, 0, 0x0fac1e);
		oracle_entry("a timer with 10^9 ns", uk, EINVAL);
		break;
	case 26:
		oracle_entry("SIGKILL", mk_uk(KEVENT_SIGNAL, SIGKILL,
					      KEVENT_SIGNAL_DELIVERY, 0, OPTR), EINVAL);
		break;
	case 27:
		oracle_entry("signal 65", mk_uk(KEVENT_SIGNAL, 65,
						KEVENT_SIGNAL_DELIVERY, 0, OPTR), EINVAL);
		break;
	case 28:
		oracle_entry("a pipe registration of /dev/null",
			     mk_uk(KEVENT_PIPE, (uint32_t)snull,
				   KEVENT_SOCKET_RECV, 0, OPTR), EINVAL);
		break;
	case 29:
		oracle_entry("a pipe registration of a closed fd",
			     mk_uk(KEVENT_PIPE, 999, KEVENT_SOCKET_RECV, 0, OPTR), EBADF);
		break;
	case 30:
		oracle_entry("a socket registration of /dev/null",
			     mk_uk(KEVENT_SOCKET, (uint32_t)snull,
				   KEVENT_SOCKET_RECV, 0, OPTR), ENOTSOCK);
		break;
	case 31:
		oracle_entry("a poll registration of the queue itself",
			     mk_uk(KEVENT_POLL, (uint32_t)sq, POLLIN, 0, OPTR), EINVAL);
		break;
	case 32:
		uk = mk_uk(KEVENT_TIMER, rng_next(&f->rng) | 1, KEVENT_TIMER_FIRED, 0,
			   OPTR);
		INC(cnt->oracle);
		n = kevent_ctl(sq, KEVENT_CTL_REMOVE, 1, &uk);
		if ((n != 1 || (int)uk.ret_data[1] != -ENOENT) &&
		    INC(cnt->oracle_bad) <= 8)
			diag("oracle: REMOVE of nothing: %d, error %d", n,
			     (int)uk.ret_data[1]);
		break;
	case 33:
		ORACLE(kevent_init(NULL, 1, 0), EINVAL);
		break;
	case 34:
		ORACLE(kevent_init((void *)f->a.rw, 0, 0), EINVAL);
		break;
	case 35:
		ORACLE(kevent_init((void *)f->a.rw, 53687091, 0), EINVAL);
		break;
	case 36:
		ORACLE(kevent_init((void *)f->a.ro, 1, 0), EFAULT);
		break;
	case 37:
		ORACLE(ioctl(sd, KEVENT_IOC_GET_ABI, kernel_ptr()), EFAULT);
		break;
	case 38:
		ORACLE(ioctl(sq, 0x1234, buf), ENOTTY);
		break;
	default:
		/* The ring of sr belongs to the parent's address space. */
		INC(cnt->perm_checks);
		n = kevent_get_events(sr, 0, 1, TSP(0, 0), buf, 0);
		if (in_child ? !(n == -1 && errno == EPERM) : n < 0) {
			INC(cnt->perm_bad);
			if (cnt->perm_bad <= 4)
				diag("%skevent_get_events on the ring queue: %d (%s)",
				     in_child ? "child: " : "", n,
				     n < 0 ? strerror(errno) : "success");
		}
		break;
	}
}

/* ---------------------------------------------------------------- */
/* Threads.                                                         */

static volatile sig_atomic_t kicks;

static void kick_handler(int sig)
{
	(void)sig;
	kicks++;
}

static struct fuzzer fuzzers[NFUZZ];
static int nfuzzers;

static void *fuzzer_main(void *arg)
{
	struct fuzzer *f = arg;
	unsigned int r;
	int i;

	cnt = in_child ? &sh->child : &sh->parent;
	f->tid = (pid_t)syscall(SYS_gettid);
	while (!LOAD(sh->stop)) {
		r = rng_below(&f->rng, 100);
		if (r < 6)
			do_init(f);
		else if (r < 40)
			do_ctl(f);
		else if (r < 60)
			do_get(f);
		else if (r < 68)
			do_wait(f);
		else if (r < 74)
			do_commit(f);
		else if (r < 78)
			do_ioctl(f);
		else if (r < 82)
			do_fdinfo(f);
		else if (r < 86)
			do_ptimer(f);
		else
			do_oracle(f);
	}
	for (i = 0; i < f->ntimers; i++)
		if (timer_delete(f->timers[i]))
			bad(C_PTIMER, "timer_delete: %s", strerror(errno));
	f->ntimers = 0;
	return NULL;
}

/* Ends every wait: READY(0) on every queue, and a signal to each fuzzer. */
static void *kicker_main(void *arg)
{
	unsigned int round = 0;
	int i;

	(void)arg;
	while (!LOAD(sh->stop)) {
		kevent_ctl(sq, KEVENT_CTL_READY, 0, NULL);
		kevent_ctl(sr, KEVENT_CTL_READY, 0, NULL);
		kevent_ctl(sd, KEVENT_CTL_READY, 0, NULL);
		for (i = 0; i < NSLOTS; i++)
			kevent_ctl(__atomic_load_n(&pool[i].fd, __ATOMIC_RELAXED),
				   KEVENT_CTL_READY, 0, NULL);
		grave_kick(0);
		if (!(++round % 4))
			for (i = 0; i < nfuzzers; i++)
				if (fuzzers[i].tid)
					syscall(SYS_tgkill, getpid(), fuzzers[i].tid,
						SIGUSR2);
		msleep(5);
	}
	return NULL;
}

/* Replaces descriptors, feeds them, and plays with the rings. */
static void *churner_main(void *arg)
{
	struct rng rng;
	uint64_t one = 1;
	char buf[256];
	int i, fd, peer;
	ssize_t n = 0;

	(void)arg;
	rng_seed(&rng, seed, 500);
	while (!LOAD(sh->stop)) {
		i = (int)rng_below(&rng, NSLOTS);
		fd = pool[i].fd;
		peer = pool[i].peer;
		switch (rng_below(&rng, 10)) {
		case 0:
		case 1:
			slot_close(i);
			slot_fill(&rng, i);
			break;
		case 2:
		case 3:
			/* Data, room and hang-ups. */
			if (peer >= 0)
				n = write(peer, buf, 1 + rng_below(&rng, sizeof(buf)));
			else if (fd >= 0)
				n = write(fd, &one, sizeof(one));
			break;
		case 4:
			if (fd >= 0)
				n = read(fd, buf, sizeof(buf));
			break;
		case 5:
			if (pool[i].kind == F_UDP_REFUSED)
				n = send(fd, "x", 1, MSG_DONTWAIT);
			else if (peer >= 0 && rng_chance(&rng, 30)) {
				close(peer);
				pool[i].peer = -1;
			}
			break;
		case 6:
			/* A ring unmapped, or read-only, while in use. */
			if (pool[i].kind != F_QUEUE_RING)
				break;
			if (rng_chance(&rng, 50))
				mmap(regions[i], 2 * PAGE, PROT_NONE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			else
				mprotect(regions[i], 2 * PAGE, PROT_READ);
			break;
		case 7:
			if (pool[i].kind == F_QUEUE_RING)
				mmap(regions[i], 2 * PAGE, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		default:
			usleep(rng_below(&rng, 2000));
			break;
		}
		usleep(rng_below(&rng, 500));
	}
	(void)n;
	return NULL;
}

/* ---------------------------------------------------------------- */
/* main                                                             */

static int anchored(int fd)
{
	struct ukevent uk = timer_ukevent(100000, 0, 0, ANCHOR_PTR);

	if (fd < 0 || kevent_ctl(fd, KEVENT_CTL_ADD, 1, &uk) != 0)
		bail_out("anchor: %s", strerror(errno));
	return fd;
}

static void run_child(int secs)
{
	pthread_t kicker;
	int i;

	in_child = 1;
	cnt = &sh->child;
	nfuzzers = 2;
	for (i = 0; i < nfuzzers; i++) {
		rng_seed(&fuzzers[i].rng, seed, 900 + (uint64_t)i);
		fuzzers[i].nrecent = 0;
		fuzzers[i].ntimers = 0;
		fuzzers[i].tid = 0;
	}
	pthread_create(&kicker, NULL, kicker_main, NULL);
	for (i = 0; i < nfuzzers; i++)
		pthread_create(&fuzzers[i].th, NULL, fuzzer_main, &fuzzers[i]);
	for (i = 0; i < nfuzzers; i++)
		pthread_join(fuzzers[i].th, NULL);
	pthread_join(kicker, NULL);
	__atomic_store_n(&sh->child.done, 1, __ATOMIC_SEQ_CST);
	(void)secs;
	_exit(0);
}

int main(int argc, char **argv)
{
	pthread_t kicker, churner;
	struct sigaction sa;
	struct rlimit rl;
	struct sockaddr_in sin;
	socklen_t len;
	long long join_end;
	int secs, i, stuck = 0, status, fd, base, err;
	long was = 0;
	uint32_t child_bad = 0, total = 0;
	pid_t child;
	long kev = -1;
	char buf[4096] = "";

	secs = start_run("fuzz", argc, argv, 8, 14, 60, &seed);

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick_handler;
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGURG, &sa, NULL);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	must(sh != MAP_FAILED, "mmap: %s", strerror(errno));
	cnt = &sh->parent;

	snprintf(fifo_path, sizeof(fifo_path), "/tmp/kevent-fuzz-fifo-%d", (int)getpid());
	snprintf(file_path, sizeof(file_path), "/tmp/kevent-fuzz-file-%d", (int)getpid());
	must(!mkfifo(fifo_path, 0600), "mkfifo: %s", strerror(errno));
	snull = open("/dev/null", O_RDWR);
	tcp_listener = socket(AF_INET, SOCK_STREAM, 0);
	memset(&tcp_addr, 0, sizeof(tcp_addr));
	tcp_addr.sin_family = AF_INET;
	tcp_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	len = sizeof(tcp_addr);
	must(snull >= 0 && tcp_listener >= 0 &&
	     !bind(tcp_listener, (struct sockaddr *)&tcp_addr, len) &&
	     !getsockname(tcp_listener, (struct sockaddr *)&tcp_addr, &len) &&
	     !listen(tcp_listener, 128), "listener: %s", strerror(errno));
	fcntl(tcp_listener, F_SETFL, O_NONBLOCK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	len = sizeof(sin);
	must(fd >= 0 && !bind(fd, (struct sockaddr *)&sin, len) &&
	     !getsockname(fd, (struct sockaddr *)&sin, &len), "udp: %s",
	     strerror(errno));
	refused_addr = sin;
	close(fd);

	for (i = 0; i < NSLOTS; i++) {
		regions[i] = mmap(NULL, RING_REGION, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		must(regions[i] != MAP_FAILED &&
		     !mprotect(regions[i] + 2 * PAGE, PAGE, PROT_NONE), "regions");
	}
	for (i = 0; i < GRAVE; i++)
		graveyard[i] = -1;
	base = limit_probe(&err, &was);
	sr_ring = ring_alloc(SR_SIZE, NULL);
	must(sr_ring != NULL, "ring");
	sq = anchored(kevent_init(NULL, 0, 0));
	sr = anchored(kevent_init(sr_ring, SR_SIZE, 0));
	sd = anchored(open("/dev/kevent", O_RDWR));
	{
		struct rng rng;

		rng_seed(&rng, seed, 400);
		for (i = 0; i < NSLOTS; i++) {
			pool[i].peer = -1;
			slot_fill(&rng, i);
		}
	}
	for (i = 0; i < NFUZZ; i++) {
		fuzzers[i].id = i;
		rng_seed(&fuzzers[i].rng, seed, 100 + (uint64_t)i);
		arena_init(&fuzzers[i].a, &fuzzers[i].rng);
	}

	/* The child fuzzes the same queues from its own address space. */
	fflush(stdout);
	child = fork();
	must(child >= 0, "fork: %s", strerror(errno));
	if (!child)
		run_child(secs);

	nfuzzers = NFUZZ;
	must(!pthread_create(&kicker, NULL, kicker_main, NULL) &&
	     !pthread_create(&churner, NULL, churner_main, NULL), "threads");
	for (i = 0; i < NFUZZ; i++)
		must(!pthread_create(&fuzzers[i].th, NULL, fuzzer_main, &fuzzers[i]),
		     "threads");
	msleep((unsigned int)secs * 1000);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
	join_end = now_ns() + 20000000000LL;
	for (i = 0; i < NFUZZ; i++)
		if (timed_join(fuzzers[i].th, join_end)) {
			diag("fuzzer %d did not stop", i);
			stuck++;
		}
	if (timed_join(churner, join_end) || timed_join(kicker, join_end))
		stuck++;
	if (stuck)
		dump_tasks(getpid());
	status = -1;
	while (now_ns() < join_end) {
		if (waitpid(child, &status, WNOHANG) == child)
			break;
		msleep(10);
	}
	if (status == -1) {
		diag("the child did not stop");
		dump_tasks(child);
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		stuck++;
	}

	/* Close everything. */
	for (i = 0; i < NSLOTS; i++)
		slot_close(i);
	grave_kick(1);
	close(sq);
	close(sr);
	close(sd);
	close(tcp_listener);
	unlink(fifo_path);
	unlink(file_path);

	for (i = 0; i < C_NR; i++) {
		total += sh->parent.iter[i] + sh->child.iter[i];
		child_bad += sh->child.bad[i];
	}
	diag("iterations: %u in %d s (parent and child)", total, secs);
	for (i = 0; i < C_NR; i++)
		diag("  %s: %u + %u in the child, %u + %u undocumented results",
		     call_name[i], sh->parent.iter[i], sh->child.iter[i],
		     sh->parent.bad[i], sh->child.bad[i]);
	diag("fdinfo: kevents: and the kevent lines disagreed %u + %u times",
	     sh->parent.fdinfo_bad, sh->child.fdinfo_bad);
	diag("oracles: %u + %u, %u + %u wrong; entries checked %u + %u; events checked %u + %u (%u + %u broken)",
	     sh->parent.oracle, sh->child.oracle, sh->parent.oracle_bad,
	     sh->child.oracle_bad, sh->parent.entries, sh->child.entries,
	     sh->parent.events, sh->child.events, sh->parent.broken,
	     sh->child.broken);
	for (i = C_INIT; i <= C_PTIMER; i++)
		is_int(sh->parent.bad[i], 0, "%s: every result documented (%u calls)",
		       call_name[i], sh->parent.iter[i]);
	ok(!sh->parent.oracle_bad && !sh->child.oracle_bad,
	   "calls with one bad argument fail with its documented errno (%u)",
	   sh->parent.oracle + sh->child.oracle);
	ok(!child_bad && status == 0,
	   "the forked child: every result documented (status %#x, %u undocumented)",
	   status, child_bad);
	ok(!sh->parent.perm_bad && !sh->child.perm_bad && sh->child.perm_checks,
	   "a ring queue from the child's address space: EPERM (%u checks)",
	   sh->child.perm_checks);
	is_int(stuck, 0, "every thread and the child stopped in time");

	/* A fresh queue lists nothing. */
	fd = kevent_init(NULL, 0, 0);
	if (read_fdinfo(fd, buf, sizeof(buf)) > 0)
		kev = fdinfo_value(buf, "kevents");
	ok(kev == 0 && !strstr(buf, "kevent:\t"),
	   "after the fuzz, a fresh queue's fdinfo lists no registration");
	close(fd);
	leak_point(base, "the fuzz");
	return tap_done();
}
