// SPDX-License-Identifier: GPL-2.0
/*
 * The request flag x event source matrix.
 *
 * Every request flag (KEVENT_REQ_ONESHOT, ET, WAKEUP_ALL, LAST_CHECK,
 * ALWAYS_QUEUE) on every source (timer, poll, pipe, socket, signal, POSIX
 * timer), delivered once through kevent_get_events() and once through the
 * ring (kevent_init() with a ring, kevent_wait() and kevent_commit()).
 * Each point of a cell carries "[cell SOURCE FLAG PATH]" in its
 * description, and asserts the flag's effect as kevent(7), the
 * KEVENT_REQ_*(2const) pages and the source's page describe it:
 *
 *   ONESHOT       removed after one delivery: a REMOVE then gives ENOENT,
 *                 and the object's next change reports nothing;
 *   ET            reported once per change, not again while the object
 *                 stays ready; without it (level-triggered) reported again
 *                 while ready, and never twice for one timer expiry or
 *                 one signal;
 *   WAKEUP_ALL    with three threads seen asleep in the call, one event
 *                 ends every wait (one thread gets it, the others 0);
 *                 without the flag it ends exactly one;
 *   LAST_CHECK    an event whose object is no longer ready when it is
 *                 taken from the ready queue is dropped, one that is ready
 *                 is reported, and KEVENT_CTL_READY bypasses the check;
 *   ALWAYS_QUEUE  an entry ready at ADD is kept and queued instead of
 *                 being copied back with KEVENT_RET_DONE.
 *
 * What the pages make of the flags that cannot apply as such:
 *   - a timer is never ready at ADD (kevent_timer(7)), not even one of
 *     interval 0 that expires at once: ADD keeps it with or without
 *     ALWAYS_QUEUE;
 *   - a signal registration is never ready at ADD, and a signal pending
 *     before the ADD is not reported (kevent_signal(7));
 *   - POSIX timer registrations come only from timer_create(); ADD of the
 *     type fails with ENOSYS, and MODIFY sets their req_flags
 *     (kevent_posix_timer(7));
 *   - a timer, a signal registration and a POSIX timer are ready while
 *     expiries or sends are not yet delivered, and only a delivery
 *     consumes them: their object cannot become "not ready" between the
 *     notification and the harvest.  Their LAST_CHECK cells drop the
 *     level-triggered requeue that follows a delivery (checked again at
 *     dequeue, nothing new: not reported), report what is ready, and show
 *     that KEVENT_CTL_READY is delivered without the check.
 *
 * Then several threads in kevent_wait() on one ring (each event moved
 * into the ring exactly once), and kevent_wait() with an absolute
 * CLOCK_REALTIME timeout (KEVENT_FLAGS_ABSTIME).
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "tap.h"
#include "kevent_sys.h"

#define NPOINTS		353

enum { SRC_TIMER, SRC_POLL, SRC_PIPE, SRC_SOCKET, SRC_SIGNAL, SRC_PTIMER,
       NSRC };
static const char *const src_name[NSRC] = {
	"timer", "poll", "pipe", "socket", "signal", "posix_timer",
};
static const __u32 src_type[NSRC] = {
	KEVENT_TIMER, KEVENT_POLL, KEVENT_PIPE, KEVENT_SOCKET, KEVENT_SIGNAL,
	KEVENT_POSIX_TIMER,
};

enum { PATH_GE, PATH_RING, NPATH };
static const char *const path_name[NPATH] = { "get_events", "ring" };

#define RING_SLOTS	8
#define DONE		KEVENT_RET_DONE
#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)
#define ET		KEVENT_REQ_ET
#define ONESHOT		KEVENT_REQ_ONESHOT
#define WAKEUP_ALL	KEVENT_REQ_WAKEUP_ALL
#define LAST_CHECK	KEVENT_REQ_LAST_CHECK
#define ALWAYS_QUEUE	KEVENT_REQ_ALWAYS_QUEUE

/*
 * ---- points tagged with the cell they belong to, and with the page of
 * the flag they check ("[KEVENT_REQ_ET.2const]") ----
 */

static char cell_tag[128];

static void cell(int src, const char *flag, int path)
{
	snprintf(cell_tag, sizeof(cell_tag), "[cell %s %s %s] "
		 "[KEVENT_REQ_%s.2const]", src_name[src], flag,
		 path_name[path], flag);
}

/* A failure names the line of the cok() or cis(), not of these. */
#define cok(cond, ...) cok_at(__FILE__, __LINE__, (cond), __VA_ARGS__)
#define cis(got, want, ...) \
	cis_at(__FILE__, __LINE__, (long long)(got), (long long)(want), \
	       __VA_ARGS__)

static TAP_PRINTF(4, 5) int cok_at(const char *file, int line, int cond,
				   const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tap_ok_at(file, line, cond, "%s %s", cell_tag, msg);
}

static TAP_PRINTF(5, 6) int cis_at(const char *file, int line,
				   long long got, long long want,
				   const char *fmt, ...)
{
	int saved = errno;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	errno = saved;
	return tap_is_int(file, line, got, want, "%s %s", cell_tag, msg);
}

/* ---- a queue, with or without a ring ---- */

struct queue {
	int fd;
	int path;
	struct kevent_ring *ring;
	size_t mapped;
	unsigned int uidx, over;
};

/*
 * A new queue for one path, holding one far-off timer so that a REMOVE
 * of one entry that is not there gives ENOENT, not EINVAL for asking more
 * than the queue holds.
 */
static void q_open(struct queue *q, int path)
{
	memset(q, 0, sizeof(*q));
	q->path = path;
	if (path == PATH_RING) {
		q->ring = ring_alloc(RING_SLOTS, &q->mapped);
		must(q->ring, "ring_alloc: %s", strerror(errno));
		q->fd = kevent_init(q->ring, RING_SLOTS, 0);
	} else {
		q->fd = kevent_init(NULL, 0, 0);
	}
	must(q->fd >= 0, "kevent_init: %s", strerror(errno));
	must(add1(q->fd, timer_ms(100000, 0, ANCHOR_PTR)) == 0,
	     "anchor timer: %s", strerror(errno));
}

static void q_close(struct queue *q)
{
	must(close(q->fd) == 0, "close(queue): %s", strerror(errno));
	if (q->ring)
		munmap(q->ring, q->mapped);
}

/* Copy n slots of the ring from the consumer index, and commit them. */
static void q_ring_consume(struct queue *q, struct ukevent *out,
			   unsigned int n)
{
	unsigned int i, new_uidx, over;
	int ret;

	must(__atomic_load_n(&q->ring->ring_kidx, __ATOMIC_ACQUIRE) ==
	     (q->uidx + n) % RING_SLOTS,
	     "ring_kidx %u, want %u after %u events from slot %u",
	     q->ring->ring_kidx, (q->uidx + n) % RING_SLOTS, n, q->uidx);
	for (i = 0; i < n; i++)
		out[i] = q->ring->event[(q->uidx + i) % RING_SLOTS];
	new_uidx = (q->uidx + n) % RING_SLOTS;
	over = q->over + (q->uidx + n >= RING_SLOTS);
	ret = kevent_commit(q->fd, new_uidx, over);
	must(ret == (int)n, "kevent_commit(%u, %u): %d (%s), want %u",
	     new_uidx, over, ret, strerror(errno), n);
	must(q->ring->ring_over == over, "ring_over %u, want %u",
	     q->ring->ring_over, over);
	q->uidx = new_uidx;
	q->over = over;
}

