/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kevent.c: a libevent 2.1 backend on kevent, the generic kernel event
 * mechanism of the kevent series for Linux 6.1 (see kevent(7)).
 *
 * Written for the kevent project; scripts/peers.sh copies it into a
 * libevent 2.1.12-stable tree, and libevent-kevent.patch adds it to
 * eventops[] and to the CMake build.  Same licence as libevent (the
 * three-clause BSD licence), so that it can go into libevent's tree.
 *
 * How libevent's operations map onto kevent (doc/libevent.md has the
 * reasons):
 *
 * - I/O events go through libevent's changelist, as with kqueue: add and
 *   del only note the change, and dispatch applies all the changes of a
 *   loop iteration with one kevent_ctl(KEVENT_CTL_REMOVE) and one
 *   kevent_ctl(KEVENT_CTL_ADD) call, whatever their number.
 * - Each direction of a descriptor (EV_READ, EV_WRITE, EV_CLOSED) is a
 *   registration of its own: KEVENT_SOCKET (RECV, SEND) for TCP, UDP
 *   and UNIX sockets, KEVENT_PIPE (RECV, SEND) for pipes and FIFOs, and
 *   KEVENT_POLL for any other file and for EV_CLOSED (POLLRDHUP).  A
 *   file without a poll method (a regular file) is always ready, as
 *   poll(2) says: EV_FEATURE_FDS.
 * - ptr, part of a registration's identity (type, id, ptr), carries a
 *   generation number and the direction, so that the report of a
 *   registration that was removed or whose file was closed is never
 *   taken for the registration that replaced it.
 * - Every registration has KEVENT_REQ_ALWAYS_QUEUE, so an ADD copies
 *   back only errors, and EV_ET maps to KEVENT_REQ_ET.
 * - A registration reported broken (a socket error, a pipe without its
 *   other end) has left the queue; for a level-triggered event it is
 *   added again at the next dispatch, and reported again as long as the
 *   ADD fails: epoll's level-triggered EPOLLERR/EPOLLHUP.
 * - Events come back from one kevent_get_events() call per dispatch, or,
 *   with EVENT_KEVENT_RING set, from the ring through kevent_wait(),
 *   committed with kevent_commit() only once half of the ring is used.
 * - Signals are KEVENT_SIGNAL registrations with KEVENT_SIGNAL_NOMASK:
 *   no signal pipe, no handler running, the count of sends comes with
 *   the event.  Other threads wake the loop with KEVENT_CTL_READY on a
 *   KEVENT_TIMER registration that never expires by itself.
 * - Timeouts stay libevent's (its min-heap); the dispatch timeout is a
 *   nanosecond timespec, so no timerfd is needed for precise timers.
 *
 * Environment (ignored with EVENT_BASE_FLAG_IGNORE_ENV):
 *   EVENT_KEVENT_POLL_ONLY  KEVENT_POLL for every descriptor
 *   EVENT_KEVENT_RING       kevent_wait() on a ring instead of
 *                           kevent_get_events()
 *   EVENT_KEVENT_EVSIG      libevent's signal pipe instead of KEVENT_SIGNAL
 */
#include "event2/event-config.h"
#include "evconfig-private.h"

#ifdef EVENT__HAVE_KEVENT

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/queue.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kevent.h>

#include "event-internal.h"
#include "evsignal-internal.h"
#include "event2/thread.h"
#include "evthread-internal.h"
#include "log-internal.h"
#include "mm-internal.h"
#include "util-internal.h"
#include "evmap-internal.h"
#include "changelist-internal.h"

#define KEV_INITIAL_NEVENT	32
#define KEV_MAX_NEVENT		4096
#define KEV_RING_SIZE		1024

/* The directions of a descriptor, each a registration of its own. */
enum { KEV_READ, KEV_WRITE, KEV_CLOSED, KEV_NDIR };

/* The low two bits of ptr: a direction, or one of these. */
#define KEV_PTR_SPECIAL		3
#define KEV_PTR_NOTIFY		((__u64)KEV_PTR_SPECIAL | (1 << 2))
#define KEV_PTR_SIGNAL		((__u64)KEV_PTR_SPECIAL | (2 << 2))

