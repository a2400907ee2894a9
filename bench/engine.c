// SPDX-License-Identifier: MIT
/*
 * The harvest engine: one interface over the seven ways of learning which
 * descriptors are ready, so that every workload runs the same code for
 * every mechanism.  Registrations are numbered by an index that comes
 * back with each event (ukevent.ptr, epoll_event.data, io_uring
 * user_data, the position in the pollfd array); an event that is not
 * what was registered, or that reports an error, fails the run.
 */
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <liburing.h>

#include "kbench.h"

const char *const mech_name[M_NR] = {
	[M_RING] = "ring",
	[M_GETEV] = "getev",
	[M_EPOLL_LT] = "epoll-lt",
	[M_EPOLL_ET] = "epoll-et",
	[M_URING] = "uring",
	[M_POLL] = "poll",
	[M_RING_LT] = "ring-lt",
	[M_GETEV_LT] = "getev-lt",
	[M_URING_NODT] = "uring-nodt",
	[M_DIRECT] = "direct",
	[M_NULL] = "null",
};

/* The variants go through their base's code. */
static enum mech base_of(enum mech m)
{
	switch (m) {
	case M_RING_LT: return M_RING;
	case M_GETEV_LT: return M_GETEV;
	case M_URING_NODT: return M_URING;
	default: return m;
	}
}

/**
 * engine_is_kevent - does @m harvest with kevent?
 * @m: the mechanism
 */
int engine_is_kevent(enum mech m)
{
	return base_of(m) == M_RING || base_of(m) == M_GETEV ||
	       base_of(m) == M_DIRECT;
}

/* user_data of an io_uring POLL_REMOVE: not an index. */
#define URING_REMOVE	(~0ULL)
/* Registrations per kevent_ctl() or io_uring_submit() while setting up. */
#define SETUP_BATCH	1024

struct engine {
	enum mech m, base;
	int nfds;		/* the index space: 0 .. nfds-1 */
	int maxbatch;
	int fd;			/* kevent queue or epoll instance */
	struct kevent_ring *ring;
	unsigned int ring_size, uidx, over;
	struct kevent_ring_tail *tail;	/* M_DIRECT */
	__u32 head;			/* M_DIRECT: slots consumed */
	struct ukevent *uk;	/* SETUP_BATCH or maxbatch entries */
	struct epoll_event *ev;
	struct io_uring uring;
	int *fdof;		/* index -> fd, for io_uring's re-arm */
	unsigned long rearms;
	unsigned long eintr;	/* waits that ended with EINTR, retried */
	struct pollfd *pfd;	/* M_POLL: by index, fd -1 when unused */
	int npfd;		/* highest index in use + 1 */
};

struct engine *engine_new(enum mech m, int nfds, int maxbatch)
{
	struct engine *e = xcalloc(1, sizeof(*e));
	struct io_uring_params p;
	int ret;

	e->m = m;
	e->base = base_of(m);
	e->nfds = nfds;
	e->maxbatch = maxbatch;
	e->fd = -1;
	e->uk = xcalloc(maxbatch > SETUP_BATCH ? maxbatch : SETUP_BATCH,
			sizeof(*e->uk));
	switch (e->base) {
	case M_RING:
		e->ring_size = maxbatch;
		e->ring = xcalloc(1, sizeof(*e->ring) +
				  (size_t)maxbatch * sizeof(struct ukevent));
		e->fd = kevent_init(e->ring, e->ring_size, KEVENT_INIT_CLOEXEC);
		break;
	case M_GETEV:
		e->fd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
		break;
	case M_DIRECT:
		/* A slot for each registration: the ring never fills. */
		for (e->ring_size = 1; e->ring_size < (unsigned int)nfds;)
			e->ring_size *= 2;
		if (posix_memalign((void **)&e->ring, 64,
				   KEVENT_DIRECT_RING_BYTES(e->ring_size)))
			die("posix_memalign: out of memory");
		e->fd = kevent_init(e->ring, e->ring_size,
				    KEVENT_INIT_CLOEXEC | KEVENT_INIT_DIRECT);
		e->tail = kevent_ring_tail(e->ring, e->ring_size);
		break;
	case M_EPOLL_LT:
	case M_EPOLL_ET:
		e->fd = epoll_create1(EPOLL_CLOEXEC);
		e->ev = xcalloc(maxbatch, sizeof(*e->ev));
		break;
	case M_URING:
		e->fdof = xcalloc(nfds, sizeof(int));
		/*
		 * As a server tuned for it would: one issuer, completions
		 * posted when the ring is entered to wait (6.1), and a CQ
		 * large enough that a round never overflows it.
		 */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		if (m == M_URING)
			p.flags |= IORING_SETUP_SINGLE_ISSUER |
				   IORING_SETUP_DEFER_TASKRUN;
		p.cq_entries = 4 * (maxbatch > SETUP_BATCH ? maxbatch : SETUP_BATCH);
		ret = io_uring_queue_init_params(SETUP_BATCH, &e->uring, &p);
		if (ret)
			die("io_uring_queue_init_params: %s", strerror(-ret));
		e->fd = e->uring.ring_fd;
		break;
	case M_POLL:
		e->pfd = xcalloc(nfds, sizeof(*e->pfd));
		for (int i = 0; i < nfds; i++)
			e->pfd[i].fd = -1;
		e->fd = 0;
		break;
	default:
		die("bad mechanism %d", m);
	}
	if (e->fd < 0)
		die("%s: cannot create the instance: %s", mech_name[m],
		    strerror(errno));
	return e;
}