/*
 * Deliver up to max events into out: wait up to ms for the first (0: do
 * not wait).  Through kevent_get_events(), or kevent_wait() and the ring
 * (whose slots are then read and committed).  The count, or -1.
 */
static int q_take(struct queue *q, struct ukevent *out, unsigned int max,
		  unsigned int ms)
{
	struct __kernel_timespec t = ts(ms / 1000, (ms % 1000) * 1000000LL);
	int n;

	if (q->path == PATH_GE)
		return kevent_get_events(q->fd, ms ? 1 : 0, max, &t, out, 0);
	n = kevent_wait(q->fd, max, q->uidx, &t, 0);
	if (n > 0)
		q_ring_consume(q, out, (unsigned int)n);
	return n;
}

/* Deliver what is ready now, without waiting; the count, or -1. */
static int q_pending(struct queue *q)
{
	struct ukevent ev[4];

	return q_take(q, ev, 4, 0);
}

/* Nothing was written to the ring since the last commit. */
static int ring_untouched(const struct queue *q)
{
	return !q->ring || q->ring->ring_kidx == q->uidx;
}

/* ---- checks of delivered events ---- */

static void diag_ev(int n, const struct ukevent *ev)
{
	if (n < 0)
		diag("  got -1 (%s)", strerror(errno));
	else if (n == 0)
		diag("  got no event");
	else
		diag("  got %d event(s), first: type %u ptr %#llx ret_flags %#x ret_data %d %d",
		     n, ev->type, (unsigned long long)ev->ptr, ev->ret_flags,
		     (int)ev->ret_data[0], (int)ev->ret_data[1]);
}

/* Exactly one event, of type/ptr, with ret_flags DONE only. */
static int one_ev(int n, const struct ukevent *ev, __u32 type, __u64 ptr)
{
	int good = n == 1 && ev->type == type && ev->ptr == ptr &&
		   ev->ret_flags == DONE;

	if (!good)
		diag_ev(n, ev);
	return good;
}

/* A request of one type for the object id.raw[0] = id. */
static struct ukevent uk_of(__u32 type, __u32 id, __u32 event, __u32 flags,
			    __u64 ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = id;
	uk.type = type;
	uk.event = event;
	uk.req_flags = flags;
	uk.ptr = ptr;
	return uk;
}

/* ---- poll, pipe and socket objects: data to read ---- */

struct obj {
	int src;
	int rfd, wfd;	/* the watched descriptor, and the one written */
};

static void obj_open(struct obj *o, int src)
{
	int fds[2];

	o->src = src;
	switch (src) {
	case SRC_POLL:
		o->rfd = o->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		must(o->rfd >= 0, "eventfd: %s", strerror(errno));
		return;
	case SRC_PIPE:
		must(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2: %s",
		     strerror(errno));
		break;
	case SRC_SOCKET:
		must(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				SOCK_CLOEXEC, 0, fds) == 0,
		     "socketpair: %s", strerror(errno));
		break;
	default:
		bail_out("obj_open(%d)", src);
	}
	o->rfd = fds[0];
	o->wfd = fds[1];
}

/* Close the watched end (end 0) or the other one (1), if still open. */
static void obj_close_end(struct obj *o, int end)
{
	int *fd = end ? &o->wfd : &o->rfd;

	if (*fd >= 0)
		must(close(*fd) == 0, "close: %s", strerror(errno));
	if (o->rfd == o->wfd)
		o->rfd = o->wfd = -1;
	*fd = -1;
}

/* Start a cell of an object source: its queue, its tag, its object. */
static void obj_cell(struct queue *q, struct obj *o, int src,
		     const char *flag, int path)
{
	q_open(q, path);
	cell(src, flag, path);
	obj_open(o, src);
}

static void obj_close(struct obj *o)
{
	obj_close_end(o, 0);
	obj_close_end(o, 1);
}

/*
 * One report of a broken registration: BROKEN and DONE, and the error,
 * err or (for a pipe, whose last writer leaves before it goes away)
 * err2.
 */
static int broken_ev(int n, const struct ukevent *ev, __u32 type, __u64 ptr,
		     int err, int err2)
{
	if (n == 1 && ev->type == type && ev->ptr == ptr &&
	    ev->ret_flags == BROKEN_DONE &&
	    ((int)ev->ret_data[1] == -err || (int)ev->ret_data[1] == -err2))
		return 1;
	diag_ev(n, ev);
	return 0;
}

/* Make the object readable, or more so. */
static void obj_fill(struct obj *o)
{
	__u64 one = 1;
	ssize_t n;

	if (o->src == SRC_POLL)
		n = write(o->wfd, &one, sizeof(one)) == sizeof(one) ? 1 : -1;
	else
		n = write(o->wfd, "x", 1);
	must(n == 1, "write to the %s: %s", src_name[o->src], strerror(errno));
}

/* Read everything: the object is no longer readable. */
static void obj_drain(struct obj *o)
{
	char buf[256];
	ssize_t n;

	while ((n = read(o->rfd, buf, sizeof(buf))) > 0)
		;
	must(n < 0 && errno == EAGAIN, "draining the %s: %zd (%s)",
	     src_name[o->src], n, strerror(errno));
}

static int obj_readable(struct obj *o)
{
	struct pollfd p = { .fd = o->rfd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* A registration for data to read on the object. */
static struct ukevent obj_uk(struct obj *o, __u32 flags, __u64 ptr)
{
	return uk_of(src_type[o->src], (__u32)o->rfd,
		     o->src == SRC_POLL ? KEVENT_POLL_POLLIN : KEVENT_SOCKET_RECV,
		     flags, ptr);
}

/*
 * ret_data[0] of a report: the POLL* bits seen (kevent_poll(7)); 0 for a
 * pipe (kevent_pipe(7)); the ready KEVENT_SOCKET_* bits (kevent_socket(7)).
 */
static int obj_data_ok(const struct obj *o, const struct ukevent *ev)
{
	switch (o->src) {
	case SRC_POLL:
		return (ev->ret_data[0] & KEVENT_POLL_POLLIN) != 0;
	case SRC_PIPE:
		return ev->ret_data[0] == 0;
	default:
		return (ev->ret_data[0] & KEVENT_SOCKET_RECV) != 0;
	}
}

static int obj_ev(const struct obj *o, int n, const struct ukevent *ev,
		  __u64 ptr)
{
	if (!one_ev(n, ev, src_type[o->src], ptr))
		return 0;
	if (!obj_data_ok(o, ev)) {
		diag("  ret_data[0] %#x", ev->ret_data[0]);
		return 0;
	}
	return 1;
}

/* Write to the object: the registration ptr reports it, once. */
static int obj_write_reported(struct queue *q, struct obj *o, __u64 ptr)
{
	struct ukevent ev[4];
	int n;

	obj_fill(o);
	n = q_take(q, ev, 4, 2000);
	return obj_ev(o, n, ev, ptr);
}

/* ---- signals ---- */

static volatile sig_atomic_t usr1_caught;
static pid_t main_tid;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_caught++;
}

/* SIGUSR1 to the main thread, whose registrations watch it. */
static void send_usr1(void)
{
	must(syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1) == 0,
	     "tgkill: %s", strerror(errno));
}