/* What kevent knows of a direction. */
enum {
	KS_NONE,	/* nothing: libevent has no event here */
	KS_REG,		/* registered, with gen[] and type[] */
	KS_DEAD,	/* libevent's, but gone from the queue: its file was
			   closed, or it broke while edge-triggered */
	KS_REARM,	/* broke while level-triggered: add it again */
	KS_ALWAYS	/* a file without poll method: always ready */
};

/* What a descriptor refers to, for the choice of a type. */
enum { KIND_UNKNOWN, KIND_SOCKET, KIND_PIPE, KIND_OTHER };

struct kev_fd {
	__u32 gen[KEV_NDIR];
	__u8 type[KEV_NDIR];
	__u8 state[KEV_NDIR];
	__u8 et;		/* bit per direction: edge-triggered */
	__u8 kind;
	__u8 listed;		/* in the rearm list (1), the always list (2) */
};
#define LISTED_REARM	1
#define LISTED_ALWAYS	2

struct kev_batch {
	struct ukevent *ev;
	int n, size;
};

struct kev_pending {
	evutil_socket_t fd;
	short what;
};

struct kevop {
	int kfd;
	struct ukevent *events;
	int nevents;

	struct kev_fd *fds;
	int nfds;
	__u32 gen;

	struct kev_batch add, del, retry;

	/* Descriptors with a direction in KS_REARM, KS_ALWAYS. */
	evutil_socket_t *rearm, *always;
	int nrearm, rearm_size, nalways, always_size;

	/* Events to report at this dispatch without the kernel. */
	struct kev_pending *pending;
	int npending, pending_size;

	/* The ring, with EVENT_KEVENT_RING. */
	struct kevent_ring *ring;
	unsigned int ring_size, uidx, over, used;

	__u32 types;		/* the types with a source (KEVENT_IOC_GET_ABI) */
	int poll_only;
	int notify_added;
	/* Signals: 0, or the registration's id.raw_u64 + 1. */
	__u64 sig_id[NSIG];
	int sig_rearm;		/* a thread with registrations exited */
};

static void *kev_init(struct event_base *);
static int kev_dispatch(struct event_base *, struct timeval *);
static void kev_dealloc(struct event_base *);
static int kev_sig_add(struct event_base *, evutil_socket_t, short, short,
    void *);
static int kev_sig_del(struct event_base *, evutil_socket_t, short, short,
    void *);

const struct eventop keventops = {
	"kevent",
	kev_init,
	event_changelist_add_,
	event_changelist_del_,
	kev_dispatch,
	kev_dealloc,
	1 /* need reinit: a ring belongs to its address space */,
	EV_FEATURE_ET|EV_FEATURE_O1|EV_FEATURE_FDS|EV_FEATURE_EARLY_CLOSE,
	EVENT_CHANGELIST_FDINFO_SIZE
};

static const struct eventop keventsigops = {
	"kevent_signal",
	NULL,
	kev_sig_add,
	kev_sig_del,
	NULL,
	NULL,
	1 /* need reinit */,
	0,
	0
};

int event_kevent_add_notify_event_(struct event_base *base);
int event_kevent_notify_base_(struct event_base *base);

static int
kev_getenv(struct event_base *base, const char *name)
{
	if (base->flags & EVENT_BASE_FLAG_IGNORE_ENV)
		return 0;
	return evutil_getenv_(name) != NULL;
}

/* mm_free() of NULL reaches a replacement free function of the
 * application (event_set_mem_functions()), which need not take it. */
#define kev_free(p) do { if (p) mm_free(p); } while (0)

static void
kevop_free(struct kevop *kop)
{
	if (kop->kfd >= 0)
		close(kop->kfd);
	kev_free(kop->events);
	kev_free(kop->fds);
	kev_free(kop->add.ev);
	kev_free(kop->del.ev);
	kev_free(kop->retry.ev);
	kev_free(kop->rearm);
	kev_free(kop->always);
	kev_free(kop->pending);
	kev_free(kop->ring);
	mm_free(kop);
}