void engine_free(struct engine *e)
{
	if (e->base == M_URING)
		io_uring_queue_exit(&e->uring);
	else if (e->base != M_POLL)
		close(e->fd);
	free(e->ring);
	free(e->uk);
	free(e->ev);
	free(e->fdof);
	free(e->pfd);
	free(e);
}

/* The registration of one descriptor, as kevent wants it. */
static void kevent_entry(struct ukevent *uk, int fd, int idx, enum kind kind,
			 int et)
{
	memset(uk, 0, sizeof(*uk));
	uk->id.raw[0] = fd;
	switch (kind) {
	case K_PIPE:
		uk->type = KEVENT_PIPE;
		uk->event = KEVENT_SOCKET_RECV;
		break;
	case K_UNIX:
	case K_TCP:
		uk->type = KEVENT_SOCKET;
		uk->event = KEVENT_SOCKET_RECV;
		break;
	default:
		uk->type = KEVENT_POLL;
		uk->event = KEVENT_POLL_POLLIN;
		break;
	}
	/* ALWAYS_QUEUE: an entry that comes back is an error. */
	uk->req_flags = (et ? KEVENT_REQ_ET : 0) | KEVENT_REQ_ALWAYS_QUEUE;
	uk->ptr = idx;
}

static struct io_uring_sqe *uring_sqe(struct engine *e)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->uring);

	if (!sqe) {
		int ret = io_uring_submit(&e->uring);

		if (ret < 0)
			die("io_uring_submit: %s", strerror(-ret));
		sqe = io_uring_get_sqe(&e->uring);
		if (!sqe)
			die("io_uring: no SQE after a submit");
	}
	return sqe;
}

static void uring_arm(struct engine *e, int fd, int idx)
{
	struct io_uring_sqe *sqe = uring_sqe(e);

	io_uring_prep_poll_multishot(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, idx);
	e->fdof[idx] = fd;
}

/*
 * KEVENT_CTL_ADD or KEVENT_CTL_REMOVE of fds[from] .. fds[to - 1], in
 * calls of SETUP_BATCH entries.  ADD (with ALWAYS_QUEUE) copies back
 * only entries that failed: none may come back; REMOVE copies back each
 * entry, which must be DONE and nothing else.
 */
static void kevent_batch(struct engine *e, unsigned int cmd, const int *fds,
			 int from, int to, enum kind kind)
{
	int i, k, n, ret;

	for (i = from; i < to; i += n) {
		n = to - i < SETUP_BATCH ? to - i : SETUP_BATCH;
		for (k = 0; k < n; k++)
			kevent_entry(&e->uk[k], fds[i + k], i + k, kind,
				     e->m == e->base);
		ret = kevent_ctl(e->fd, cmd, n, e->uk);
		if (ret != (cmd == KEVENT_CTL_ADD ? 0 : n))
			fail("%s: kevent_ctl %s of %d: %d back (%s)",
			     mech_name[e->m], cmd == KEVENT_CTL_ADD ? "ADD" :
			     "REMOVE", n, ret, ret < 0 ? strerror(errno) :
			     strerror(-(int)e->uk[0].ret_data[1]));
		for (k = 0; k < n && cmd == KEVENT_CTL_REMOVE; k++)
			if (e->uk[k].ret_flags != KEVENT_RET_DONE)
				fail("%s: REMOVE entry %d: flags %#x err %d",
				     mech_name[e->m], k, e->uk[k].ret_flags,
				     (int)e->uk[k].ret_data[1]);
	}
}

/* Register fds[from] .. fds[to - 1], each under its index. */
void engine_add(struct engine *e, const int *fds, int from, int to,
		enum kind kind)
{
	int i, ret;