static void block_usr1(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	must(pthread_sigmask(how, &set, NULL) == 0, "pthread_sigmask");
}

static struct ukevent sig_uk(__u32 flags, __u64 ptr)
{
	return uk_of(KEVENT_SIGNAL, SIGUSR1, KEVENT_SIGNAL_DELIVERY, flags, ptr);
}

/* One report of SIGUSR1 sent by tgkill() count times. */
static int sig_ev(int n, const struct ukevent *ev, __u64 ptr, int count)
{
	if (!one_ev(n, ev, KEVENT_SIGNAL, ptr))
		return 0;
	if ((int)ev->ret_data[0] != SI_TKILL || (int)ev->ret_data[1] != count) {
		diag("  ret_data %d %d, want %d %d", (int)ev->ret_data[0],
		     (int)ev->ret_data[1], SI_TKILL, count);
		return 0;
	}
	return 1;
}

/* ---- POSIX timers ---- */

static char ptag[64];	/* sival_ptr values */
static unsigned int ptag_next;

static void *new_ptag(void)
{
	must(ptag_next < sizeof(ptag), "out of sival_ptr tags");
	return &ptag[ptag_next++];
}

/* timer_create() with SIGEV_KEVENT on the queue (kevent_posix_timer(7)). */
static timer_t ptimer_new(struct queue *q, void *ptr)
{
	struct sigevent sev;
	timer_t tid;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev._sigev_un._tid = q->fd;
	sev.sigev_value.sival_ptr = ptr;
	must(timer_create(CLOCK_MONOTONIC, &sev, &tid) == 0,
	     "timer_create(SIGEV_KEVENT): %s", strerror(errno));
	return tid;
}

static void ptimer_arm(timer_t tid, long first_us)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = first_us / 1000000;
	its.it_value.tv_nsec = (first_us % 1000000) * 1000;
	must(timer_settime(tid, 0, &its, NULL) == 0, "timer_settime: %s",
	     strerror(errno));
}

static struct ukevent ptimer_uk(timer_t tid, void *ptr, __u32 flags)
{
	return uk_of(KEVENT_POSIX_TIMER, (__u32)(intptr_t)tid, KEVENT_MASK_ALL,
		     flags, (__u64)(uintptr_t)ptr);
}

/* MODIFY the registration timer_create() made to req_flags flags. */
static int ptimer_modify(struct queue *q, timer_t tid, void *ptr,
			 __u32 flags)
{
	struct ukevent uk = ptimer_uk(tid, ptr, flags);
	int ret = ctl1(q->fd, KEVENT_CTL_MODIFY, &uk);

	if (ret != 1 || uk.ret_flags != DONE) {
		diag("  MODIFY: %d, ret_flags %#x, ret_data[1] %d", ret,
		     uk.ret_flags, (int)uk.ret_data[1]);
		return 0;
	}
	return 1;
}

/* One report of the POSIX timer with count expiries. */
static int ptimer_ev(int n, const struct ukevent *ev, timer_t tid, void *ptr,
		     int count)
{
	if (!one_ev(n, ev, KEVENT_POSIX_TIMER, (__u64)(uintptr_t)ptr))
		return 0;
	if (ev->id.raw[0] != (__u32)(intptr_t)tid ||
	    (int)ev->ret_data[0] != count) {
		diag("  id %u ret_data[0] %d, want %d %d", ev->id.raw[0],
		     (int)ev->ret_data[0], (int)(intptr_t)tid, count);
		return 0;
	}
	return 1;
}

/* ---- common ---- */

static __u64 ptr_seq;

/* A fresh 64-bit ptr: all of it is part of the identity. */
static __u64 new_ptr(void)
{
	return 0x5eed000000000000ULL + ++ptr_seq;
}

/* REMOVE gives ENOENT: no such registration (any more). */
static int remove_enoent(struct queue *q, struct ukevent uk)
{
	int ret = ctl1(q->fd, KEVENT_CTL_REMOVE, &uk);

	if (ret != 1 || uk.ret_flags != BROKEN_DONE ||
	    (int)uk.ret_data[1] != -ENOENT) {
		diag("  REMOVE: %d, ret_flags %#x, ret_data[1] %d", ret,
		     uk.ret_flags, (int)uk.ret_data[1]);
		return 0;
	}
	return 1;
}

static void cell_add(struct queue *q, struct ukevent uk)
{
	must(add1(q->fd, uk) == 0, "%s setup ADD: %s", cell_tag,
	     strerror(errno));
}

static void cell_remove(struct queue *q, struct ukevent uk)
{
	int ret = ctl1(q->fd, KEVENT_CTL_REMOVE, &uk);

	must(ret == 1 && uk.ret_flags == DONE, "%s setup REMOVE: %d %#x",
	     cell_tag, ret, uk.ret_flags);
}

/* ================= ONESHOT ================= */

static void timer_oneshot(int path)
{
	struct ukevent ev[4];
	struct queue q;
	__u64 p = new_ptr();
	int n;

	q_open(&q, path);
	cell(SRC_TIMER, "ONESHOT", path);
	cell_add(&q, timer_ms(30, ONESHOT, p));
	n = q_take(&q, ev, 4, 2000);
	cok(one_ev(n, ev, KEVENT_TIMER, p) && ev->ret_data[1] == 1,
	    "a one-shot timer reports its expiry, count 1");
	cok(remove_enoent(&q, timer_ms(30, ONESHOT, p)),
	    "removed once delivered: REMOVE gives ENOENT");
	msleep(70);
	n = q_pending(&q);
	cok(n == 0, "expires once: nothing more after two intervals (%d)", n);
	q_close(&q);
}

static void obj_oneshot(int src, int path)
{
	struct ukevent ev[4];
	struct queue q;
	struct obj o;
	__u64 p = new_ptr(), p2 = new_ptr();
	int n;

	obj_cell(&q, &o, src, "ONESHOT", path);
	cell_add(&q, obj_uk(&o, ONESHOT, p));
	cok(obj_write_reported(&q, &o, p), "the write is reported");
	cok(remove_enoent(&q, obj_uk(&o, ONESHOT, p)),
	    "removed once delivered: REMOVE gives ENOENT");
	obj_fill(&o);
	n = q_pending(&q);
	cok(n == 0 && obj_readable(&o),
	    "the next write, data still there, reports nothing (%d)", n);

	/* Its object goes away before any event: reported once, broken. */
	obj_drain(&o);
	cell_add(&q, obj_uk(&o, ONESHOT, p2));
	obj_close(&o);		/* the watched end first */
	n = q_take(&q, ev, 4, 2000);
	cok(broken_ev(n, ev, src_type[src], p2, EBADF,
		      src == SRC_PIPE ? EPIPE : EBADF),
	    "closed before any event: reported once, BROKEN, -EBADF%s",
	    src == SRC_PIPE ? " (or -EPIPE as the last writer leaves)" : "");
	cok(remove_enoent(&q, obj_uk(&o, ONESHOT, p2)) &&
	    q_take(&q, ev, 4, 0) == 0,
	    "the broken one-shot registration is gone, nothing more");
	q_close(&q);
}