static void *
kev_init(struct event_base *base)
{
	struct kevop *kop;
	struct kevent_abi abi;

	/* No kevent here (or at other numbers): let libevent take the next
	 * backend.  Never call a kevent system call before this. */
	if (kevent_probe(&abi) == -1)
		return NULL;
	if (!(abi.types & (1U << KEVENT_POLL)))
		return NULL;

	if (!(kop = mm_calloc(1, sizeof(*kop))))
		return NULL;
	kop->kfd = -1;
	kop->types = abi.types;
	kop->poll_only = kev_getenv(base, "EVENT_KEVENT_POLL_ONLY");
	kop->nevents = KEV_INITIAL_NEVENT;
	if (kev_getenv(base, "EVENT_KEVENT_RING")) {
		kop->ring_size = KEV_RING_SIZE;
		kop->nevents = KEV_RING_SIZE;
		kop->ring = mm_calloc(1, sizeof(struct kevent_ring) +
		    KEV_RING_SIZE * sizeof(struct ukevent));
		if (!kop->ring)
			goto err;
	}
	kop->events = mm_calloc(kop->nevents, sizeof(struct ukevent));
	if (!kop->events)
		goto err;

	kop->kfd = kevent_init(kop->ring, kop->ring_size, KEVENT_INIT_CLOEXEC);
	if (kop->kfd == -1) {
		event_warn("kevent_init");
		goto err;
	}

	if ((abi.types & (1U << KEVENT_SIGNAL)) &&
	    !kev_getenv(base, "EVENT_KEVENT_EVSIG"))
		base->evsigsel = &keventsigops;
	else
		evsig_init_(base);

	return kop;
err:
	kevop_free(kop);
	return NULL;
}

static void
kev_dealloc(struct event_base *base)
{
	struct kevop *kop = base->evbase;

	/* Restores the signal handlers; closing the queue removes its
	 * registrations (after fork(), the child's copy only). */
	evsig_dealloc_(base);
	kevop_free(kop);
}

/* Helpers for the growing arrays. */
static int
kev_grow(void **p, int *size, int need, size_t elem)
{
	void *n;
	int newsize = *size ? *size : 16;

	if (need <= *size)
		return 0;
	while (newsize < need) {
		if (newsize > INT_MAX / 2)
			return -1;
		newsize *= 2;
	}
	if ((size_t)newsize > EV_SIZE_MAX / elem)
		return -1;
	n = mm_realloc(*p, newsize * elem);
	if (!n)
		return -1;
	memset((char *)n + *size * elem, 0, (newsize - *size) * elem);
	*p = n;
	*size = newsize;
	return 0;
}

static struct kev_fd *
kev_fd_get(struct kevop *kop, evutil_socket_t fd)
{
	if (fd < 0)
		return NULL;
	if (fd >= kop->nfds &&
	    kev_grow((void **)&kop->fds, &kop->nfds, fd + 1,
		sizeof(struct kev_fd)) < 0)
		return NULL;
	return &kop->fds[fd];
}

static struct ukevent *
kev_batch_push(struct kev_batch *b)
{
	struct ukevent *uk;

	if (kev_grow((void **)&b->ev, &b->size, b->n + 1,
		sizeof(struct ukevent)) < 0)
		return NULL;
	uk = &b->ev[b->n++];
	memset(uk, 0, sizeof(*uk));
	return uk;
}

static void
kev_pend(struct kevop *kop, evutil_socket_t fd, short what)
{
	if (kev_grow((void **)&kop->pending, &kop->pending_size,
		kop->npending + 1, sizeof(struct kev_pending)) < 0) {
		event_warnx("%s: out of memory", __func__);
		return;
	}
	kop->pending[kop->npending].fd = fd;
	kop->pending[kop->npending].what = what;
	kop->npending++;
}

static void
kev_list(struct kevop *kop, evutil_socket_t fd, struct kev_fd *f, int which)
{
	evutil_socket_t **list;
	int *n, *size;

	if (f->listed & which)
		return;
	if (which == LISTED_REARM) {
		list = &kop->rearm; n = &kop->nrearm; size = &kop->rearm_size;
	} else {
		list = &kop->always; n = &kop->nalways;
		size = &kop->always_size;
	}
	if (kev_grow((void **)list, size, *n + 1, sizeof(evutil_socket_t)) < 0) {
		event_warnx("%s: out of memory", __func__);
		return;
	}
	(*list)[(*n)++] = fd;
	f->listed |= which;
}

static const short kev_dir_what[KEV_NDIR] = { EV_READ, EV_WRITE, EV_CLOSED };