	if (from < 0 || to > e->nfds)
		die("engine_add: %d..%d outside 0..%d", from, to, e->nfds);
	switch (e->base) {
	case M_RING:
	case M_GETEV:
	case M_DIRECT:
		kevent_batch(e, KEVENT_CTL_ADD, fds, from, to, kind);
		break;
	case M_EPOLL_LT:
	case M_EPOLL_ET:
		for (i = from; i < to; i++) {
			struct epoll_event ev = {
				.events = EPOLLIN |
					  (e->m == M_EPOLL_ET ? EPOLLET : 0),
				.data.u64 = i,
			};

			if (epoll_ctl(e->fd, EPOLL_CTL_ADD, fds[i], &ev))
				fail("epoll_ctl ADD: %s", strerror(errno));
		}
		break;
	case M_URING:
		for (i = from; i < to; i++)
			uring_arm(e, fds[i], i);
		ret = io_uring_submit(&e->uring);
		if (ret < 0)
			die("io_uring_submit: %s", strerror(-ret));
		break;
	case M_POLL:
		for (i = from; i < to; i++) {
			e->pfd[i].fd = fds[i];
			e->pfd[i].events = POLLIN;
		}
		if (to > e->npfd)
			e->npfd = to;
		break;
	default:
		break;
	}
}

/* Take fds[from] .. fds[to - 1] out again; none of them may be ready. */
void engine_del(struct engine *e, const int *fds, int from, int to,
		enum kind kind)
{
	struct io_uring_cqe *cqe;
	int i, ret, want, removed, cancelled;

	switch (e->base) {
	case M_RING:
	case M_GETEV:
	case M_DIRECT:
		kevent_batch(e, KEVENT_CTL_REMOVE, fds, from, to, kind);
		break;
	case M_EPOLL_LT:
	case M_EPOLL_ET:
		for (i = from; i < to; i++)
			if (epoll_ctl(e->fd, EPOLL_CTL_DEL, fds[i], NULL))
				fail("epoll_ctl DEL: %s", strerror(errno));
		break;
	case M_URING:
		want = to - from;
		for (i = from; i < to; i++) {
			struct io_uring_sqe *sqe = uring_sqe(e);

			io_uring_prep_poll_remove(sqe, (uint64_t)i);
			io_uring_sqe_set_data64(sqe, URING_REMOVE);
		}
		removed = cancelled = 0;
		ret = io_uring_submit(&e->uring);
		if (ret < 0)
			die("io_uring_submit: %s", strerror(-ret));
		/* Each remove completes, and so does the poll it ended. */
		while (removed < want || cancelled < want) {
			ret = io_uring_wait_cqe(&e->uring, &cqe);
			if (ret)
				die("io_uring_wait_cqe: %s", strerror(-ret));
			if (cqe->user_data == URING_REMOVE) {
				if (cqe->res)
					fail("uring: POLL_REMOVE: %s",
					     strerror(-cqe->res));
				removed++;
			} else if (cqe->res == -ECANCELED) {
				cancelled++;
			} else {
				fail("uring: event %llu (res %d) for a "
				     "registration being removed",
				     (unsigned long long)cqe->user_data,
				     cqe->res);
			}
			io_uring_cqe_seen(&e->uring, cqe);
		}
		break;
	case M_POLL:
		for (i = from; i < to; i++)
			e->pfd[i].fd = -1;
		while (e->npfd > 0 && e->pfd[e->npfd - 1].fd < 0)
			e->npfd--;
		break;
	default:
		break;
	}
}

static void check_ukevent(const struct engine *e, const struct ukevent *uk)
{
	if (uk->ret_flags != KEVENT_RET_DONE)
		fail("%s: event %llu with ret_flags %#x (error %d)",
		     mech_name[e->m], (unsigned long long)uk->ptr,
		     uk->ret_flags, (int)uk->ret_data[1]);
}

/*
 * Wait up to @timeout_ms (0: do not block) for ready registrations, and
 * store the indexes of at most @max of them in @idx.  Return how many.
 */