static void signal_oneshot(int path)
{
	struct ukevent ev[4];
	struct queue q;
	__u64 p = new_ptr();
	int n, caught;

	q_open(&q, path);
	cell(SRC_SIGNAL, "ONESHOT", path);
	cell_add(&q, sig_uk(ONESHOT, p));
	send_usr1();
	n = q_take(&q, ev, 4, 2000);
	cok(sig_ev(n, ev, p, 1), "tgkill() is reported, SI_TKILL, count 1");
	cok(remove_enoent(&q, sig_uk(ONESHOT, p)),
	    "removed once delivered: REMOVE gives ENOENT");
	caught = usr1_caught;
	send_usr1();
	n = q_pending(&q);
	cok(n == 0, "the next signal is not reported (%d)", n);
	cis(usr1_caught - caught, 1,
	    "without NOMASK the signal still reaches its handler");
	q_close(&q);
}

static void ptimer_oneshot(int path)
{
	struct ukevent ev[4];
	struct queue q;
	void *p = new_ptag();
	timer_t tid;
	int n;

	q_open(&q, path);
	cell(SRC_PTIMER, "ONESHOT", path);
	tid = ptimer_new(&q, p);
	cok(ptimer_modify(&q, tid, p, ONESHOT),
	    "MODIFY sets ONESHOT on the registration timer_create() made");
	ptimer_arm(tid, 20000);
	n = q_take(&q, ev, 4, 2000);
	cok(ptimer_ev(n, ev, tid, p, 1), "the expiry is reported, count 1");
	cok(remove_enoent(&q, ptimer_uk(tid, p, 0)),
	    "removed once delivered: REMOVE gives ENOENT");
	ptimer_arm(tid, 10000);
	msleep(60);
	n = q_pending(&q);
	cok(n == 0, "the timer's next expiry reports nothing (%d)", n);
	must(timer_delete(tid) == 0, "timer_delete: %s", strerror(errno));
	n = q_pending(&q);
	cok(n == 0, "timer_delete() reports nothing for the removed registration (%d)",
	    n);
	q_close(&q);
}

/* ================= ET ================= */

static void timer_et(int path)
{
	struct ukevent ev[4];
	long long got;
	struct queue q;
	__u64 p = new_ptr(), p2 = new_ptr();
	int n;

	q_open(&q, path);
	cell(SRC_TIMER, "ET", path);
	cell_add(&q, timer_ms(250, ET, p));
	n = q_take(&q, ev, 4, 3000);
	got = now_ns();
	cok(one_ev(n, ev, KEVENT_TIMER, p) && ev->ret_data[1] >= 1,
	    "ET periodic timer: the expiry is reported");
	n = q_pending(&q);
	cok(n == 0 || ms_since(got) >= 200,
	    "ET: not reported again before its next expiry (%d)", n);
	n = q_take(&q, ev, 4, 3000);
	cok(one_ev(n, ev, KEVENT_TIMER, p) && ev->ret_data[1] >= 1,
	    "ET: the next expiry reports it again");
	cell_remove(&q, timer_ms(250, ET, p));

	cell_add(&q, timer_ms(250, 0, p2));
	n = q_take(&q, ev, 4, 3000);
	got = now_ns();
	cok(one_ev(n, ev, KEVENT_TIMER, p2) && ev->ret_data[1] >= 1,
	    "level-triggered periodic timer: the expiry is reported");
	n = q_pending(&q);
	cok(n == 0 || ms_since(got) >= 200,
	    "level-triggered: not reported twice for one expiry (%d)", n);
	q_close(&q);
}

static void obj_et(int src, int path)
{
	struct ukevent ev[4];
	struct queue q;
	struct obj o;
	__u64 p = new_ptr(), p2 = new_ptr();
	int n;

	obj_cell(&q, &o, src, "ET", path);
	cell_add(&q, obj_uk(&o, ET, p));
	cok(obj_write_reported(&q, &o, p), "ET: the write is reported");
	n = q_pending(&q);
	cok(n == 0 && obj_readable(&o),
	    "ET: not reported again while the data remain (%d)", n);
	cok(obj_write_reported(&q, &o, p), "ET: the next write reports it again");
	obj_drain(&o);
	cell_remove(&q, obj_uk(&o, ET, p));

	cell_add(&q, obj_uk(&o, 0, p2));
	cok(obj_write_reported(&q, &o, p2), "level-triggered: the write is reported");
	n = q_take(&q, ev, 4, 0);
	cok(obj_ev(&o, n, ev, p2) && obj_readable(&o),
	    "level-triggered: reported again, once, while the data remain");
	obj_drain(&o);
	n = q_pending(&q);
	cok(n == 0, "level-triggered: not reported once drained (%d)", n);
	obj_close(&o);
	q_close(&q);
}

static void signal_et(int path)
{
	struct ukevent ev[4];
	struct queue q;
	__u64 p = new_ptr(), p2 = new_ptr();
	int n;

	q_open(&q, path);
	cell(SRC_SIGNAL, "ET", path);
	cell_add(&q, sig_uk(ET, p));
	send_usr1();
	send_usr1();
	n = q_take(&q, ev, 4, 2000);
	cok(sig_ev(n, ev, p, 2), "ET: two sends before delivery, one report, count 2");
	n = q_pending(&q);
	cok(n == 0, "ET: not reported again without a new send (%d)", n);
	send_usr1();
	n = q_take(&q, ev, 4, 2000);
	cok(sig_ev(n, ev, p, 1), "ET: the next send reports it again, count 1");
	cell_remove(&q, sig_uk(ET, p));

	cell_add(&q, sig_uk(0, p2));
	send_usr1();
	n = q_take(&q, ev, 4, 2000);
	cok(sig_ev(n, ev, p2, 1), "level-triggered: the send is reported");
	n = q_pending(&q);
	cok(n == 0, "level-triggered: not reported twice for one signal (%d)", n);
	q_close(&q);
}

static void ptimer_et(int path)
{
	struct ukevent ev[4];
	struct queue q;
	void *p = new_ptag();
	timer_t tid;
	int n;

	q_open(&q, path);
	cell(SRC_PTIMER, "ET", path);
	tid = ptimer_new(&q, p);
	cok(ptimer_modify(&q, tid, p, ET),
	    "MODIFY sets ET on the registration timer_create() made");
	ptimer_arm(tid, 20000);
	n = q_take(&q, ev, 4, 2000);
	cok(ptimer_ev(n, ev, tid, p, 1), "ET: the expiry is reported");
	n = q_pending(&q);
	cok(n == 0, "ET: not reported again before the next expiry (%d)", n);
	ptimer_arm(tid, 20000);
	n = q_take(&q, ev, 4, 2000);
	cok(ptimer_ev(n, ev, tid, p, 1), "ET: the next expiry reports it again");

	must(ptimer_modify(&q, tid, p, 0), "MODIFY back to level-triggered");
	ptimer_arm(tid, 20000);
	n = q_take(&q, ev, 4, 2000);
	cok(ptimer_ev(n, ev, tid, p, 1), "level-triggered: the expiry is reported");
	n = q_pending(&q);
	cok(n == 0, "level-triggered: not reported twice for one expiry (%d)", n);
	must(timer_delete(tid) == 0, "timer_delete: %s", strerror(errno));
	q_close(&q);
}