static int
kev_classify(evutil_socket_t fd)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return KIND_UNKNOWN;
	if (S_ISSOCK(st.st_mode))
		return KIND_SOCKET;
	if (S_ISFIFO(st.st_mode))
		return KIND_PIPE;
	return KIND_OTHER;
}

/* The type and event bits of a registration of direction dir on f. */
static void
kev_choose(struct kevop *kop, evutil_socket_t fd, struct kev_fd *f, int dir,
    struct ukevent *uk)
{
	int type = KEVENT_POLL;

	if (dir != KEV_CLOSED && !kop->poll_only) {
		if (f->kind == KIND_UNKNOWN)
			f->kind = kev_classify(fd);
		if (f->kind == KIND_SOCKET &&
		    (kop->types & (1U << KEVENT_SOCKET)))
			type = KEVENT_SOCKET;
		else if (f->kind == KIND_PIPE &&
		    (kop->types & (1U << KEVENT_PIPE)))
			type = KEVENT_PIPE;
	}
	uk->type = type;
	if (type == KEVENT_POLL)
		uk->event = dir == KEV_READ ? KEVENT_POLL_POLLIN :
		    dir == KEV_WRITE ? KEVENT_POLL_POLLOUT :
		    KEVENT_POLL_POLLRDHUP;
	else
		uk->event = dir == KEV_READ ? KEVENT_SOCKET_RECV :
		    KEVENT_SOCKET_SEND;
}

/* Queue an ADD of direction dir of fd, with a new generation. */
static void
kev_queue_add(struct kevop *kop, struct kev_batch *b, evutil_socket_t fd,
    struct kev_fd *f, int dir, int et)
{
	struct ukevent *uk = kev_batch_push(b);

	if (!uk) {
		event_warnx("%s: out of memory", __func__);
		f->state[dir] = KS_DEAD;
		return;
	}
	if (et)
		f->et |= 1 << dir;
	else
		f->et &= ~(1 << dir);
	f->gen[dir] = ++kop->gen;
	f->state[dir] = KS_REG;
	uk->id.raw[0] = (__u32)fd;
	kev_choose(kop, fd, f, dir, uk);
	f->type[dir] = (__u8)uk->type;
	uk->req_flags = KEVENT_REQ_ALWAYS_QUEUE | (et ? KEVENT_REQ_ET : 0);
	uk->ptr = ((__u64)f->gen[dir] << 2) | (__u64)dir;
}

/* Queue the REMOVE of direction dir of fd if it is registered. */
static void
kev_queue_del(struct kevop *kop, evutil_socket_t fd, struct kev_fd *f,
    int dir)
{
	struct ukevent *uk;

	if (f->state[dir] == KS_REG) {
		uk = kev_batch_push(&kop->del);
		if (uk) {
			uk->id.raw[0] = (__u32)fd;
			uk->type = f->type[dir];
			uk->ptr = ((__u64)f->gen[dir] << 2) | (__u64)dir;
		}
	}
	f->state[dir] = KS_NONE;
}

static void
kev_forget_if_idle(struct kev_fd *f)
{
	int dir;

	for (dir = 0; dir < KEV_NDIR; dir++)
		if (f->state[dir] != KS_NONE)
			return;
	/* Nothing watched: the number may be another file's next time. */
	f->kind = KIND_UNKNOWN;
}

/* A registration reported or found broken with err: report it, and keep
 * a level-triggered one coming while the condition lasts. */
static void
kev_broken(struct kevop *kop, evutil_socket_t fd, struct kev_fd *f, int dir,
    int err)
{
	if (err == EBADF) {
		/* Its file was closed: epoll forgets it silently too. */
		f->state[dir] = KS_DEAD;
		f->kind = KIND_UNKNOWN;
		return;
	}
	kev_pend(kop, fd, kev_dir_what[dir]);
	if ((f->et & (1 << dir)) || err == ESRCH) {
		f->state[dir] = KS_DEAD;
	} else {
		f->state[dir] = KS_REARM;
		kev_list(kop, fd, f, LISTED_REARM);
	}
}

/* Remove the entries of kop->del: one call, or one per entry if the call
 * names more registrations than the queue holds (EINVAL). */