int engine_harvest(struct engine *e, int *idx, int max, int timeout_ms)
{
	struct __kernel_timespec kts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000L,
	};
	struct io_uring_cqe *cqe;
	unsigned int head, slot, over;
	__u32 tail;
	int i, n, ret;

	if (max > e->maxbatch)
		max = e->maxbatch;
	switch (e->base) {
	case M_RING:
		while ((n = kevent_wait(e->fd, max, e->uidx, &kts, 0)) < 0 &&
		       errno == EINTR)
			e->eintr++;
		if (n < 0)
			fail("kevent_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			slot = (e->uidx + i) % e->ring_size;
			check_ukevent(e, &e->ring->event[slot]);
			idx[i] = (int)e->ring->event[slot].ptr;
		}
		if (n) {
			/* The slots are copied out: hand them back at once. */
			over = e->over + (e->uidx + n >= e->ring_size);
			slot = (e->uidx + n) % e->ring_size;
			ret = kevent_commit(e->fd, slot, over);
			if (ret != n)
				fail("kevent_commit(%u, %u) freed %d of %d: %s",
				     slot, over, ret, n,
				     ret < 0 ? strerror(errno) : "");
			e->uidx = slot;
			e->over = over;
		}
		return n;
	case M_DIRECT:
		/*
		 * Events in the ring are taken with no system call; the
		 * kernel is entered only when the ring is empty, to sleep,
		 * or when it has events that only kevent_wait() writes.
		 */
		if (__atomic_load_n(&e->tail->ktail, __ATOMIC_ACQUIRE) ==
		    e->head ||
		    (__atomic_load_n(&e->tail->flags, __ATOMIC_RELAXED) &
		     KEVENT_RING_F_PENDING)) {
			while (kevent_wait(e->fd, e->ring_size, e->head, &kts,
					   0) < 0) {
				if (errno != EINTR)
					fail("kevent_wait: %s",
					     strerror(errno));
				e->eintr++;
			}
		}
		tail = __atomic_load_n(&e->tail->ktail, __ATOMIC_ACQUIRE);
		for (n = 0; e->head != tail && n < max; n++, e->head++) {
			slot = e->head & (e->ring_size - 1);
			check_ukevent(e, &e->ring->event[slot]);
			idx[n] = (int)e->ring->event[slot].ptr;
		}
		__atomic_store_n(&e->tail->uhead, e->head, __ATOMIC_RELEASE);
		return n;
	case M_GETEV:
		while ((n = kevent_get_events(e->fd, timeout_ms ? 1 : 0, max,
					      &kts, e->uk, 0)) < 0 &&
		       errno == EINTR)
			e->eintr++;
		if (n < 0)
			fail("kevent_get_events: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			check_ukevent(e, &e->uk[i]);
			idx[i] = (int)e->uk[i].ptr;
		}
		return n;
	case M_EPOLL_LT:
	case M_EPOLL_ET:
		while ((n = epoll_wait(e->fd, e->ev, max, timeout_ms)) < 0 &&
		       errno == EINTR)
			e->eintr++;
		if (n < 0)
			fail("epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			if (e->ev[i].events != EPOLLIN)
				fail("epoll: event %llu with events %#x",
				     (unsigned long long)e->ev[i].data.u64,
				     e->ev[i].events);
			idx[i] = (int)e->ev[i].data.u64;
		}
		return n;
	case M_URING:
		if (timeout_ms) {
			while ((ret = io_uring_wait_cqe_timeout(&e->uring, &cqe,
								&kts)) == -EINTR)
				e->eintr++;
			if (ret == -ETIME)
				return 0;
			if (ret)
				fail("io_uring_wait_cqe_timeout: %s",
				     strerror(-ret));
		} else {
			/* Run the deferred work, which posts completions. */
			ret = io_uring_get_events(&e->uring);
			if (ret < 0)
				fail("io_uring_get_events: %s", strerror(-ret));
		}
		n = 0;
		io_uring_for_each_cqe(&e->uring, head, cqe) {
			if (n == max)
				break;
			if (cqe->user_data >= (uint64_t)e->nfds ||
			    cqe->res < 0 || !(cqe->res & POLLIN) ||
			    (cqe->res & ~(POLLIN | POLLRDNORM)))
				fail("uring: completion %llu res %d",
				     (unsigned long long)cqe->user_data,
				     cqe->res);
			idx[n++] = (int)cqe->user_data;
			/* A multishot poll that ended must be armed again. */
			if (!(cqe->flags & IORING_CQE_F_MORE)) {
				e->rearms++;
				uring_arm(e, e->fdof[cqe->user_data],
					  (int)cqe->user_data);
			}
		}
		io_uring_cq_advance(&e->uring, n);
		if (e->rearms && io_uring_sq_ready(&e->uring))
			io_uring_submit(&e->uring);
		return n;
	case M_POLL:
		while ((ret = poll(e->pfd, e->npfd, timeout_ms)) < 0 &&
		       errno == EINTR)
			e->eintr++;
		if (ret < 0)
			fail("poll: %s", strerror(errno));
		n = 0;
		for (i = 0; i < e->npfd && n < ret && n < max; i++) {
			if (!e->pfd[i].revents)
				continue;
			if (e->pfd[i].revents != POLLIN)
				fail("poll: descriptor %d revents %#x", i,
				     e->pfd[i].revents);
			idx[n++] = i;
		}
		return n;
	default:
		return 0;
	}
}

unsigned long engine_rearms(const struct engine *e)
{
	return e->rearms;
}

/*
 * No workload sends a signal, yet a wait may end with EINTR: io_uring
 * queues task work on the task with TIF_NOTIFY_SIGNAL, which makes
 * signal_pending() true, and a wait that answers -EINTR rather than
 * -ERESTARTNOHAND then reaches userspace.  Retried, and counted.
 */
unsigned long engine_eintr(const struct engine *e)
{
	return e->eintr;
}