/* ================= WAKEUP_ALL ================= */

#define NWAITERS	3

struct waiter {
	struct queue *q;
	pthread_t th;
	pid_t tid;
	int entering, done, ret, err;
	struct ukevent ev;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct queue *q = w->q;

	w->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&w->entering, 1, __ATOMIC_SEQ_CST);
	if (q->path == PATH_GE)
		w->ret = kevent_get_events(q->fd, 1, 1, TSP(8, 0), &w->ev, 0);
	else
		w->ret = kevent_wait(q->fd, 1, q->uidx, TSP(8, 0), 0);
	w->err = errno;
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int ndone(struct waiter *w)
{
	int i, n = 0;

	for (i = 0; i < NWAITERS; i++)
		n += __atomic_load_n(&w[i].done, __ATOMIC_SEQ_CST);
	return n;
}

/*
 * NWAITERS threads sleep in the call of the path (min_nr 1 or num 1, 8 s
 * timeout) and are seen asleep; then one event happens.  Nothing else
 * wakes the queue.  The registration is ET (ONESHOT for the timer), so
 * that the one event is not requeued and cannot feed a second thread.
 */
static void wakeup_case(int src, int path, int all)
{
	const char *what = all ? "WAKEUP_ALL" : "without WAKEUP_ALL";
	__u32 flags = all ? WAKEUP_ALL : 0;
	struct waiter w[NWAITERS];
	struct ukevent ev;
	long long start;
	int i, asleep = 1, ones = 0, zeros = 0, good;
	__u64 p = new_ptr();
	void *tag = NULL;
	struct queue q;
	timer_t tid = 0;
	struct obj o;

	q_open(&q, path);
	switch (src) {
	case SRC_TIMER:
		break;
	case SRC_SIGNAL:
		cell_add(&q, sig_uk(ET | flags, p));
		break;
	case SRC_PTIMER:
		tag = new_ptag();
		p = (__u64)(uintptr_t)tag;
		tid = ptimer_new(&q, tag);
		must(ptimer_modify(&q, tid, tag, ET | flags),
		     "MODIFY of the POSIX timer to %#x", ET | flags);
		break;
	default:
		obj_open(&o, src);
		cell_add(&q, obj_uk(&o, ET | flags, p));
	}

	memset(w, 0, sizeof(w));
	for (i = 0; i < NWAITERS; i++) {
		w[i].q = &q;
		must(pthread_create(&w[i].th, NULL, waiter_main, &w[i]) == 0,
		     "pthread_create");
	}
	for (i = 0; i < NWAITERS; i++) {
		while (!__atomic_load_n(&w[i].entering, __ATOMIC_SEQ_CST))
			msleep(1);
		asleep &= wait_sleeping(w[i].tid, 3000);
	}
	cok(asleep && !ndone(w), "%s: %d threads asleep in %s", what,
	    NWAITERS, path == PATH_GE ? "kevent_get_events" : "kevent_wait");

	start = now_ns();
	switch (src) {
	case SRC_TIMER:
		cell_add(&q, timer_ms(40, ONESHOT | flags, p));
		break;
	case SRC_SIGNAL:
		send_usr1();
		break;
	case SRC_PTIMER:
		ptimer_arm(tid, 20000);
		break;
	default:
		obj_fill(&o);
	}
	while (ndone(w) < (all ? NWAITERS : 1) && ms_since(start) < 4000)
		msleep(2);
	if (all) {
		cis(ndone(w), NWAITERS, "WAKEUP_ALL: one event ends every wait");
	} else {
		msleep(200);	/* give a wrong second wakeup time to show */
		asleep = 0;
		for (i = 0; i < NWAITERS; i++)
			if (!__atomic_load_n(&w[i].done, __ATOMIC_SEQ_CST))
				asleep += thread_state(w[i].tid) == 'S';
		cok(ndone(w) == 1 && asleep == NWAITERS - 1,
		    "without WAKEUP_ALL: one event ends exactly one wait, the others sleep on (%d ended, %d asleep)",
		    ndone(w), asleep);
	}
	kevent_ctl(q.fd, KEVENT_CTL_READY, 0, NULL);	/* end the others */
	for (i = 0; i < NWAITERS; i++) {
		pthread_join(w[i].th, NULL);
		ones += w[i].ret == 1;
		zeros += w[i].ret == 0;
	}
	cok(ones == 1 && zeros == NWAITERS - 1,
	    "%s: the event went to exactly one thread, the others got 0 (%d %d %d)",
	    what, w[0].ret, w[1].ret, w[2].ret);
	memset(&ev, 0, sizeof(ev));
	if (ones == 1 && path == PATH_RING) {
		q_ring_consume(&q, &ev, 1);
	} else {
		for (i = 0; i < NWAITERS; i++)
			if (w[i].ret == 1)
				ev = w[i].ev;
	}
	good = one_ev(ones, &ev, src_type[src], p);
	cok(good, "%s: it is the registration's event", what);

	if (src == SRC_PTIMER)
		must(timer_delete(tid) == 0, "timer_delete: %s",
		     strerror(errno));
	else if (src != SRC_TIMER && src != SRC_SIGNAL)
		obj_close(&o);
	q_close(&q);
}

static void wakeup_all(int src, int path)
{
	cell(src, "WAKEUP_ALL", path);
	wakeup_case(src, path, 0);
	cell(src, "WAKEUP_ALL", path);
	wakeup_case(src, path, 1);
}

/* ================= LAST_CHECK ================= */

/*
 * A timer is ready while an expiry is undelivered, and nothing but a
 * delivery takes that away.  READY queues it without an expiry, which is
 * delivered without the check; the level-triggered requeue after that
 * delivery is checked at dequeue, finds no expiry, and is dropped; an
 * expired one is reported.
 */
static void timer_last_check(int path)
{
	struct ukevent ev[4], uk;
	struct queue q;
	__u64 p = new_ptr(), p2 = new_ptr();
	int n;

	q_open(&q, path);
	cell(SRC_TIMER, "LAST_CHECK", path);
	cell_add(&q, timer_ms(20000, LAST_CHECK, p));
	uk = timer_ms(20000, LAST_CHECK, p);
	must(ctl1(q.fd, KEVENT_CTL_READY, &uk) == 0, "READY of the timer");
	n = q_take(&q, ev, 4, 2000);
	cok(one_ev(n, ev, KEVENT_TIMER, p) && ev->ret_data[1] == 0,
	    "READY is delivered without the check, 0 expiries");
	n = q_pending(&q);
	cok(n == 0, "requeued, not expired at dequeue: dropped (%d)", n);
	cell_add(&q, timer_ms(20, ONESHOT | LAST_CHECK, p2));
	n = q_take(&q, ev, 4, 2000);
	cok(one_ev(n, ev, KEVENT_TIMER, p2) && ev->ret_data[1] == 1,
	    "expired at dequeue: reported, count 1");
	q_close(&q);
}