static void
kev_flush_del(struct kevop *kop)
{
	int i;

	if (kop->del.n == 0)
		return;
	if (kevent_ctl(kop->kfd, KEVENT_CTL_REMOVE, kop->del.n,
		kop->del.ev) == -1) {
		if (errno != EINVAL)
			event_warn("kevent_ctl(REMOVE)");
		for (i = 0; i < kop->del.n; i++)
			(void)kevent_ctl(kop->kfd, KEVENT_CTL_REMOVE, 1,
			    &kop->del.ev[i]);
	}
	kop->del.n = 0;
}

/* Add the entries of kop->add; the ones that come back failed. */
static void
kev_flush_add(struct kevop *kop)
{
	struct kev_batch *b = &kop->add;
	int round, i, n, err, dir;
	evutil_socket_t fd;
	struct kev_fd *f;
	struct ukevent *uk;

	for (round = 0; round < 3 && b->n > 0; round++) {
		n = kevent_ctl(kop->kfd, KEVENT_CTL_ADD, b->n, b->ev);
		if (n == -1) {
			event_warn("kevent_ctl(ADD)");
			n = 0;
			for (i = 0; i < b->n; i++) {
				fd = (evutil_socket_t)b->ev[i].id.raw[0];
				dir = (int)(b->ev[i].ptr & 3);
				if (fd < kop->nfds)
					kop->fds[fd].state[dir] = KS_DEAD;
			}
		}
		kop->retry.n = 0;
		for (i = 0; i < n; i++) {
			uk = &b->ev[i];
			fd = (evutil_socket_t)uk->id.raw[0];
			dir = (int)(uk->ptr & 3);
			if (!(uk->ret_flags & KEVENT_RET_BROKEN) ||
			    fd >= kop->nfds || dir == KEV_PTR_SPECIAL)
				continue;
			f = &kop->fds[fd];
			if (f->state[dir] != KS_REG ||
			    f->gen[dir] != (__u32)(uk->ptr >> 2))
				continue;
			err = -(int)uk->ret_data[1];
			if ((uk->type == KEVENT_SOCKET &&
				(err == ENOTSOCK || err == EOPNOTSUPP)) ||
			    (uk->type == KEVENT_PIPE && err == EINVAL)) {
				/* Not the file it was, or not one that
				 * source serves: ask again, or poll it. */
				f->kind = kev_classify(fd);
				if ((uk->type == KEVENT_SOCKET &&
					f->kind == KIND_SOCKET) ||
				    (uk->type == KEVENT_PIPE &&
					f->kind == KIND_PIPE))
					f->kind = KIND_OTHER;
				kev_queue_add(kop, &kop->retry, fd, f, dir,
				    f->et & (1 << dir));
				continue;
			}
			if (uk->type == KEVENT_POLL && err == EINVAL) {
				/* No poll method (a regular file): ready
				 * for ever, as poll(2) reports it. */
				f->state[dir] = KS_ALWAYS;
				kev_list(kop, fd, f, LISTED_ALWAYS);
				kev_pend(kop, fd, kev_dir_what[dir]);
				continue;
			}
			switch (err) {
			case ENOMEM:
			case ENOSPC:
			case EEXIST:
			case ENOSYS:
				errno = err;
				event_warn("kevent_ctl(ADD) of fd %d", (int)fd);
				f->state[dir] = KS_DEAD;
				break;
			default:
				/* EBADF, or broken at once: EPIPE, a
				 * pending socket error. */
				kev_broken(kop, fd, f, dir, err);
				break;
			}
		}
		/* The retries become the next round. */
		{
			struct kev_batch t = *b;
			*b = kop->retry;
			kop->retry = t;
		}
	}
	b->n = 0;
	kop->retry.n = 0;
}

/* Turn libevent's changelist, and the registrations to add again, into
 * the REMOVE and ADD batches, and apply them. */
