// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_PIPE: pipes and FIFOs, RECV and SEND, every command and flag, broken ends (kevent_pipe(7)).
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/uio.h>

#include "tap.h"
#include "kevent_sys.h"
#include "harness.h"

#define RECV	KEVENT_SOCKET_RECV
#define SEND	KEVENT_SOCKET_SEND
#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)

static struct ukevent pipe_uk(int fd, __u32 event, __u32 req_flags,
			      __u64 ptr)
{
	return fd_ukevent(KEVENT_PIPE, fd, event, req_flags, ptr);
}

/* ADD one entry; the number of entries copied back (0: registered). */
static int add_back(int q, struct ukevent *uk)
{
	return ctl1(q, KEVENT_CTL_ADD, uk);
}

/* Is (fd, ptr) still registered?  REMOVE it and say. */
static int removed_now(int q, int fd, __u64 ptr)
{
	struct ukevent uk = pipe_uk(fd, RECV, 0, ptr);

	if (ctl1(q, KEVENT_CTL_REMOVE, &uk) != 1)
		return -1;
	return uk.ret_flags == KEVENT_RET_DONE;
}

/* Does the queue hold more than n registrations?  REMOVE says EINVAL if not. */
static int holds_more_than(int q, unsigned int n)
{
	struct ukevent uk[8];
	unsigned int i;

	for (i = 0; i <= n && i < 8; i++)
		uk[i] = pipe_uk(-1, RECV, 0, 0xdead0000 + i);
	if (sys_kevent_ctl(q, KEVENT_CTL_REMOVE, n + 1, uk) < 0)
		return errno == EINVAL ? 0 : -1;
	return 1;
}

static void xwrite(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		bail_out("write: %s", strerror(errno));
}

/* Read everything there is (the fd is non-blocking); bytes read. */
static size_t drain(int fd)
{
	char buf[4096];
	size_t total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (size_t)n;
	return total;
}

/* Write pages until the pipe is full (the fd is non-blocking). */
static size_t fill(int fd)
{
	static char page[4096];
	size_t total = 0;
	ssize_t n;

	while ((n = write(fd, page, sizeof(page))) > 0)
		total += (size_t)n;
	return total;
}

/* The two ends of a pipe or of a FIFO, both non-blocking. */
struct ends {
	const char *kind;
	int r, w;
	char path[64];
};

static int fifo_seq;

static void open_ends(struct ends *e, int fifo)
{
	int p[2];

	e->path[0] = '\0';
	if (!fifo) {
		e->kind = "pipe";
		if (pipe2(p, O_NONBLOCK))
			bail_out("pipe2: %s", strerror(errno));
		e->r = p[0];
		e->w = p[1];
		return;
	}
	e->kind = "FIFO";
	snprintf(e->path, sizeof(e->path), "/tmp/kevent-pipe-%d-%d",
		 (int)getpid(), fifo_seq++);
	unlink(e->path);
	if (mkfifo(e->path, 0600))
		bail_out("mkfifo %s: %s", e->path, strerror(errno));
	e->r = open(e->path, O_RDONLY | O_NONBLOCK);
	e->w = open(e->path, O_WRONLY | O_NONBLOCK);
	if (e->r < 0 || e->w < 0)
		bail_out("open %s: %s", e->path, strerror(errno));
}

static void close_ends(struct ends *e)
{
	if (e->r >= 0)
		close(e->r);
	if (e->w >= 0)
		close(e->w);
	if (e->path[0])
		unlink(e->path);
}

static void test_errors(void)
{
	int q = anchored_queue(), fd, sv[2], p[2];
	char path[] = "/tmp/kevent-pipe-file-XXXXXX";
	static const __u32 bad_events[] = {
		0, KEVENT_SOCKET_ACCEPT, RECV | KEVENT_SOCKET_ACCEPT, 0x8,
		0x80000000U,
	};
	struct ukevent uk;
	unsigned int i;

	uk = pipe_uk(999, RECV, 0, 1);
	is_int(add_back(q, &uk), 1, "a closed fd is copied back");
	is_ukevent(&uk, UKEV(.ret_flags = BROKEN_DONE,
			     .ret_data = { 0, (__u32)-EBADF }),
		   UK_RET_FLAGS | UK_RET_DATA1,
		   "a closed fd: BROKEN|DONE, EBADF in the entry "
		   "[kevent_pipe.7 EBADF]");

	fd = mkstemp(path);
	unlink(path);
	uk = pipe_uk(fd, RECV, 0, 1);
	is_int(add_back(q, &uk), 1, "a regular file is copied back");
	ok(uk.ret_flags == BROKEN_DONE && (int)uk.ret_data[1] == -EINVAL,
	   "a regular file: EINVAL [kevent_pipe.7 EINVAL not-pipe] "
	   "[kevent_ctl.2 EINVAL type-check]");
	close(fd);

	fd = open("/dev/null", O_RDWR);
	uk = pipe_uk(fd, SEND, 0, 1);
	is_int(add_back(q, &uk), 1, "/dev/null is copied back");
	ok(uk.ret_flags == BROKEN_DONE && (int)uk.ret_data[1] == -EINVAL,
	   "/dev/null: EINVAL [kevent_pipe.7 EINVAL not-pipe]");
	close(fd);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		bail_out("socketpair: %s", strerror(errno));
	uk = pipe_uk(sv[0], RECV, 0, 1);
	is_int(add_back(q, &uk), 1, "a socket is copied back");
	ok(uk.ret_flags == BROKEN_DONE && (int)uk.ret_data[1] == -EINVAL,
	   "a socket: EINVAL [kevent_pipe.7 EINVAL not-pipe]");
	close(sv[0]);
	close(sv[1]);

	uk = pipe_uk(q, RECV, 0, 1);
	is_int(add_back(q, &uk), 1, "a kevent queue is copied back");
	ok((int)uk.ret_data[1] == -EINVAL, "a kevent queue: EINVAL "
	   "[kevent_pipe.7 EINVAL not-pipe]");

	if (pipe(p))
		bail_out("pipe");
	for (i = 0; i < sizeof(bad_events) / sizeof(bad_events[0]); i++) {
		uk = pipe_uk(p[0], bad_events[i], 0, 1);
		is_int(add_back(q, &uk), 1, "event %#x is copied back",
		       bad_events[i]);
		ok(uk.ret_flags == BROKEN_DONE &&
		   (int)uk.ret_data[1] == -EINVAL, "event %#x: EINVAL "
		   "[kevent_pipe.7 EINVAL event]", bad_events[i]);
	}

	is_int(add1(q, pipe_uk(p[0], RECV, 0, 2)), 0, "RECV registered");
	uk = pipe_uk(p[0], SEND, 0, 2);
	is_int(add_back(q, &uk), 1, "the same id and ptr again, other bits");
	ok(uk.ret_flags == BROKEN_DONE && (int)uk.ret_data[1] == -EEXIST,
	   "... EEXIST [kevent_pipe.7 EEXIST]");
	is_int(add1(q, pipe_uk(p[1], RECV, 0, 2)), 0,
	   "the other end of the same pipe is another id");
	close(p[0]);
	close(p[1]);
	close(q);
}