/*
 * The write queues the registration; the read that follows, before the
 * harvest, makes it not ready: dropped at dequeue.  Level-triggered and
 * edge-triggered alike.
 */
static void obj_last_check(int src, int path)
{
	static const __u32 mode[2] = { 0, ET };
	struct ukevent ev[4], uk;
	struct queue q;
	struct obj o;
	__u64 p;
	int n, i;

	obj_cell(&q, &o, src, "LAST_CHECK", path);
	for (i = 0; i < 2; i++) {
		p = new_ptr();
		cell_add(&q, obj_uk(&o, LAST_CHECK | mode[i], p));
		uk = obj_uk(&o, LAST_CHECK | mode[i], p);
		must(ctl1(q.fd, KEVENT_CTL_READY, &uk) == 0, "READY");
		n = q_take(&q, ev, 4, 2000);
		cok(one_ev(n, ev, src_type[src], p) && !obj_readable(&o),
		    "%s: READY of the empty object is delivered without the check",
		    i ? "ET" : "level-triggered");
		obj_fill(&o);
		obj_drain(&o);
		n = q_take(&q, ev, 4, 0);
		cok(n == 0, "%s: written then read before the harvest: dropped (%d)",
		    i ? "ET" : "level-triggered", n);
		obj_fill(&o);
		n = q_take(&q, ev, 4, 2000);
		cok(obj_ev(&o, n, ev, p),
		    "%s: back to waiting; the next write, still there at dequeue, is reported",
		    i ? "ET" : "level-triggered");
		obj_drain(&o);
		cell_remove(&q, obj_uk(&o, 0, p));
	}

	/*
	 * A broken object is reported whatever the check: the eventfd
	 * closed (-EBADF), the pipe's last writer gone while it is empty,
	 * the UNIX stream socket's peer closed with nothing to read (both
	 * -EPIPE).
	 */
	p = new_ptr();
	cell_add(&q, obj_uk(&o, LAST_CHECK, p));
	obj_close_end(&o, 1);
	n = q_take(&q, ev, 4, 2000);
	cok(broken_ev(n, ev, src_type[src], p,
		      src == SRC_POLL ? EBADF : EPIPE,
		      src == SRC_POLL ? EBADF : EPIPE) &&
	    remove_enoent(&q, obj_uk(&o, 0, p)),
	    "a broken object is reported despite the check, once, and removed (%s)",
	    src == SRC_POLL ? "eventfd closed, -EBADF" :
	    src == SRC_PIPE ? "no writer, empty, -EPIPE" :
	    "peer closed, nothing to read, -EPIPE");
	obj_close(&o);
	q_close(&q);
}

static void signal_last_check(int path)
{
	struct ukevent ev[4], uk;
	struct queue q;
	__u64 p = new_ptr();
	int n;

	q_open(&q, path);
	cell(SRC_SIGNAL, "LAST_CHECK", path);
	cell_add(&q, sig_uk(LAST_CHECK, p));
	uk = sig_uk(LAST_CHECK, p);
	must(ctl1(q.fd, KEVENT_CTL_READY, &uk) == 0, "READY of the signal");
	n = q_take(&q, ev, 4, 2000);
	cok(one_ev(n, ev, KEVENT_SIGNAL, p) && ev->ret_data[1] == 0,
	    "READY is delivered without the check, count 0");
	n = q_pending(&q);
	cok(n == 0, "requeued, no send since the delivery: dropped at dequeue (%d)",
	    n);
	send_usr1();
	n = q_take(&q, ev, 4, 2000);
	cok(sig_ev(n, ev, p, 1), "sent, still undelivered at dequeue: reported");
	q_close(&q);
}

static void ptimer_last_check(int path)
{
	struct ukevent ev[4], uk;
	struct queue q;
	void *p = new_ptag();
	timer_t tid;
	int n;

	q_open(&q, path);
	cell(SRC_PTIMER, "LAST_CHECK", path);
	tid = ptimer_new(&q, p);
	cok(ptimer_modify(&q, tid, p, LAST_CHECK),
	    "MODIFY sets LAST_CHECK on the registration timer_create() made");
	uk = ptimer_uk(tid, p, LAST_CHECK);
	must(ctl1(q.fd, KEVENT_CTL_READY, &uk) == 0, "READY of the POSIX timer");
	n = q_take(&q, ev, 4, 2000);
	cok(ptimer_ev(n, ev, tid, p, 0),
	    "READY is delivered without the check, 0 expirations");
	n = q_pending(&q);
	cok(n == 0, "requeued, not expired at dequeue: dropped (%d)", n);
	ptimer_arm(tid, 20000);
	n = q_take(&q, ev, 4, 2000);
	cok(ptimer_ev(n, ev, tid, p, 1), "expired at dequeue: reported, count 1");
	must(timer_delete(tid) == 0, "timer_delete: %s", strerror(errno));
	q_close(&q);
}

/* ================= ALWAYS_QUEUE ================= */

/*
 * A timer is never ready at ADD (kevent_timer(7)), even one of interval
 * 0 that expires at once: ADD keeps it with and without ALWAYS_QUEUE,
 * and its expiry is delivered.
 */
static void timer_always_queue(int path)
{
	static const __u32 flags[2] = { ONESHOT, ONESHOT | ALWAYS_QUEUE };
	struct ukevent ev[4], uk;
	struct queue q;
	__u64 p;
	int n, i, ret;

	q_open(&q, path);
	cell(SRC_TIMER, "ALWAYS_QUEUE", path);
	for (i = 0; i < 2; i++) {
		p = new_ptr();
		uk = timer_ms(0, flags[i], p);
		ret = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
		cok(ret == 0 && ring_untouched(&q),
		    "%s ALWAYS_QUEUE: a timer expiring at once is never ready at ADD: kept, nothing copied back (%d)",
		    i ? "with" : "without", ret);
		n = q_take(&q, ev, 4, 2000);
		cok(one_ev(n, ev, KEVENT_TIMER, p) && ev->ret_data[1] == 1,
		    "%s ALWAYS_QUEUE: its expiry is queued and delivered",
		    i ? "with" : "without");
	}
	q_close(&q);
}