static void
kev_apply_changes(struct event_base *base, struct kevop *kop)
{
	struct event_changelist *changelist = &base->changelist;
	struct event_change *ch;
	struct kev_fd *f;
	evutil_socket_t fd;
	int i, dir, n;
	__u8 c;

	for (i = 0; i < changelist->n_changes; ++i) {
		ch = &changelist->changes[i];
		f = kev_fd_get(kop, ch->fd);
		if (!f) {
			event_warnx("%s: no memory for fd %d", __func__,
			    (int)ch->fd);
			continue;
		}
		for (dir = 0; dir < KEV_NDIR; dir++) {
			c = dir == KEV_READ ? ch->read_change :
			    dir == KEV_WRITE ? ch->write_change :
			    ch->close_change;
			if (c & EV_CHANGE_DEL) {
				kev_queue_del(kop, ch->fd, f, dir);
			} else if (c & EV_CHANGE_ADD) {
				/* An add after a del that dispatch did not
				 * see: the file may be another one now. */
				kev_queue_del(kop, ch->fd, f, dir);
				kev_queue_add(kop, &kop->add, ch->fd, f, dir,
				    c & EV_CHANGE_ET);
			}
		}
		kev_forget_if_idle(f);
	}
	event_changelist_remove_all_(changelist, base);

	/* Level-triggered registrations that broke: add them again, to be
	 * reported again if they are still broken. */
	n = kop->nrearm;
	kop->nrearm = 0;
	for (i = 0; i < n; i++) {
		fd = kop->rearm[i];
		f = &kop->fds[fd];
		f->listed &= ~LISTED_REARM;
		for (dir = 0; dir < KEV_NDIR; dir++)
			if (f->state[dir] == KS_REARM)
				kev_queue_add(kop, &kop->add, fd, f, dir, 0);
	}

	kev_flush_del(kop);
	kev_flush_add(kop);
}

/* Signals whose registrations left with their thread: add them again
 * from this one. */
static void
kev_sig_rearm(struct kevop *kop)
{
	struct ukevent uk;
	int sig;

	kop->sig_rearm = 0;
	for (sig = 1; sig < NSIG; sig++) {
		if (kop->sig_id[sig] != 1)	/* marked lost: id 0, + 1 */
			continue;
		memset(&uk, 0, sizeof(uk));
		uk.type = KEVENT_SIGNAL;
		uk.id.raw_u64 = (__u64)sig | KEVENT_SIGNAL_NOMASK;
		uk.event = KEVENT_SIGNAL_DELIVERY;
		uk.ptr = KEV_PTR_SIGNAL;
		if (kevent_ctl(kop->kfd, KEVENT_CTL_ADD, 1, &uk) != 0) {
			uk.id.raw_u64 = (__u64)sig;
			if (kevent_ctl(kop->kfd, KEVENT_CTL_ADD, 1, &uk) != 0) {
				event_warnx("%s: cannot watch signal %d "
				    "again", __func__, sig);
				continue;
			}
		}
		kop->sig_id[sig] = uk.id.raw_u64 + 1;
	}
}

/* Wait for events: kevent_get_events(), or kevent_wait() on the ring.
 * Returns the number of events in kop->events, or -1. */
static int
kev_wait(struct kevop *kop, const struct __kernel_timespec *ts)
{
	unsigned int start, i;
	int n;

	if (!kop->ring)
		return kevent_get_events(kop->kfd, 1, kop->nevents, ts,
		    kop->events, 0);

	/* Commit only when half of the ring is used: a call less on most
	 * dispatches.  The slots before kidx were copied out already. */
	if (kop->used >= kop->ring_size / 2) {
		unsigned int kidx = (kop->uidx + kop->used) % kop->ring_size;
		unsigned int over = kop->over +
		    (kop->uidx + kop->used >= kop->ring_size);

		if (kevent_commit(kop->kfd, kidx, over) == -1) {
			event_warn("kevent_commit");
			return -1;
		}
		kop->uidx = kidx;
		kop->over = over;
		kop->used = 0;
	}
	n = kevent_wait(kop->kfd, kop->ring_size - kop->used, kop->uidx, ts, 0);
	if (n <= 0)
		return n;
	start = (kop->uidx + kop->used) % kop->ring_size;
	for (i = 0; i < (unsigned int)n; i++)
		kop->events[i] = kop->ring->event[(start + i) % kop->ring_size];
	kop->used += n;
	return n;
}