/* RECV: level triggered (no flags), ready at ADD, ALWAYS_QUEUE. */
static void test_recv(int fifo)
{
	int q = anchored_queue();
	struct ends e;
	struct ukevent uk;

	open_ends(&e, fifo);
	is_int(add1(q, pipe_uk(e.r, RECV, 0, 10)), 0,
	       "%s: RECV registered on an empty pipe", e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: RECV not ready while empty",
	       e.kind);
	xwrite(e.w, "abc", 3);
	is_int(wait1(q, &uk, 2000), 1, "%s: a write makes RECV ready",
	       e.kind);
	is_ukevent(&uk, UKEV(.type = KEVENT_PIPE, .id.raw = { (__u32)e.r, 0 },
			     .event = RECV, .ret_flags = KEVENT_RET_DONE,
			     .ptr = 10),
		   UK_KEY | UK_EVENT | UK_RET_FLAGS,
		   "%s: reported with DONE, its id, event and ptr", e.kind);
	is_int(harvest(q, &uk, 1), 1,
	       "%s: level triggered: reported again while data remain",
	       e.kind);
	is_int(drain(e.r), 3, "%s: the 3 bytes are there", e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: not reported once drained",
	       e.kind);

	xwrite(e.w, "d", 1);
	is_int(wait1(q, &uk, 2000), 1, "%s: ready again at the next write",
	       e.kind);

	uk = pipe_uk(e.r, RECV, 0, 11);
	is_int(add_back(q, &uk), 1,
	       "%s: RECV ready at ADD is copied back", e.kind);
	ok(uk.ret_flags == KEVENT_RET_DONE,
	   "%s: ... with DONE and not BROKEN (%#x)", e.kind, uk.ret_flags);
	is_int(removed_now(q, e.r, 11), 0, "%s: ... and not kept", e.kind);

	is_int(add1(q, pipe_uk(e.r, RECV, KEVENT_REQ_ALWAYS_QUEUE, 12)), 0,
	       "%s: with ALWAYS_QUEUE it is kept", e.kind);
	is_int(removed_now(q, e.r, 10), 1, "(first registration removed)");
	is_int(harvest(q, &uk, 1), 1, "%s: ALWAYS_QUEUE: queued ready",
	       e.kind);
	is_int(uk.ptr, 12, "%s: ALWAYS_QUEUE: the kept registration",
	       e.kind);
	close_ends(&e);
	close(q);
}

/* SEND: ready with room, not when full, ready when a read makes room. */
static void test_send(int fifo)
{
	int q = anchored_queue();
	struct ends e;
	struct ukevent uk;
	char page[4096];

	open_ends(&e, fifo);
	uk = pipe_uk(e.w, SEND, 0, 20);
	is_int(add_back(q, &uk), 1,
	       "%s: SEND on a pipe with room is ready at ADD", e.kind);
	ok(uk.ret_flags == KEVENT_RET_DONE, "%s: ... copied back with DONE",
	   e.kind);
	ok(fill(e.w) > 0, "%s: filled", e.kind);
	is_int(add1(q, pipe_uk(e.w, SEND, 0, 20)), 0,
	       "%s: SEND on a full pipe is registered", e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: SEND not ready while full",
	       e.kind);
	is_int(read(e.r, page, 100), 100, "%s: read 100 bytes", e.kind);
	is_int(harvest(q, &uk, 1), 0,
	       "%s: a partial read frees no slot: still not ready", e.kind);
	is_int(read(e.r, page, sizeof(page) - 100), sizeof(page) - 100,
	       "%s: read the rest of the first page", e.kind);
	is_int(wait1(q, &uk, 2000), 1, "%s: SEND ready once a slot is free",
	       e.kind);
	ok(uk.ret_flags == KEVENT_RET_DONE && uk.event == SEND &&
	   uk.ptr == 20, "%s: ... reported with DONE and its data", e.kind);
	ok(write(e.w, page, sizeof(page)) == sizeof(page),
	   "%s: the room is real: a page can be written", e.kind);
	is_int(harvest(q, &uk, 1), 0,
	       "%s: level triggered: dropped once full again", e.kind);
	close_ends(&e);
	close(q);
}