static void obj_always_queue(int src, int path)
{
	struct ukevent ev[4], uk;
	struct queue q;
	struct obj o;
	__u64 p = new_ptr(), p2 = new_ptr(), p3 = new_ptr();
	int n, ret, i, k;

	obj_cell(&q, &o, src, "ALWAYS_QUEUE", path);
	obj_fill(&o);
	uk = obj_uk(&o, 0, p);
	ret = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
	cok(ret == 1 && uk.ptr == p && uk.ret_flags == DONE &&
	    obj_data_ok(&o, &uk) && ring_untouched(&q),
	    "without: ready at ADD, copied back with DONE and the source's data, not queued (%d, ret_flags %#x, ret_data[0] %#x)",
	    ret, uk.ret_flags, uk.ret_data[0]);
	cok(remove_enoent(&q, obj_uk(&o, 0, p)),
	    "without: not kept, REMOVE gives ENOENT");
	uk = obj_uk(&o, ALWAYS_QUEUE, p2);
	ret = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
	cok(ret == 0 && ring_untouched(&q),
	    "with: ready at ADD, kept, nothing copied back (%d)", ret);
	n = q_take(&q, ev, 4, 2000);
	cok(obj_ev(&o, n, ev, p2), "with: queued ready and delivered");

	uk = obj_uk(&o, ALWAYS_QUEUE | ONESHOT, p3);
	ret = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
	n = q_take(&q, ev, 8, 2000);
	for (i = 0, k = -1; i < n; i++)
		if (ev[i].ptr == p3)
			k = i;
	cok(ret == 0 && k >= 0 && obj_ev(&o, 1, &ev[k], p3),
	    "with ONESHOT too: kept, queued and delivered (%d, %d)", ret, n);
	cok(remove_enoent(&q, obj_uk(&o, 0, p3)),
	    "with ONESHOT too: removed once delivered");
	obj_close(&o);

	if (src != SRC_POLL) {
		/*
		 * A broken object at ADD: the entry is copied back as an
		 * error, ALWAYS_QUEUE or not (kevent_pipe(7): a pipe
		 * without readers breaks SEND; kevent_socket(7): a socket
		 * shut down both ways breaks any registration).
		 */
		obj_open(&o, src);
		if (src == SRC_PIPE) {
			obj_close_end(&o, 0);
			o.rfd = o.wfd;
			o.wfd = -1;
			uk = obj_uk(&o, ALWAYS_QUEUE, new_ptr());
		} else {
			must(shutdown(o.rfd, SHUT_RDWR) == 0, "shutdown: %s",
			     strerror(errno));
			uk = obj_uk(&o, ALWAYS_QUEUE, new_ptr());
		}
		uk.event = KEVENT_SOCKET_SEND;
		ret = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
		cok(ret == 1 && uk.ret_flags == BROKEN_DONE &&
		    (int)uk.ret_data[1] == -EPIPE && ring_untouched(&q),
		    "with: an entry copied back is one that failed: SEND on a %s, BROKEN, -EPIPE (%d, %#x, %d) %s",
		    src == SRC_PIPE ? "pipe without readers" :
		    "socket shut down both ways", ret, uk.ret_flags,
		    (int)uk.ret_data[1], src == SRC_PIPE ?
		    "[kevent_pipe.7 EPIPE closed-end]" :
		    "[kevent_socket.7 EPIPE shut-down]");
		cok(remove_enoent(&q, uk), "with: the failed entry is not kept %s",
		    src == SRC_PIPE ? "[kevent_pipe.7 EPIPE closed-end]" :
		    "[kevent_socket.7 EPIPE shut-down]");
		obj_close(&o);
	}
	q_close(&q);
}

/*
 * A signal registration is never ready at ADD, and a signal pending
 * before it is not reported (kevent_signal(7)): ALWAYS_QUEUE changes
 * nothing.
 */
static void signal_always_queue(int path)
{
	struct ukevent ev[4], uk;
	struct queue q;
	__u64 p = new_ptr(), p2 = new_ptr();
	int n, ret, ret2, i;

	q_open(&q, path);
	cell(SRC_SIGNAL, "ALWAYS_QUEUE", path);
	block_usr1(SIG_BLOCK);
	send_usr1();		/* pending, before the ADD */
	uk = sig_uk(ALWAYS_QUEUE, p);
	ret = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
	uk = sig_uk(0, p2);
	ret2 = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
	cok(ret == 0 && ret2 == 0 && ring_untouched(&q),
	    "with and without ALWAYS_QUEUE, a signal pending at ADD: kept, nothing copied back (%d %d)",
	    ret, ret2);
	n = q_pending(&q);
	cok(n == 0, "the signal pending before the ADD is not reported (%d)", n);
	block_usr1(SIG_UNBLOCK);	/* the handler takes it */
	send_usr1();
	n = q_take(&q, ev, 4, 2000);
	for (i = 0; i < n && i < 4; i++)
		if ((int)ev[i].ret_data[1] != 1 || ev[i].ret_flags != DONE)
			break;
	cok(n == 2 && i == 2 && ev[0].ptr != ev[1].ptr &&
	    (ev[0].ptr == p || ev[0].ptr == p2) &&
	    (ev[1].ptr == p || ev[1].ptr == p2),
	    "a signal sent after the ADD is reported by both, count 1 (%d)", n);
	q_close(&q);
}

/*
 * ADD cannot make a POSIX timer registration; timer_create() does, not
 * ready.  MODIFY sets ALWAYS_QUEUE, writes the entry back in place, and
 * never copies a ready registration back as an event: an expired one
 * stays queued and is delivered.
 */
static void ptimer_always_queue(int path)
{
	struct ukevent ev[4], uk;
	struct queue q;
	void *p = new_ptag();
	timer_t tid;
	int n, ret;

	q_open(&q, path);
	cell(SRC_PTIMER, "ALWAYS_QUEUE", path);
	tid = ptimer_new(&q, p);
	uk = ptimer_uk(tid, new_ptag(), ALWAYS_QUEUE);
	ret = ctl1(q.fd, KEVENT_CTL_ADD, &uk);
	cok(ret == 1 && uk.ret_flags == BROKEN_DONE &&
	    (int)uk.ret_data[1] == -ENOSYS,
	    "ADD with ALWAYS_QUEUE: ENOSYS, only timer_create() registers");
	ptimer_arm(tid, 10000);
	msleep(60);		/* expired: the registration is ready */
	cok(ptimer_modify(&q, tid, p, ALWAYS_QUEUE) && ring_untouched(&q),
	    "MODIFY of a ready registration to ALWAYS_QUEUE: written back DONE, nothing delivered");
	n = q_take(&q, ev, 4, 2000);
	cok(ptimer_ev(n, ev, tid, p, 1), "it stays queued and is delivered, count 1");
	must(timer_delete(tid) == 0, "timer_delete: %s", strerror(errno));
	q_close(&q);
}

/* ================= several threads in kevent_wait() ================= */

#define MT_THREADS	3
#define MT_EVENTS	48
#define MT_BASE		0x3e7000ULL

struct mt {
	struct queue q;
	pthread_mutex_t lock;
	unsigned int moved, consumed, bad, errors, stop;
	unsigned int seen[MT_EVENTS];
	struct {
		pthread_t th;
		pid_t tid;
		int entering;
		unsigned int got;
	} t[MT_THREADS];
	long long start;
};

/* Read and commit the slots moved by calls that returned; lock held. */
static void mt_consume(struct mt *m)
{
	struct ukevent *e;
	unsigned int k;

	while (m->consumed < m->moved) {
		e = &m->q.ring->event[m->q.uidx];
		k = (unsigned int)(e->ptr - MT_BASE);
		if (e->type != KEVENT_TIMER || e->ret_flags != DONE ||
		    e->ptr < MT_BASE || k >= MT_EVENTS)
			m->bad++;
		else
			m->seen[k]++;
		m->consumed++;
		if (kevent_commit(m->q.fd, (m->q.uidx + 1) % RING_SLOTS,
				  m->q.over + (m->q.uidx + 1 == RING_SLOTS)) != 1)
			m->errors++;
		if (++m->q.uidx == RING_SLOTS) {
			m->q.uidx = 0;
			m->q.over++;
		}
	}
}