static int
kev_dispatch(struct event_base *base, struct timeval *tv)
{
	struct kevop *kop = base->evbase;
	struct __kernel_timespec ts, *tsp = NULL;
	struct ukevent *uk;
	struct kev_fd *f;
	evutil_socket_t fd;
	int i, n, res, dir, err;

	if (kop->sig_rearm)
		kev_sig_rearm(kop);

	kop->npending = 0;
	kev_apply_changes(base, kop);

	/* Files without a poll method are ready at every dispatch. */
	n = 0;
	for (i = 0; i < kop->nalways; i++) {
		int keep = 0;

		fd = kop->always[i];
		f = &kop->fds[fd];
		for (dir = 0; dir < KEV_NDIR; dir++) {
			if (f->state[dir] != KS_ALWAYS)
				continue;
			keep = 1;
			/* Edge-triggered: reported once, at the add. */
			if (!(f->et & (1 << dir)))
				kev_pend(kop, fd, kev_dir_what[dir]);
		}
		if (keep)
			kop->always[n++] = fd;
		else
			f->listed &= ~LISTED_ALWAYS;
	}
	kop->nalways = n;

	if (kop->npending) {
		ts.tv_sec = 0;
		ts.tv_nsec = 0;
		tsp = &ts;
	} else if (tv) {
		ts.tv_sec = tv->tv_sec;
		ts.tv_nsec = tv->tv_usec * 1000;
		tsp = &ts;
	}

	EVBASE_RELEASE_LOCK(base, th_base_lock);
	res = kev_wait(kop, tsp);
	EVBASE_ACQUIRE_LOCK(base, th_base_lock);

	if (res == -1) {
		if (errno != EINTR) {
			event_warn("kevent_get_events");
			return -1;
		}
		res = 0;
	}

	event_debug(("%s: kevent reports %d, %d pending", __func__, res,
		kop->npending));

	for (i = 0; i < res; i++) {
		uk = &kop->events[i];
		if (uk->type == KEVENT_TIMER && uk->ptr == KEV_PTR_NOTIFY) {
			base->is_notify_pending = 0;
			continue;
		}
		if (uk->type == KEVENT_SIGNAL) {
			int sig = (int)uk->id.raw[0];

			if (sig <= 0 || sig >= NSIG)
				continue;
			if (uk->ret_flags & KEVENT_RET_BROKEN) {
				/* Its thread exited: watch from this one. */
				if (kop->sig_id[sig] == uk->id.raw_u64 + 1) {
					kop->sig_id[sig] = 1;
					kop->sig_rearm = 1;
				}
				continue;
			}
			evmap_signal_active_(base, sig,
			    uk->ret_data[1] ? (int)uk->ret_data[1] : 1);
			continue;
		}
		fd = (evutil_socket_t)uk->id.raw[0];
		dir = (int)(uk->ptr & 3);
		if (dir == KEV_PTR_SPECIAL || fd >= kop->nfds)
			continue;
		f = &kop->fds[fd];
		/* The report of a registration that was replaced or
		 * removed since: not about the file there now. */
		if (f->state[dir] != KS_REG ||
		    f->gen[dir] != (__u32)(uk->ptr >> 2) ||
		    f->type[dir] != uk->type)
			continue;
		if (uk->ret_flags & KEVENT_RET_BROKEN) {
			err = -(int)uk->ret_data[1];
			kev_broken(kop, fd, f, dir, err);
			continue;
		}
		evmap_io_active_(base, fd, kev_dir_what[dir] | EV_ET);
	}

	for (i = 0; i < kop->npending; i++)
		evmap_io_active_(base, kop->pending[i].fd,
		    kop->pending[i].what | EV_ET);
	kop->npending = 0;

	if (!kop->ring && res == kop->nevents &&
	    kop->nevents < KEV_MAX_NEVENT) {
		struct ukevent *ne = mm_realloc(kop->events,
		    2 * kop->nevents * sizeof(struct ukevent));

		if (ne) {
			kop->events = ne;
			kop->nevents *= 2;
		}
	}
	return 0;
}

/* Signals. */

static void
kev_sighandler(int sig)
{
	/* Never runs for a signal the queue takes (NOMASK); it only keeps
	 * the kernel from discarding an ignored signal before the queue
	 * sees it (see kevent_signal(7)). */
	(void)sig;
}