/* ET, ONESHOT, MODIFY, REMOVE, READY. */
static void test_flags_cmds(int fifo)
{
	int q = anchored_queue();
	struct ends e;
	struct ukevent uk;

	open_ends(&e, fifo);

	setup_add(q, pipe_uk(e.r, RECV, KEVENT_REQ_ET, 30));
	xwrite(e.w, "a", 1);
	is_int(wait1(q, &uk, 2000), 1, "%s: ET: a write reports RECV",
	       e.kind);
	is_int(harvest(q, &uk, 1), 0,
	       "%s: ET: not again while the data wait", e.kind);
	xwrite(e.w, "b", 1);
	is_int(wait1(q, &uk, 2000), 1, "%s: ET: the next write reports again",
	       e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: ET: once", e.kind);
	is_int(removed_now(q, e.r, 30), 1, "%s: ET: still registered", e.kind);
	drain(e.r);

	setup_add(q, pipe_uk(e.r, RECV, KEVENT_REQ_ONESHOT, 31));
	xwrite(e.w, "c", 1);
	is_int(wait1(q, &uk, 2000), 1, "%s: ONESHOT: reported", e.kind);
	xwrite(e.w, "d", 1);
	is_int(harvest(q, &uk, 1), 0, "%s: ONESHOT: not again", e.kind);
	is_int(removed_now(q, e.r, 31), 0, "%s: ONESHOT: removed", e.kind);
	drain(e.r);

	/* MODIFY from RECV to SEND on an empty pipe: ready at once. */
	setup_add(q, pipe_uk(e.r, RECV, 0, 32));
	is_int(harvest(q, &uk, 1), 0, "%s: MODIFY: RECV not ready", e.kind);
	uk = pipe_uk(e.r, SEND, 0, 32);
	is_int(ctl1(q, KEVENT_CTL_MODIFY, &uk), 1, "%s: MODIFY returns num",
	       e.kind);
	ok(uk.ret_flags == KEVENT_RET_DONE, "%s: MODIFY: DONE", e.kind);
	is_int(harvest(q, &uk, 1), 1,
	       "%s: MODIFY to SEND: ready at once, the pipe has room", e.kind);
	ok(uk.event == SEND, "%s: MODIFY: reported with the new event",
	   e.kind);
	uk = pipe_uk(e.r, RECV, KEVENT_REQ_ET, 32);
	must(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 &&
	     uk.ret_flags == KEVENT_RET_DONE, "MODIFY back to RECV|ET");
	while (harvest(q, &uk, 1) > 0)
		;
	xwrite(e.w, "e", 1);
	is_int(wait1(q, &uk, 2000), 1, "%s: MODIFY back to RECV|ET: a write "
	       "reports it", e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: ... once (ET)", e.kind);

	/* READY forces a report of a registration that is not ready. */
	drain(e.r);
	uk = pipe_uk(e.r, RECV, 0, 32);
	is_int(ctl1(q, KEVENT_CTL_READY, &uk), 0, "%s: READY", e.kind);
	is_int(harvest(q, &uk, 1), 1,
	       "%s: READY: reported though the pipe is empty", e.kind);
	ok(uk.ret_flags == KEVENT_RET_DONE && uk.ptr == 32,
	   "%s: READY: with DONE", e.kind);

	/* REMOVE drops a pending event and stops notifications. */
	xwrite(e.w, "f", 1);
	uk = pipe_uk(e.r, RECV, 0, 32);
	is_int(ctl1(q, KEVENT_CTL_REMOVE, &uk), 1, "%s: REMOVE returns num",
	       e.kind);
	ok(uk.ret_flags == KEVENT_RET_DONE, "%s: REMOVE: DONE", e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: REMOVE dropped the pending event",
	       e.kind);
	xwrite(e.w, "g", 1);
	is_int(harvest(q, &uk, 1), 0, "%s: REMOVE: later writes report "
	       "nothing", e.kind);
	uk = pipe_uk(e.r, RECV, 0, 32);
	is_int(ctl1(q, KEVENT_CTL_REMOVE, &uk), 1, "%s: REMOVE again",
	       e.kind);
	ok(uk.ret_flags == BROKEN_DONE && (int)uk.ret_data[1] == -ENOENT,
	   "%s: REMOVE again: ENOENT [kevent_ctl.2 ENOENT]", e.kind);

	/* SEND and RECV in one registration. */
	drain(e.r);
	uk = pipe_uk(e.w, RECV | SEND, KEVENT_REQ_ET, 33);
	is_int(add_back(q, &uk), 1, "%s: RECV|SEND: ready at ADD by SEND",
	       e.kind);
	close_ends(&e);
	close(q);
}

struct waiter {
	int q;
	pid_t tid;
	int ret;
	long long ended_ns;
};

static void *waiter_thread(void *arg)
{
	struct waiter *w = arg;
	struct ukevent uk;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	w->ret = sys_kevent_get_events(w->q, 1, 1, TSP(3, 0), &uk, 0);
	w->ended_ns = now_ns();
	return NULL;
}

/*
 * Two threads wait on one queue for a one-event ET registration: a write
 * wakes one of them, or both with WAKEUP_ALL.  A thread counts as woken if
 * it returned within 1 s of the write; one that timed out returns later,
 * unless the threads took more than 2 s of their 3 s timeout to fall
 * asleep.
 */
static void test_wakeup(__u32 flags)
{
	int q = anchored_queue(), p[2], i, early = 0, events = 0;
	long long written;
	struct waiter w[2];
	pthread_t th[2];
	const char *what = flags & KEVENT_REQ_WAKEUP_ALL ? "WAKEUP_ALL" :
							    "no WAKEUP_ALL";

	if (pipe(p))
		bail_out("pipe");
	setup_add(q, pipe_uk(p[0], RECV, KEVENT_REQ_ET | flags, 40));
	for (i = 0; i < 2; i++) {
		w[i].q = q;
		w[i].tid = 0;
		pthread_create(&th[i], NULL, waiter_thread, &w[i]);
	}
	for (i = 0; i < 2; i++) {
		while (!__atomic_load_n(&w[i].tid, __ATOMIC_SEQ_CST))
			msleep(1);
		if (!wait_sleeping(w[i].tid, 2000))
			bail_out("waiter %d does not sleep", i);
	}
	written = now_ns();
	xwrite(p[1], "x", 1);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		if (w[i].ended_ns - written < 1000000000LL)
			early++;
		if (w[i].ret == 1)
			events++;
	}
	is_int(events, 1, "%s: one thread takes the event", what);
	is_int(early, flags & KEVENT_REQ_WAKEUP_ALL ? 2 : 1,
	       "%s: %s woken", what,
	       flags & KEVENT_REQ_WAKEUP_ALL ? "both threads are" :
					       "only one thread is");
	close(p[0]);
	close(p[1]);
	close(q);
}

/* Two queues watching one pipe are both notified. */
static void test_two_queues(void)
{
	int q1 = anchored_queue(), q2 = anchored_queue(), p[2];
	struct ukevent uk;

	if (pipe(p))
		bail_out("pipe");
	setup_add(q1, pipe_uk(p[0], RECV, KEVENT_REQ_ET, 50));
	setup_add(q2, pipe_uk(p[0], RECV, KEVENT_REQ_ET, 51));
	xwrite(p[1], "x", 1);
	is_int(wait1(q1, &uk, 2000), 1, "two queues: the first is notified");
	is_int(uk.ptr, 50, "two queues: with its registration");
	is_int(wait1(q2, &uk, 2000), 1, "two queues: the second too");
	is_int(uk.ptr, 51, "two queues: with its registration");
	close(p[0]);
	close(p[1]);
	close(q1);
	close(q2);
}

/*
 * A pipe's reads notify SEND and its writes RECV whether or not anything
 * watches them, and a registration may ask for more bits at MODIFY, or
 * leave a pipe that another still watches: whatever the pipe's other
 * registrations asked for, each hears what it asks for now.
 */
static void test_bits_asked(void)
{
	int q1 = anchored_queue(), q2 = anchored_queue(), p[2];
	struct ukevent uk;

	if (pipe2(p, O_NONBLOCK))
		bail_out("pipe2");
	setup_add(q1, pipe_uk(p[1], RECV, KEVENT_REQ_ET, 60));
	fill(p[1]);
	drain(p[0]);
	fill(p[1]);
	while (harvest(q1, &uk, 1) > 0)
		;
	uk = pipe_uk(p[1], SEND, KEVENT_REQ_ET, 60);
	must(ctl1(q1, KEVENT_CTL_MODIFY, &uk) == 1 &&
	     uk.ret_flags == KEVENT_RET_DONE, "MODIFY from RECV to SEND");
	is_int(harvest(q1, &uk, 1), 0,
	       "MODIFY from RECV to SEND on a full pipe: not ready");
	ok(drain(p[0]) > 0, "the reader empties the full pipe");
	is_int(wait1(q1, &uk, 2000), 1,
	       "MODIFY from RECV to SEND: the read that makes room reports it");
	ok(uk.ptr == 60 && uk.event == SEND,
	   "MODIFY from RECV to SEND: with the registration and SEND");

	setup_add(q2, pipe_uk(p[0], RECV, KEVENT_REQ_ET, 61));
	uk = pipe_uk(p[1], SEND, 0, 60);
	must(ctl1(q1, KEVENT_CTL_REMOVE, &uk) == 1 &&
	     uk.ret_flags == KEVENT_RET_DONE, "REMOVE the SEND registration");
	xwrite(p[1], "h", 1);
	is_int(wait1(q2, &uk, 2000), 1,
	       "the RECV registration left alone on a pipe hears a write");
	is_int(uk.ptr, 61, "... with its registration");
	drain(p[0]);
	is_int(harvest(q2, &uk, 1), 0,
	       "a read reports nothing to a registration that asks for RECV");
	close(p[0]);
	close(p[1]);
	close(q1);
	close(q2);
}

/* Count reports in the next harvest that are BROKEN with err and ptr. */
static int broken_reports(int q, int err, __u64 ptr, int *others)
{
	struct ukevent uk[8];
	int n = harvest(q, uk, 8), i, hits = 0;

	*others = 0;
	for (i = 0; i < n; i++) {
		if (uk[i].ret_flags == BROKEN_DONE &&
		    (int)uk[i].ret_data[1] == -err && uk[i].ptr == ptr)
			hits++;
		else
			(*others)++;
	}
	return hits;
}

/* The last writer or the last reader gone: BROKEN with EPIPE, once. */
static void test_broken_ends(int fifo)
{
	int q = anchored_queue(), others, n, broken;
	struct ends e;
	struct ukevent uk;

	/* Writer gone, pipe empty: RECV broken at once. */
	open_ends(&e, fifo);
	setup_add(q, pipe_uk(e.r, RECV, 0, 60));
	close(e.w);
	e.w = -1;
	is_int(broken_reports(q, EPIPE, 60, &others), 1,
	       "%s: last writer gone: RECV reported BROKEN with EPIPE",
	       e.kind);
	is_int(others, 0, "%s: ... and nothing else", e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: ... once", e.kind);
	is_int(removed_now(q, e.r, 60), 0, "%s: ... and removed", e.kind);
	uk = pipe_uk(e.r, RECV, 0, 61);
	is_int(add_back(q, &uk), 1, "%s: RECV added after the writer left is "
	       "copied back [kevent_pipe.7 EPIPE closed-end]", e.kind);
	is_ukevent(&uk, UKEV(.ret_flags = BROKEN_DONE,
			     .ret_data = { 0, (__u32)-EPIPE }),
		   UK_RET_FLAGS | UK_RET_DATA1,
		   "%s: ... BROKEN with EPIPE [kevent_pipe.7 EPIPE closed-end]",
		   e.kind);
	close_ends(&e);

	/* Writer gone, data left: ready until read, then broken. */
	open_ends(&e, fifo);
	setup_add(q, pipe_uk(e.r, RECV, KEVENT_REQ_ET, 62));
	xwrite(e.w, "xy", 2);
	is_int(wait1(q, &uk, 2000), 1, "%s: ET RECV reported", e.kind);
	close(e.w);
	e.w = -1;
	/* The writer's close is a change (ET): whatever it reports. */
	for (n = broken = 0; n < 16 && harvest(q, &uk, 1) > 0; n++)
		broken += !!(uk.ret_flags & KEVENT_RET_BROKEN);
	ok(n < 16 && !broken,
	   "%s: writer gone, data left: not broken yet (%d reports, %d broken)",
	   e.kind, n, broken);
	is_int(read(e.r, &uk, 1), 1, "%s: read one byte of two", e.kind);
	is_int(broken_reports(q, EPIPE, 62, &others), 0,
	       "%s: data left: still not broken", e.kind);
	is_int(read(e.r, &uk, 1), 1, "%s: read the last byte", e.kind);
	is_int(broken_reports(q, EPIPE, 62, &others), 1,
	       "%s: the read that empties it reports BROKEN with EPIPE",
	       e.kind);
	is_int(harvest(q, &uk, 1), 0, "%s: ... once", e.kind);
	close_ends(&e);
	close(q);
}

/* The last reader gone: SEND broken at once, full or not. */
static void test_reader_gone(int fifo)
{
	int q = anchored_queue(), i, n, hits = 0, others = 0;
	struct ends e;
	struct ukevent uk[8];

	open_ends(&e, fifo);
	/* Ready at ADD (the pipe has room): kept by ALWAYS_QUEUE. */
	is_int(add1(q, pipe_uk(e.w, SEND,
			       KEVENT_REQ_ET | KEVENT_REQ_ALWAYS_QUEUE, 63)), 0,
	       "%s: SEND|ET|ALWAYS_QUEUE registered on an empty pipe", e.kind);
	is_int(harvest(q, uk, 8), 1, "%s: ... and queued ready", e.kind);
	fill(e.w);
	setup_add(q, pipe_uk(e.w, SEND, 0, 64));
	is_int(harvest(q, uk, 8), 0, "%s: full: SEND not ready", e.kind);
	close(e.r);
	e.r = -1;
	n = harvest(q, uk, 8);
	for (i = 0; i < n; i++) {
		if (uk[i].ret_flags == BROKEN_DONE &&
		    (int)uk[i].ret_data[1] == -EPIPE &&
		    (uk[i].ptr == 63 || uk[i].ptr == 64))
			hits++;
		else
			others++;
	}
	is_int(hits, 2, "%s: last reader gone: both SEND registrations "
	       "reported BROKEN with EPIPE", e.kind);
	is_int(others, 0, "%s: ... and nothing else", e.kind);
	is_int(harvest(q, uk, 8), 0, "%s: ... once", e.kind);
	is_int(holds_more_than(q, 1), 0, "%s: ... and removed", e.kind);
	close_ends(&e);
	close(q);
}

/*
 * Both ends closed while registered: each registration is reported once,
 * BROKEN, and removed; 1000 times, with no registration left behind.
 */
static void test_close_both(void)
{
	int q = anchored_queue(), i, j, n, bad = 0, total = 0;
	struct ends e;
	struct ukevent uk[8];

	for (i = 0; i < 1000; i++) {
		open_ends(&e, i % 4 == 3);
		if (add1(q, pipe_uk(e.r, RECV, KEVENT_REQ_ET, 2 * i)) ||
		    add1(q, pipe_uk(e.w, SEND,
				    KEVENT_REQ_ET | KEVENT_REQ_ALWAYS_QUEUE,
				    2 * i + 1))) {
			bad++;
			break;
		}
		while (harvest(q, uk, 8) > 0)
			;
		if (i % 2) {
			close(e.r);
			close(e.w);
		} else {
			close(e.w);
			close(e.r);
		}
		e.r = e.w = -1;
		close_ends(&e);
		n = harvest(q, uk, 8);
		total += n;
		if (n != 2)
			bad++;
		for (j = 0; j < n; j++) {
			int err = -(int)uk[j].ret_data[1];

			if (uk[j].ret_flags != BROKEN_DONE ||
			    uk[j].ptr / 2 != (__u64)i ||
			    (err != EPIPE && err != EBADF))
				bad++;
		}
		if (harvest(q, uk, 8))
			bad++;
	}
	is_int(total, 2000, "both ends closed, 1000 times: 2000 reports");
	is_int(bad, 0, "... each BROKEN (EPIPE or EBADF), once, with its ptr");
	is_int(holds_more_than(q, 1), 0,
	       "... and every registration is gone (only the anchor left)");
	close(q);
}

/* The pipe, not the descriptor number, is watched. */
static void test_reused_fd(void)
{
	int q = anchored_queue(), p[2], p2[2], num;
	struct ukevent uk[4];

	if (pipe2(p, O_NONBLOCK))
		bail_out("pipe");
	num = p[0];
	setup_add(q, pipe_uk(num, RECV, 0, 70));
	close(p[0]);
	is_int(harvest(q, uk, 4), 0,
	       "read end closed, writer still open: RECV neither ready nor "
	       "broken");
	if (pipe2(p2, O_NONBLOCK))
		bail_out("pipe");
	if (p2[0] != num) {
		dup2(p2[0], num);
		close(p2[0]);
		p2[0] = num;
	}
	xwrite(p2[1], "new", 3);
	is_int(harvest(q, uk, 4), 0,
	       "a new pipe at the same number: its data are not reported");
	is_int(removed_now(q, num, 70), 1,
	       "the old registration still watches the old pipe");

	is_int(drain(num), 3, "the new pipe's data are read");
	is_int(add1(q, pipe_uk(num, RECV, KEVENT_REQ_ET, 71)), 0,
	       "a registration of the new pipe at the number");
	close(p2[0]);
	close(p2[1]);
	is_int(harvest(q, uk, 4), 1, "new pipe closed: its registration is "
	       "reported");
	ok(uk[0].ptr == 71 && uk[0].ret_flags == BROKEN_DONE &&
	   (int)uk[0].ret_data[1] == -EBADF,
	   "... BROKEN with EBADF: the pipe went away (%d)",
	   (int)uk[0].ret_data[1]);
	if (pipe2(p2, O_NONBLOCK))
		bail_out("pipe");
	xwrite(p2[1], "again", 5);
	is_int(harvest(q, uk, 4), 0,
	       "a third pipe at the number: nothing stale is reported");
	close(p2[0]);
	close(p2[1]);
	close(p[1]);
	close(q);
}

/* A FIFO reader that opened before any writer is not broken by it. */
static void test_fifo_no_writer_yet(void)
{
	int q = anchored_queue(), r, w;
	char path[64];
	struct ukevent uk;

	snprintf(path, sizeof(path), "/tmp/kevent-pipe-%d-early",
		 (int)getpid());
	unlink(path);
	if (mkfifo(path, 0600))
		bail_out("mkfifo: %s", strerror(errno));
	r = open(path, O_RDONLY | O_NONBLOCK);
	is_int(add1(q, pipe_uk(r, RECV, 0, 80)), 0,
	       "FIFO without a writer yet: RECV registered, not broken");
	is_int(harvest(q, &uk, 1), 0, "FIFO without a writer yet: quiet");
	w = open(path, O_WRONLY | O_NONBLOCK);
	xwrite(w, "hi", 2);
	is_int(wait1(q, &uk, 2000), 1, "FIFO: a writer's data are reported");
	ok(uk.ret_flags == KEVENT_RET_DONE, "FIFO: ready, not broken");
	drain(r);
	close(w);
	is_int(wait1(q, &uk, 2000), 1, "FIFO: the writer leaves");
	ok(uk.ret_flags == BROKEN_DONE && (int)uk.ret_data[1] == -EPIPE,
	   "FIFO: after a writer came and went: BROKEN with EPIPE");
	close(r);
	unlink(path);
	close(q);
}

/* Wait up to 2 s for events; is one of them ptr's? */
static int reported(int q, __u64 ptr)
{
	struct ukevent uk[8];
	int n = sys_kevent_get_events(q, 1, 8, TSP(2, 0), uk, 0), i;

	for (i = 0; i < n; i++)
		if (uk[i].ptr == ptr && uk[i].ret_flags == KEVENT_RET_DONE)
			return 1;
	return 0;
}

/* splice, vmsplice and tee move data too; F_SETPIPE_SZ notifies. */
static void test_splice(void)
{
	int q = anchored_queue(), a[2], b[2];
	struct ukevent uk;
	struct iovec iov = { .iov_base = "vmsplice", .iov_len = 8 };

	if (pipe2(a, O_NONBLOCK) || pipe2(b, O_NONBLOCK))
		bail_out("pipe");
	setup_add(q, pipe_uk(a[0], RECV, KEVENT_REQ_ET, 90));
	is_int(vmsplice(a[1], &iov, 1, 0), 8, "vmsplice 8 bytes into a pipe");
	is_int(wait1(q, &uk, 2000), 1, "vmsplice: RECV reported");

	setup_add(q, pipe_uk(b[0], RECV, KEVENT_REQ_ET, 91));
	is_int(tee(a[0], b[1], 4, SPLICE_F_NONBLOCK), 4,
	       "tee 4 bytes into a second pipe");
	is_int(wait1(q, &uk, 2000), 1, "tee: RECV reported");
	is_int(uk.ptr, 91, "tee: on the second pipe");
	drain(b[0]);

	is_int(splice(a[0], NULL, b[1], NULL, 8, SPLICE_F_NONBLOCK), 8,
	       "splice 8 bytes from pipe to pipe");
	is_int(wait1(q, &uk, 2000), 1, "splice: RECV reported");
	is_int(uk.ptr, 91, "splice: on the destination");
	is_int(harvest(q, &uk, 1), 0, "splice: once");

	fill(a[1]);
	while (harvest(q, &uk, 1) > 0)
		;
	setup_add(q, pipe_uk(a[1], SEND, KEVENT_REQ_ET, 92));
	is_int(harvest(q, &uk, 1), 0, "full pipe: SEND not ready");
	drain(b[0]);
	is_int(splice(a[0], NULL, b[1], NULL, 4096, SPLICE_F_NONBLOCK), 4096,
	       "splice a page out of the full pipe");
	ok(reported(q, 92), "splice out: SEND reported on the source");

	fill(a[1]);
	while (harvest(q, &uk, 1) > 0)
		;
	ok(fcntl(a[1], F_SETPIPE_SZ, 32 * 4096) >= 32 * 4096,
	   "F_SETPIPE_SZ grows the full pipe");
	ok(reported(q, 92), "F_SETPIPE_SZ: SEND reported on the grown pipe");

	/* A resize notifies both ways: the data are reported again, ET. */
	setup_add(q, pipe_uk(a[0], RECV,
			     KEVENT_REQ_ET | KEVENT_REQ_ALWAYS_QUEUE, 93));
	ok(reported(q, 93), "RECV queued at ADD on the pipe with data");
	is_int(harvest(q, &uk, 1), 0, "RECV: once, edge-triggered");
	ok(fcntl(a[1], F_SETPIPE_SZ, 16 * 4096) >= 16 * 4096,
	   "F_SETPIPE_SZ shrinks the pipe around its data");
	ok(reported(q, 93),
	   "F_SETPIPE_SZ: RECV reported again on the resized pipe");
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	close(q);
}

/*
 * A splice from a pipe into a full socket sleeps with the pipe's mutex
 * held.  The pipe's kevents neither wait for it nor, for the first one,
 * wait for it unkillably.
 */
struct splicer {
	int pipe_r;
	int sock;
	size_t len;
	pid_t tid;
};

static void *splice_thread(void *arg)
{
	struct splicer *sp = arg;

	__atomic_store_n(&sp->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	splice(sp->pipe_r, NULL, sp->sock, NULL, sp->len, 0);
	return NULL;
}

/* Wait up to 2 s for the state letter; 1 if it came. */
static int reaches_state(const char *dir, pid_t id, char want)
{
	long long start = now_ns();

	while (ms_since(start) < 2000) {
		if (proc_state(dir, id) == want)
			return 1;
		msleep(1);
	}
	return 0;
}

/*
 * A full pipe, a splicer asleep in it, its mutex held; if q >= 0, the
 * pipe is watched in q before.  The pipe holds far more than the socket
 * can take: a locked send buffer cannot grow, and the peer does not read,
 * so its receive buffer cannot grow either.  Were the socket merely full
 * now, ACKs could grow its send buffer and let the splice through.
 */
static void start_splicer(int p[2], int s[2], int q, struct splicer *sp,
			  pthread_t *th)
{
	static char page[4096];
	int sndbuf = 4096;
	size_t len = 0;

	if (pipe2(p, O_NONBLOCK))
		bail_out("pipe2: %s", strerror(errno));
	if (fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < 0)
		bail_out("F_SETPIPE_SZ: %s", strerror(errno));
	/* UNIX stream sockets take spliced pages without a limit; TCP waits. */
	tcp_pair(s);
	must(!setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)),
	     "SO_SNDBUF: %s", strerror(errno));
	if (q >= 0)
		setup_add(q, pipe_uk(p[0], SEND, KEVENT_REQ_ALWAYS_QUEUE, 1));
	while (write(p[1], page, sizeof(page)) > 0)
		len += sizeof(page);
	fcntl(p[0], F_SETFL, 0);
	*sp = (struct splicer){ .pipe_r = p[0], .sock = s[0], .len = len };
	if (pthread_create(th, NULL, splice_thread, sp))
		bail_out("pthread_create");
	while (!__atomic_load_n(&sp->tid, __ATOMIC_ACQUIRE))
		msleep(1);
	must(reaches_state("/proc/self/task", sp->tid, 'S'),
	     "the splice sleeps on the full socket");
}

/* Let the splice end: read the socket until the thread is gone. */
static void stop_splicer(int p[2], int s[2], pthread_t th)
{
	char buf[65536];

	fcntl(s[1], F_SETFL, O_NONBLOCK);
	for (;;) {
		while (read(s[1], buf, sizeof(buf)) > 0)
			;
		if (!timed_join(th, now_ns() + 10000000LL))
			break;
	}
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
}

static int splice_pipe = -1;

static int add_during_splice(void *arg)
{
	struct ukevent uk = pipe_uk(splice_pipe, RECV, 0, 2);
	int q = sys_kevent_init(NULL, 0, 0);

	(void)arg;
	return q < 0 || add_back(q, &uk) != 1;
}

static void test_splice_holds_mutex(void)
{
	struct splicer sp;
	int p[2], s[2], q = anchored_queue(), st = -1;
	long long start;
	pthread_t th;
	pid_t pid;

	diag("a splice into a full socket holds the pipe's mutex");
	start_splicer(p, s, -1, &sp, &th);
	splice_pipe = p[0];
	/* The first ADD of a pipe waits for its mutex, but killably. */
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (!pid)
		_exit(add_during_splice(NULL));
	must(reaches_state("/proc", pid, 'D'), "the first ADD waits");
	kill(pid, SIGKILL);
	start = now_ns();
	while (waitpid(pid, &st, WNOHANG) != pid && ms_since(start) < 2000)
		msleep(1);
	ok(ms_since(start) < 2000 && WIFSIGNALED(st),
	   "the first ADD of a pipe whose mutex a splice holds ends with "
	   "SIGKILL (status %#x)", st);
	stop_splicer(p, s, th);
	if (waitpid(pid, &st, WNOHANG) == 0)
		waitpid(pid, &st, 0);

	start_splicer(p, s, q, &sp, &th);
	splice_pipe = p[0];
	bounded(add_during_splice, NULL, 2000,
		"a later ADD of the same pipe does not wait for the splice");
	stop_splicer(p, s, th);
	close(q);
}

/*
 * The first ADD of a pipe whose mutex a splice holds waits for it, but
 * without its queue: a harvest with a zero timeout, and an ADD of
 * another pipe, return meanwhile, and the first ADD registers once the
 * splice lets the pipe go.
 */
struct first_adder {
	int q;
	struct ukevent uk;
	int ret;
	pid_t tid;
};

static void *first_add_thread(void *arg)
{
	struct first_adder *a = arg;

	__atomic_store_n(&a->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	a->ret = add_back(a->q, &a->uk);
	return NULL;
}

static int harvest_at_once(void *arg)
{
	struct ukevent uk;

	return harvest(*(int *)arg, &uk, 1) != 1 || uk.ptr != 4;
}

static int add_other_pipe(void *arg)
{
	struct ukevent uk;
	int x[2];

	if (pipe(x))
		return 1;
	uk = pipe_uk(x[0], RECV, 0, 3);
	return add_back(*(int *)arg, &uk) != 0;
}

static void test_first_add_frees_queue(void)
{
	struct first_adder a = { .q = anchored_queue() };
	int p[2], s[2], x[2], r, w;
	struct ukevent uk;
	struct splicer sp;
	pthread_t th, at;

	diag("the first ADD of a busy pipe waits without its queue");
	/* Ready and level-triggered: a harvest takes the queue's mutex. */
	must(!pipe(x) && write(x[1], "x", 1) == 1, "a pipe with data: %s",
	     strerror(errno));
	uk = pipe_uk(x[0], RECV, KEVENT_REQ_ALWAYS_QUEUE, 4);
	must(add_back(a.q, &uk) == 0, "its RECV queued ready");
	start_splicer(p, s, -1, &sp, &th);
	/* The adder's ends outlive stop_splicer(): its ADD runs after. */
	r = dup(p[0]);
	w = dup(p[1]);
	must(r >= 0 && w >= 0, "dup: %s", strerror(errno));
	a.uk = pipe_uk(r, RECV, KEVENT_REQ_ALWAYS_QUEUE, 2);
	if (pthread_create(&at, NULL, first_add_thread, &a))
		bail_out("pthread_create");
	while (!__atomic_load_n(&a.tid, __ATOMIC_ACQUIRE))
		msleep(1);
	must(reaches_state("/proc/self/task", a.tid, 'D'),
	     "the first ADD waits for the pipe's mutex");
	bounded(harvest_at_once, &a.q, 2000,
		"meanwhile a harvest of its queue with a zero timeout returns");
	bounded(add_other_pipe, &a.q, 2000,
		"meanwhile an ADD of another pipe to its queue returns");
	stop_splicer(p, s, th);
	ok(!timed_join(at, now_ns() + 10000000000LL) && a.ret == 0,
	   "the first ADD registers once the splice ends (%d copied back)",
	   a.ret);
	is_int(removed_now(a.q, r, 2), 1, "its registration is there");
	close(r);
	close(w);
	close(x[0]);
	close(x[1]);
	close(a.q);
}

int main(void)
{
	int fifo;

	plan(224);
	kevent_require();
	tap_watchdog(60);
	test_errors();
	for (fifo = 0; fifo < 2; fifo++) {
		test_recv(fifo);
		test_send(fifo);
		test_flags_cmds(fifo);
		test_broken_ends(fifo);
		test_reader_gone(fifo);
	}
	test_wakeup(0);
	test_wakeup(KEVENT_REQ_WAKEUP_ALL);
	test_two_queues();
	test_bits_asked();
	test_fifo_no_writer_yet();
	test_close_both();
	test_reused_fd();
	test_splice();
	test_splice_holds_mutex();
	test_first_add_frees_queue();
	return tap_done();
}