struct mt_arg {
	struct mt *m;
	unsigned int i;
};

static void *mt_thread(void *arg)
{
	struct mt_arg *a = arg;
	struct mt *m = a->m;
	unsigned int uidx;
	int n;

	m->t[a->i].tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&m->t[a->i].entering, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		pthread_mutex_lock(&m->lock);
		uidx = m->q.uidx;
		n = m->stop;
		pthread_mutex_unlock(&m->lock);
		if (n || ms_since(m->start) > 10000)
			break;
		/* Returns at once if another thread committed meanwhile. */
		n = kevent_wait(m->q.fd, 2, uidx, TSP(0, 200000000), 0);
		pthread_mutex_lock(&m->lock);
		if (n < 0) {
			m->errors++;
			m->stop = 1;
		} else {
			m->moved += (unsigned int)n;
			m->t[a->i].got += (unsigned int)n;
			mt_consume(m);
			if (m->consumed >= MT_EVENTS)
				m->stop = 1;
		}
		pthread_mutex_unlock(&m->lock);
	}
	return NULL;
}

static void test_ring_threads(void)
{
	struct ukevent uk[MT_EVENTS];
	struct mt_arg a[MT_THREADS];
	struct mt *m = calloc(1, sizeof(*m));
	unsigned int i, once = 0;
	int asleep = 1;

	must(m, "calloc");
	q_open(&m->q, PATH_RING);
	must(pthread_mutex_init(&m->lock, NULL) == 0, "mutex");
	m->start = now_ns();
	for (i = 0; i < MT_THREADS; i++) {
		a[i].m = m;
		a[i].i = i;
		must(pthread_create(&m->t[i].th, NULL, mt_thread, &a[i]) == 0,
		     "pthread_create");
	}
	for (i = 0; i < MT_THREADS; i++) {
		while (!__atomic_load_n(&m->t[i].entering, __ATOMIC_SEQ_CST))
			msleep(1);
		asleep &= wait_sleeping(m->t[i].tid, 3000);
	}
	ok(asleep, "ring, %d threads: all asleep in kevent_wait before any event",
	   MT_THREADS);
	for (i = 0; i < MT_EVENTS; i++)
		uk[i] = timer_ms(3 + 4 * i, ONESHOT, MT_BASE + i);
	must(kevent_ctl(m->q.fd, KEVENT_CTL_ADD, MT_EVENTS, uk) == 0,
	     "ADD of %d timers", MT_EVENTS);
	for (i = 0; i < MT_THREADS; i++)
		pthread_join(m->t[i].th, NULL);
	for (i = 0; i < MT_EVENTS; i++)
		once += m->seen[i] == 1;
	diag("ring, %d threads: events moved per thread %u %u %u", MT_THREADS,
	     m->t[0].got, m->t[1].got, m->t[2].got);
	is_int(m->moved, MT_EVENTS,
	       "ring, %d threads: the kevent_wait calls moved %d events in all",
	       MT_THREADS, MT_EVENTS);
	is_int(once, MT_EVENTS,
	       "ring, %d threads: each of the %d one-shot timers came exactly once",
	       MT_THREADS, MT_EVENTS);
	ok(m->bad == 0 && m->errors == 0,
	   "ring, %d threads: no foreign event, no failed call or commit (%u, %u)",
	   MT_THREADS, m->bad, m->errors);
	q_close(&m->q);
	free(m);
}

/* ================= kevent_wait() with an absolute timeout ================= */

static void test_abstime(void)
{
	struct __kernel_timespec dl;
	struct ukevent ev;
	long long start, dl_ns, after;
	struct queue q;
	__u64 p = new_ptr();
	int n;

	q_open(&q, PATH_RING);
	dl = realtime_in(300);
	dl_ns = dl.tv_sec * 1000000000LL + dl.tv_nsec;
	start = now_ns();
	n = kevent_wait(q.fd, 1, q.uidx, &dl, KEVENT_FLAGS_ABSTIME);
	after = realtime_ns();
	is_int(n, 0, "kevent_wait, ABSTIME 300 ms ahead, nothing ready: returns 0");
	ok(after >= dl_ns, "ABSTIME: returned at or after the CLOCK_REALTIME deadline (%lld us after)",
	   (after - dl_ns) / 1000);
	ok(ms_since(start) < 3000, "ABSTIME: returned soon after it (%lld ms)",
	   ms_since(start));

	dl = realtime_in(-1000);
	start = now_ns();
	n = kevent_wait(q.fd, 1, q.uidx, &dl, KEVENT_FLAGS_ABSTIME);
	ok(n == 0 && ms_since(start) < 1000,
	   "ABSTIME in the past: returns 0 without blocking (%d, %lld ms)", n,
	   ms_since(start));

	must(add1(q.fd, timer_ms(30, ONESHOT, p)) == 0, "ADD: %s",
	     strerror(errno));
	dl = realtime_in(5000);
	start = now_ns();
	n = kevent_wait(q.fd, 1, q.uidx, &dl, KEVENT_FLAGS_ABSTIME);
	if (n > 0)
		q_ring_consume(&q, &ev, (unsigned int)n);
	ok(one_ev(n, &ev, KEVENT_TIMER, p) && ms_since(start) < 3000,
	   "ABSTIME 5 s ahead: the event that comes first ends the wait (%lld ms)",
	   ms_since(start));
	q_close(&q);
}

int main(void)
{
	struct sigaction sa;
	long long start;
	int path;

	plan(NPOINTS);
	tap_watchdog(50);
	kevent_require();

	main_tid = (pid_t)syscall(SYS_gettid);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	must(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction: %s",
	     strerror(errno));

	start = now_ns();
	for (path = 0; path < NPATH; path++) {
		timer_oneshot(path);
		obj_oneshot(SRC_POLL, path);
		obj_oneshot(SRC_PIPE, path);
		obj_oneshot(SRC_SOCKET, path);
		signal_oneshot(path);
		ptimer_oneshot(path);

		timer_et(path);
		obj_et(SRC_POLL, path);
		obj_et(SRC_PIPE, path);
		obj_et(SRC_SOCKET, path);
		signal_et(path);
		ptimer_et(path);

		wakeup_all(SRC_TIMER, path);
		wakeup_all(SRC_POLL, path);
		wakeup_all(SRC_PIPE, path);
		wakeup_all(SRC_SOCKET, path);
		wakeup_all(SRC_SIGNAL, path);
		wakeup_all(SRC_PTIMER, path);

		timer_last_check(path);
		obj_last_check(SRC_POLL, path);
		obj_last_check(SRC_PIPE, path);
		obj_last_check(SRC_SOCKET, path);
		signal_last_check(path);
		ptimer_last_check(path);

		timer_always_queue(path);
		obj_always_queue(SRC_POLL, path);
		obj_always_queue(SRC_PIPE, path);
		obj_always_queue(SRC_SOCKET, path);
		signal_always_queue(path);
		ptimer_always_queue(path);
		diag("%s: the matrix in %lld ms", path_name[path],
		     ms_since(start));
	}
	test_ring_threads();
	test_abstime();
	diag("%lld ms in all", ms_since(start));
	return tap_done();
}