static int
kev_sig_add(struct event_base *base, evutil_socket_t nsignal, short old,
    short events, void *p)
{
	struct kevop *kop = base->evbase;
	struct ukevent uk;
	int n;

	(void)old; (void)events; (void)p;
	EVUTIL_ASSERT(nsignal > 0 && nsignal < NSIG);

	/* The handler first: from the ADD on, the queue takes the signal,
	 * and an ignored signal would be discarded. */
	if (evsig_set_handler_(base, (int)nsignal, kev_sighandler) == -1)
		return -1;

	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_SIGNAL;
	uk.id.raw_u64 = (__u64)nsignal | KEVENT_SIGNAL_NOMASK;
	uk.event = KEVENT_SIGNAL_DELIVERY;
	uk.ptr = KEV_PTR_SIGNAL;
	n = kevent_ctl(kop->kfd, KEVENT_CTL_ADD, 1, &uk);
	if (n == 1 && -(int)uk.ret_data[1] == EINVAL) {
		/* SIGTTIN, SIGTTOU: not with NOMASK; the handler runs too. */
		memset(&uk, 0, sizeof(uk));
		uk.type = KEVENT_SIGNAL;
		uk.id.raw_u64 = (__u64)nsignal;
		uk.event = KEVENT_SIGNAL_DELIVERY;
		uk.ptr = KEV_PTR_SIGNAL;
		n = kevent_ctl(kop->kfd, KEVENT_CTL_ADD, 1, &uk);
	}
	if (n != 0) {
		if (n > 0)
			errno = -(int)uk.ret_data[1];
		event_warn("kevent_ctl(ADD) of signal %d", (int)nsignal);
		evsig_restore_handler_(base, (int)nsignal);
		return -1;
	}
	kop->sig_id[nsignal] = uk.id.raw_u64 + 1;
	return 0;
}

static int
kev_sig_del(struct event_base *base, evutil_socket_t nsignal, short old,
    short events, void *p)
{
	struct kevop *kop = base->evbase;
	struct ukevent uk;

	(void)old; (void)events; (void)p;
	EVUTIL_ASSERT(nsignal > 0 && nsignal < NSIG);

	if (kop->sig_id[nsignal] > 1) {
		memset(&uk, 0, sizeof(uk));
		uk.type = KEVENT_SIGNAL;
		uk.id.raw_u64 = kop->sig_id[nsignal] - 1;
		uk.ptr = KEV_PTR_SIGNAL;
		/* ENOENT if its thread is gone: fine. */
		(void)kevent_ctl(kop->kfd, KEVENT_CTL_REMOVE, 1, &uk);
	}
	kop->sig_id[nsignal] = 0;
	return evsig_restore_handler_(base, (int)nsignal);
}

/* Waking the loop from another thread: KEVENT_CTL_READY on a timer that
 * never expires by itself (68 years), as kqueue's EVFILT_USER.  The
 * registration stays ready until a dispatch takes it, so a wakeup sent
 * while the loop is not waiting is not lost. */

static void
kev_notify_entry(struct ukevent *uk)
{
	memset(uk, 0, sizeof(*uk));
	uk->type = KEVENT_TIMER;
	uk->id.raw[0] = 0x7fffffff;
	uk->event = KEVENT_TIMER_FIRED;
	uk->req_flags = KEVENT_REQ_ET;
	uk->ptr = KEV_PTR_NOTIFY;
}

int
event_kevent_add_notify_event_(struct event_base *base)
{
	struct kevop *kop = base->evbase;
	struct ukevent uk;

	if (kop->notify_added)
		return 0;
	if (!(kop->types & (1U << KEVENT_TIMER)))
		return -1;
	kev_notify_entry(&uk);
	if (kevent_ctl(kop->kfd, KEVENT_CTL_ADD, 1, &uk) != 0) {
		event_warnx("%s: cannot add the wakeup registration", __func__);
		return -1;
	}
	kop->notify_added = 1;
	return 0;
}

int
event_kevent_notify_base_(struct event_base *base)
{
	struct kevop *kop = base->evbase;
	struct ukevent uk;

	if (!kop->notify_added)
		return -1;
	kev_notify_entry(&uk);
	if (kevent_ctl(kop->kfd, KEVENT_CTL_READY, 1, &uk) != 0) {
		event_warnx("%s: KEVENT_CTL_READY failed", __func__);
		return -1;
	}
	return 0;
}

#endif /* EVENT__HAVE_KEVENT */
