// SPDX-License-Identifier: GPL-2.0
/*
 * Description: security: nothing copied to user space carries kernel
 * memory; userspace cannot add KEVENT_POSIX_TIMER; a process neither
 * watches nor takes another process's signals, nor after exec; a ring
 * queue is refused (EPERM) to every other address space.
 *
 * Uninitialised memory: every buffer, copy-back array and ring is
 * filled with 0xa5 first; every byte of every ukevent the kernel writes
 * must then be a documented value of its field or the caller's own data,
 * the bytes it does not write must still be 0xa5, and struct
 * kevent_abi's reserved fields are 0.  The events cover every source, a
 * BROKEN one, a forced one (KEVENT_CTL_READY), per-entry errors and
 * entries ready at ADD.
 *
 * Signals (decisions.md 7 and 16): a KEVENT_SIGNAL registration added by
 * process A on a queue it shares with B watches only A's thread: signals
 * sent to B are neither reported nor taken, even with NOMASK; B's own
 * registration is reported broken (ESRCH) once when B exits, and one made
 * before execve() when the new program starts, whose signals it never
 * takes.
 *
 * Rings (decisions.md 9): kevent_get_events(), kevent_wait() and
 * kevent_commit() on a queue with a ring fail with EPERM in a forked
 * child, in a process that received the descriptor over SCM_RIGHTS and in
 * a program run by execve(), and touch neither its memory nor the
 * creator's; kevent_ctl() works from anywhere, and so does a queue
 * without a ring.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"
#include "harness.h"

#define PAT	0xa5
#define PAT32	0xa5a5a5a5U

static int all_pat(const void *p, size_t len)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i] != PAT)
			return 0;
	return 1;
}

/* ---------------------------------------------------------------- */
/* struct kevent_abi                                                */

static void check_abi(int fd, const char *what)
{
	unsigned char buf[sizeof(struct kevent_abi) + 64];
	struct kevent_abi *abi = (void *)buf;
	const uint32_t need = (1U << KEVENT_SOCKET) | (1U << KEVENT_TIMER) |
			      (1U << KEVENT_POLL) | (1U << KEVENT_PIPE) |
			      (1U << KEVENT_SIGNAL) | (1U << KEVENT_POSIX_TIMER);
	int ret;

	memset(buf, PAT, sizeof(buf));
	ret = ioctl(fd, KEVENT_IOC_GET_ABI, abi);
	ok(ret == 0 && abi->version == KEVENT_ABI_VERSION &&
	   (abi->types & need) == need && !(abi->types & ~((1U << KEVENT_MAX) - 1)) &&
	   abi->nr_init == (uint32_t)__NR_kevent_init &&
	   abi->nr_ctl == (uint32_t)__NR_kevent_ctl &&
	   abi->nr_get_events == (uint32_t)__NR_kevent_get_events &&
	   abi->nr_wait == (uint32_t)__NR_kevent_wait &&
	   abi->nr_commit == (uint32_t)__NR_kevent_commit &&
	   !abi->reserved[0] && !abi->reserved[1] && !abi->reserved[2] &&
	   all_pat(buf + sizeof(*abi), sizeof(buf) - sizeof(*abi)),
	   "KEVENT_IOC_GET_ABI on %s: every field documented, reserved 0, nothing written after it (version %u types %#x reserved %#x %#x %#x)",
	   what, abi->version, abi->types, abi->reserved[0], abi->reserved[1],
	   abi->reserved[2]);
}

/* ---------------------------------------------------------------- */
/* What a report may hold.                                          */

struct expect {
	struct ukevent uk;	/* as registered */
	int source_err;		/* expected BROKEN error, 0 if none */
	int seen;
};

#define MAX_EXPECT	32
static struct expect expects[MAX_EXPECT];
static int nexpect;
static int sends_usr1;

static struct expect *expect_of(uint64_t ptr)
{
	int i;

	for (i = 0; i < nexpect; i++)
		if (expects[i].uk.ptr == ptr)
			return &expects[i];
	return NULL;
}


/*
 * Is every field of report e documented?  why gets the first field that
 * is not.  ring: the report came through a ring (no COPY_FAILED there).
 */
static int report_ok(const struct ukevent *e, int allow_copy_failed,
		     char *why, size_t len)
{
	struct expect *x = expect_of(e->ptr);
	uint32_t flags = e->ret_flags, d0 = e->ret_data[0], d1 = e->ret_data[1];
	int broken = flags & KEVENT_RET_BROKEN;
	uint32_t now = mono_ms32();

	if (!x) {
		snprintf(why, len, "ptr %llx is none of ours", (unsigned long long)e->ptr);
		return 0;
	}
	x->seen++;
	if (e->id.raw_u64 != x->uk.id.raw_u64 || e->type != x->uk.type ||
	    e->event != x->uk.event || e->req_flags != x->uk.req_flags) {
		snprintf(why, len, "ptr %llx: id %llx type %u event %#x req_flags %#x are not as registered",
			 (unsigned long long)e->ptr,
			 (unsigned long long)e->id.raw_u64, e->type, e->event,
			 e->req_flags);
		return 0;
	}
	flags &= ~(allow_copy_failed ? KEVENT_RET_COPY_FAILED : 0);
	if (flags != KEVENT_RET_DONE &&
	    flags != (KEVENT_RET_DONE | KEVENT_RET_BROKEN)) {
		snprintf(why, len, "ptr %llx: ret_flags %#x", (unsigned long long)e->ptr,
			 e->ret_flags);
		return 0;
	}
	if (broken && (int)d1 != -x->source_err) {
		snprintf(why, len, "ptr %llx: BROKEN with %d, expected %d",
			 (unsigned long long)e->ptr, (int)d1, -x->source_err);
		return 0;
	}
	switch (e->type) {
	case KEVENT_TIMER:
		/* The time of the latest expiry in ms, or 0 if none yet. */
		if ((d0 && (now - d0) > 60000) || (!broken && d1 > 100000))
			goto bad;
		return 1;
	case KEVENT_PIPE:
		/* kevent_pipe(7): ret_data[0] is 0 in every report. */
		if (d0 || (!broken && d1))
			goto bad;
		return 1;
	case KEVENT_SOCKET:
		/* The bits of event that were ready. */
		if ((d0 & ~e->event) || (!broken && d1))
			goto bad;
		return 1;
	case KEVENT_POLL:
		/* The bits of event, with POLLERR and POLLHUP, the file reported. */
		if ((d0 & ~(e->event | POLLERR | POLLHUP)) || (!broken && d1))
			goto bad;
		return 1;
	case KEVENT_SIGNAL:
		/* si_code of the latest send; the number of sends. */
		if ((d0 && (int)d0 != SI_TKILL && (int)d0 != SI_QUEUE &&
		     (int)d0 != SI_KERNEL && (int)d0 != SI_TIMER) ||
		    (!broken && d1 > (uint32_t)sends_usr1))
			goto bad;
		return 1;
	case KEVENT_POSIX_TIMER:
		/* Expiries, and the overrun, one less. */
		if (d0 > 100000 || (!broken && d1 != (d0 ? d0 - 1 : 0)))
			goto bad;
		return 1;
	}
bad:
	snprintf(why, len, "ptr %llx type %u: ret_data %#x %#x", (unsigned long long)e->ptr,
		 e->type, d0, d1);
	return 0;
}

static void expect_add(struct ukevent uk, int err)
{
	if (nexpect == MAX_EXPECT)
		bail_out("too many expectations");
	expects[nexpect].uk = uk;
	expects[nexpect].source_err = err;
	expects[nexpect].seen = 0;
	nexpect++;
}

static volatile sig_atomic_t hits[65];

static void handler(int sig)
{
	hits[sig]++;
}

static int timer_fd_create(int q, uint64_t ptr, timer_t *t)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev._sigev_un._tid = q;
	sev.sigev_value.sival_ptr = (void *)(uintptr_t)ptr;
	return timer_create(CLOCK_MONOTONIC, &sev, t);
}

/*
 * Registrations of every source on q, ready (or broken) within 20 ms.
 * The descriptors stay open until fds_close().
 */
static int open_fds[16], nopen;
static timer_t ptimer;

static void setup_sources(int q)
{
	struct itimerspec its = { { 0, 0 }, { 0, 1000000 } };
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int p[2], s[2], l, c, e, b[2];
	struct ukevent uk;
	uint64_t one = 1;
	struct kevent_id id;

	nexpect = 0;
	nopen = 0;
	must(!pipe2(p, O_NONBLOCK | O_CLOEXEC) &&
	     !socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, s) &&
	     !pipe2(b, O_NONBLOCK | O_CLOEXEC), "pipes");
	must(write(p[1], "data", 4) == 4 && send(s[1], "data", 4, 0) == 4, "write");
	e = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	must(e >= 0 && l >= 0 && !bind(l, (struct sockaddr *)&sin, len) &&
	     !getsockname(l, (struct sockaddr *)&sin, &len) && !listen(l, 4),
	     "listen");
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(c >= 0 && !connect(c, (struct sockaddr *)&sin, len), "connect");
	open_fds[nopen++] = p[0];
	open_fds[nopen++] = p[1];
	open_fds[nopen++] = s[0];
	open_fds[nopen++] = s[1];
	open_fds[nopen++] = e;
	open_fds[nopen++] = l;
	open_fds[nopen++] = c;

#define REG(u, err) do {						\
		uk = (u);						\
		must(add1(q, uk) == 0, "ADD of ptr %llx: %s",		\
		     (unsigned long long)uk.ptr, strerror(errno));	\
		expect_add(uk, (err));					\
	} while (0)

	REG(timer_ukevent(0, 1000000, KEVENT_REQ_ONESHOT, 0x5ec0001), 0);
	REG(timer_ukevent(0, 5000000, 0, 0x5ec0002), 0);
	REG(mk_uk(KEVENT_PIPE, (uint32_t)p[0], KEVENT_SOCKET_RECV,
	       KEVENT_REQ_ALWAYS_QUEUE, 0x5ec0003), 0);
	REG(mk_uk(KEVENT_PIPE, (uint32_t)p[1], KEVENT_SOCKET_SEND,
	       KEVENT_REQ_ALWAYS_QUEUE | KEVENT_REQ_ONESHOT, 0x5ec0004), 0);
	REG(mk_uk(KEVENT_SOCKET, (uint32_t)s[0], KEVENT_SOCKET_RECV | KEVENT_SOCKET_SEND,
	       KEVENT_REQ_ALWAYS_QUEUE, 0x5ec0005), 0);
	REG(mk_uk(KEVENT_SOCKET, (uint32_t)l, KEVENT_SOCKET_ACCEPT,
	       KEVENT_REQ_ALWAYS_QUEUE, 0x5ec0006), 0);
	REG(mk_uk(KEVENT_POLL, (uint32_t)e, POLLIN | POLLOUT,
	       KEVENT_REQ_ALWAYS_QUEUE | KEVENT_REQ_ET, 0x5ec0007), 0);
	REG(mk_uk(KEVENT_SIGNAL, SIGUSR1, KEVENT_SIGNAL_DELIVERY, 0, 0x5ec0008), 0);
	REG(mk_uk(KEVENT_POLL, (uint32_t)b[0], POLLIN, 0, 0x5ec0009), EBADF);
	REG(timer_ukevent(100, 0, KEVENT_REQ_ONESHOT, 0x5ec000a), 0);
	/* The POSIX timer's registration is the kernel's. */
	must(!timer_fd_create(q, 0x5ec000b, &ptimer) &&
	     !timer_settime(ptimer, 0, &its, NULL), "timer_create: %s",
	     strerror(errno));
	id.raw[0] = (uint32_t)(intptr_t)ptimer;
	id.raw[1] = 0;
	expect_add(mk_uk(KEVENT_POSIX_TIMER, id.raw_u64, KEVENT_MASK_ALL, 0,
		      0x5ec000b), 0);
	/* A forced report, a signal, an object that goes away. */
	uk = expects[9].uk;
	must(kevent_ctl(q, KEVENT_CTL_READY, 1, &uk) == 0, "READY");
	sends_usr1 = 1;
	raise(SIGUSR1);
	if (write(e, &one, sizeof(one)) != sizeof(one))
		bail_out("eventfd");
	close(b[0]);
	close(b[1]);
	msleep(30);
}

static void fds_close(void)
{
	int i;

	for (i = 0; i < nopen; i++)
		close(open_fds[i]);
	nopen = 0;
	timer_delete(ptimer);
}

/* ---------------------------------------------------------------- */
/* Copy-back of kevent_ctl().                                       */

static void test_copy_back(void)
{
	enum { NUM = 10, ROOM = NUM + 4 };
	struct ukevent in[NUM], *arg;
	unsigned char mem[ROOM * sizeof(struct ukevent)];
	int q = anchored_queue(), p[2], e = -1, ret, i, j;
	int errs_ok = 1, ready_ok = 1, n_err = 0, n_ready = 0, tail_ok;
	static const int errs[NUM] = { ENOSYS, EINVAL, EBADF, ENOTSOCK, EINVAL,
				       ENOSYS, 0, EEXIST, -1, -1 };
	char why[256] = "";

	must(!pipe2(p, O_NONBLOCK | O_CLOEXEC) && write(p[1], "x", 1) == 1 &&
	     (e = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) >= 0, "setup");
	in[0] = mk_uk(KEVENT_MAX, 1, 1, 0, 0xc0b0);
	in[1] = timer_ukevent(1, 0, 0x40, 0xc0b1);
	in[2] = mk_uk(KEVENT_PIPE, 999, KEVENT_SOCKET_RECV, 0, 0xc0b2);
	in[3] = mk_uk(KEVENT_SOCKET, (uint32_t)p[0], KEVENT_SOCKET_RECV, 0, 0xc0b3);
	in[4] = timer_ukevent(0, 1000000000, 0, 0xc0b4);
	in[5] = mk_uk(KEVENT_POSIX_TIMER, 1, KEVENT_MASK_ALL, 0, 0xc0b5);
	in[6] = timer_ukevent(100, 0, 0, 0xc0b6);
	in[7] = in[6];
	in[8] = mk_uk(KEVENT_PIPE, (uint32_t)p[0], KEVENT_SOCKET_RECV, 0, 0xc0b8);
	in[9] = mk_uk(KEVENT_POLL, (uint32_t)e, POLLOUT, 0, 0xc0b9);
	for (i = 0; i < NUM; i++) {
		in[i].ret_flags = PAT32;
		in[i].ret_data[0] = PAT32;
		in[i].ret_data[1] = PAT32;
	}
	memset(mem, PAT, sizeof(mem));
	arg = (void *)mem;
	memcpy(arg, in, sizeof(in));
	ret = kevent_ctl(q, KEVENT_CTL_ADD, NUM, arg);
	is_int(ret, NUM - 1, "ADD of 10 entries: 9 copied back (8 errors, 2 ready, 1 kept)");
	/* Copied back in order, compacted: every entry but in[6]. */
	for (i = 0, j = 0; i < NUM && j < ret; i++) {
		struct ukevent *o = &arg[j];

		if (errs[i] == 0)
			continue;
		j++;
		if (memcmp(&o->id, &in[i].id, 20) || o->ptr != in[i].ptr) {
			snprintf(why, sizeof(why), "entry %d: the caller's fields changed", i);
			errs_ok = ready_ok = 0;
			continue;
		}
		if (errs[i] > 0) {
			n_err++;
			if (o->ret_flags != (KEVENT_RET_BROKEN | KEVENT_RET_DONE) ||
			    (int)o->ret_data[1] != -errs[i] ||
			    (o->ret_data[0] != PAT32 && o->ret_data[0])) {
				snprintf(why, sizeof(why), "entry %d: flags %#x data %#x %#x",
					 i, o->ret_flags, o->ret_data[0], o->ret_data[1]);
				errs_ok = 0;
			}
		} else {
			n_ready++;
			if (o->ret_flags != KEVENT_RET_DONE || o->ret_data[1] ||
			    (i == 8 && o->ret_data[0] != 0) ||
			    (i == 9 && o->ret_data[0] != POLLOUT)) {
				snprintf(why, sizeof(why), "entry %d: flags %#x data %#x %#x",
					 i, o->ret_flags, o->ret_data[0], o->ret_data[1]);
				ready_ok = 0;
			}
		}
	}
	ok(errs_ok && n_err == 7,
	   "failed entries: the caller's bytes, BROKEN|DONE and -errno, ret_data[0] the caller's or 0 %s",
	   why);
	ok(ready_ok && n_ready == 2,
	   "entries ready at ADD: the caller's bytes, DONE, the documented readiness, ret_data[1] 0 %s",
	   why);
	/* Past the copied-back entries: the caller's input, then untouched. */
	tail_ok = ret >= 0 && ret <= NUM;
	for (i = ret; tail_ok && i < NUM; i++)
		tail_ok = !memcmp(&arg[i], &in[i], sizeof(in[i]));
	ok(tail_ok && all_pat(&arg[NUM], (ROOM - NUM) * sizeof(*arg)),
	   "the kernel wrote nothing past the entries it copied back");

	/* REMOVE and MODIFY copy every entry back, READY the missing ones. */
	{
		struct ukevent r[3];
		int good = 1;

		r[0] = in[6];
		r[1] = timer_ukevent(7, 7, 0, 0xdead);
		r[1].ret_data[0] = r[1].ret_data[1] = PAT32;
		r[2] = r[1];
		ret = kevent_ctl(q, KEVENT_CTL_MODIFY, 2, r);
		good &= ret == 2 && r[0].ret_flags == KEVENT_RET_DONE &&
			(r[0].ret_data[0] == PAT32 || !r[0].ret_data[0]) &&
			(r[0].ret_data[1] == PAT32 || !r[0].ret_data[1]) &&
			r[1].ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
			(int)r[1].ret_data[1] == -ENOENT &&
			(r[1].ret_data[0] == PAT32 || !r[1].ret_data[0]);
		r[0] = in[6];
		r[1] = timer_ukevent(7, 7, 0, 0xdead);
		r[1].ret_data[0] = PAT32;
		ret = kevent_ctl(q, KEVENT_CTL_READY, 2, r);
		good &= ret == 1 && r[0].ptr == 0xdead &&
			(int)r[0].ret_data[1] == -ENOENT;
		r[0] = in[6];
		r[0].ret_data[0] = r[0].ret_data[1] = PAT32;
		harvest(q, r + 1, 2);
		ret = kevent_ctl(q, KEVENT_CTL_REMOVE, 1, r);
		good &= ret == 1 && r[0].ret_flags == KEVENT_RET_DONE &&
			r[0].ptr == in[6].ptr &&
			(r[0].ret_data[0] == PAT32 || !r[0].ret_data[0]) &&
			(r[0].ret_data[1] == PAT32 || !r[0].ret_data[1]);
		ok(good, "MODIFY, READY and REMOVE copy back the caller's entries with documented fields");
	}
	close(p[0]);
	close(p[1]);
	close(e);
	close(q);
}

/* ---------------------------------------------------------------- */
/* Reports through a buffer and through a ring.                     */

static void test_harvest(void)
{
	struct ukevent buf[64];
	char why[256] = "";
	int q = kevent_init(NULL, 0, 0), n, total = 0, i, good = 1;

	setup_sources(q);
	memset(buf, PAT, sizeof(buf));
	n = kevent_get_events(q, 0, 64, TSP(0, 0), buf, 0);
	for (i = 0; i < n; i++)
		if (!report_ok(&buf[i], 0, why, sizeof(why)))
			good = 0;
	total = n;
	ok(n >= nexpect && good,
	   "kevent_get_events: every field of the %d reports of every source is documented %s",
	   n, why);
	ok(n >= 0 && all_pat(buf + n, (64 - (size_t)n) * sizeof(buf[0])),
	   "kevent_get_events wrote nothing past the events it returned");
	for (i = 0; i < nexpect; i++)
		if (!expects[i].seen)
			diag("no report for ptr %llx", (unsigned long long)expects[i].uk.ptr);
	(void)total;
	fds_close();
	close(q);
}

static void test_ring(void)
{
	enum { SIZE = 64 };
	struct kevent_ring *ring;
	size_t mapped;
	char why[256] = "";
	int q, n, i, good = 1;

	ring = ring_alloc(SIZE, &mapped);
	must(ring != NULL, "ring");
	memset(ring, PAT, mapped);
	q = kevent_init(ring, SIZE, 0);
	must(q >= 0, "kevent_init: %s", strerror(errno));
	setup_sources(q);
	n = kevent_wait(q, SIZE, 0, TSP(0, 0), 0);
	for (i = 0; i < n && i < SIZE; i++)
		if (!report_ok(&ring->event[i], 0, why, sizeof(why)))
			good = 0;
	ok(n >= nexpect && good && ring->ring_kidx == (uint32_t)n && ring->ring_over == 0,
	   "kevent_wait: every field of the %d ring slots written is documented, kidx %u over %u %s",
	   n, ring->ring_kidx, ring->ring_over, why);
	ok(n >= 0 && n <= SIZE &&
	   all_pat(&ring->event[n], (size_t)(SIZE - n) * sizeof(struct ukevent)) &&
	   all_pat((char *)ring + kevent_ring_bytes(SIZE), mapped - kevent_ring_bytes(SIZE)),
	   "kevent_wait wrote nothing in the ring past the slots it filled");
	fds_close();
	close(q);
	munmap(ring, mapped);

	/*
	 * kevent_get_events on a queue with a ring of 4: the buffer gets
	 * every event, the ring a copy of the first 4, the others say
	 * COPY_FAILED in the buffer.
	 */
	{
		struct ukevent buf[64];
		int copies = 0, same = 1;

		ring = ring_alloc(4, &mapped);
		memset(ring, PAT, mapped);
		q = kevent_init(ring, 4, 0);
		must(q >= 0, "kevent_init");
		setup_sources(q);
		memset(buf, PAT, sizeof(buf));
		n = kevent_get_events(q, 0, 64, TSP(0, 0), buf, 0);
		for (i = 0; i < n; i++) {
			if (!report_ok(&buf[i], 1, why, sizeof(why)))
				good = 0;
			if (buf[i].ret_flags & KEVENT_RET_COPY_FAILED) {
				if (i < 4)
					same = 0;
				continue;
			}
			if (copies >= 4 || memcmp(&ring->event[copies], &buf[i],
						  sizeof(buf[i])))
				same = 0;
			copies++;
		}
		ok(n > 4 && good && same && copies == 4 && ring->ring_kidx == 0 &&
		   all_pat((char *)ring + kevent_ring_bytes(4),
			   mapped - kevent_ring_bytes(4)),
		   "kevent_get_events with a 4-slot ring: 4 exact copies in the ring, COPY_FAILED on the rest (%d events) %s",
		   n, why);
		fds_close();
		close(q);
		munmap(ring, mapped);
	}
}

/* ---------------------------------------------------------------- */
/* KEVENT_POSIX_TIMER                                                */

static void test_posix_timer(void)
{
	int q = anchored_queue(), i, good = 1;
	timer_t t;
	struct kevent_id id;
	char buf[4096];
	struct ukevent uk;
	int lines = 0;
	char *p;

	must(!timer_fd_create(q, 0x7777, &t), "timer_create: %s", strerror(errno));
	id.raw[0] = (uint32_t)(intptr_t)t;
	id.raw[1] = 0;
	{
		const uint64_t ids[] = { 0, 1, id.raw_u64, id.raw_u64 + 1,
					 0xffffffffffffffffULL };
		const uint32_t flags[] = { 0, KEVENT_REQ_ONESHOT,
					   KEVENT_REQ_ALWAYS_QUEUE };

		for (i = 0; i < 15; i++) {
			uk = mk_uk(KEVENT_POSIX_TIMER, ids[i % 5], KEVENT_MASK_ALL,
				flags[i / 5], i == 2 ? 0x7777 : 0x8888);
			if (kevent_ctl(q, KEVENT_CTL_ADD, 1, &uk) != 1 ||
			    uk.ret_flags != (KEVENT_RET_BROKEN | KEVENT_RET_DONE) ||
			    (int)uk.ret_data[1] != -ENOSYS) {
				good = 0;
				diag("ADD of KEVENT_POSIX_TIMER id %llx: flags %#x error %d",
				     (unsigned long long)ids[i % 5], uk.ret_flags,
				     (int)uk.ret_data[1]);
			}
		}
	}
	ok(good, "userspace cannot ADD KEVENT_POSIX_TIMER: ENOSYS, whatever the id");
	if (read_fdinfo(q, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	for (p = buf; (p = strstr(p, "type 8 ")); p++)
		lines++;
	ok(lines == 1, "the queue holds one KEVENT_POSIX_TIMER registration, timer_create()'s (%d)",
	   lines);
	timer_delete(t);
	close(q);
}

/* ---------------------------------------------------------------- */
/* Signals of another process.                                      */

/* A child that obeys one-byte commands on a socket and answers. */
struct peer {
	pid_t pid;
	int sock;
};

enum { CMD_HITS1 = 'a', CMD_HITS2, CMD_ADD2, CMD_ADD_PID, CMD_EXIT };

static int q_shared;

static void peer_loop(int sock)
{
	struct ukevent uk;
	char cmd, ans;
	int r;

	for (;;) {
		while ((r = (int)read(sock, &cmd, 1)) < 0 && errno == EINTR)
			;
		if (r != 1)
			_exit(0);
		switch (cmd) {
		case CMD_HITS1:
			ans = (char)hits[SIGUSR1];
			break;
		case CMD_HITS2:
			ans = (char)hits[SIGUSR2];
			break;
		case CMD_ADD2:
			uk = mk_uk(KEVENT_SIGNAL, SIGUSR2 | KEVENT_SIGNAL_NOMASK,
				KEVENT_SIGNAL_DELIVERY, 0, 0xb0b2);
			ans = (char)add1(q_shared, uk);
			break;
		case CMD_ADD_PID:
			/* Name the parent in the id: not a way to watch it. */
			uk = mk_uk(KEVENT_SIGNAL, SIGUSR1, KEVENT_SIGNAL_DELIVERY, 0,
				0xb0b3);
			uk.id.raw[1] = (uint32_t)getppid();
			r = kevent_ctl(q_shared, KEVENT_CTL_ADD, 1, &uk);
			ans = (char)(r == 1 && (int)uk.ret_data[1] == -EINVAL ? 0 : 1);
			break;
		default:
			_exit(0);
		}
		if (write(sock, &ans, 1) != 1)
			_exit(1);
	}
}

static int ask(struct peer *p, char cmd)
{
	char ans = -1;
	int status = 0;
	ssize_t r;

	if (send(p->sock, &cmd, 1, MSG_NOSIGNAL) != 1)
		bail_out("peer: %s", strerror(errno));
	while ((r = read(p->sock, &ans, 1)) < 0 && errno == EINTR)
		;
	if (r != 1) {
		if (waitpid(p->pid, &status, WNOHANG) == p->pid)
			bail_out("peer gone, status %#x", status);
		bail_out("peer: %s", strerror(errno));
	}
	return ans;
}

/* Reports for ptr in q within ms: their count, and the sum of ret_data[1]. */
static int reports_for(int q, uint64_t ptr, unsigned int ms, int *sum,
		       int *broken_err)
{
	struct ukevent buf[16];
	long long start = now_ns();
	int n, i, count = 0;

	*sum = 0;
	*broken_err = 0;
	do {
		n = kevent_get_events(q, 0, 16, TSP(0, 5000000), buf, 0);
		for (i = 0; i < n; i++) {
			if (buf[i].ptr != ptr)
				continue;
			count++;
			if (buf[i].ret_flags & KEVENT_RET_BROKEN)
				*broken_err = (int)buf[i].ret_data[1];
			else
				*sum += (int)buf[i].ret_data[1];
		}
	} while (ms_since(start) < ms);
	return count;
}

static void test_signals(void)
{
	struct ukevent uk;
	struct peer b;
	int sv[2], n, sum, err, status;

	q_shared = anchored_queue();
	must(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair");
	memset((void *)hits, 0, sizeof(hits));
	b.pid = fork();
	must(b.pid >= 0, "fork");
	if (!b.pid) {
		close(sv[0]);
		peer_loop(sv[1]);
	}
	close(sv[1]);
	b.sock = sv[0];

	/* A watches SIGUSR1 with NOMASK; B's SIGUSR1 is B's own. */
	uk = mk_uk(KEVENT_SIGNAL, SIGUSR1 | KEVENT_SIGNAL_NOMASK,
		KEVENT_SIGNAL_DELIVERY, 0, 0xa0a1);
	must(add1(q_shared, uk) == 0, "ADD: %s", strerror(errno));
	kill(b.pid, SIGUSR1);
	msleep(20);
	n = reports_for(q_shared, 0xa0a1, 50, &sum, &err);
	ok(ask(&b, CMD_HITS1) == 1 && n == 0,
	   "A's NOMASK SIGUSR1 registration neither takes nor reports B's SIGUSR1 (B's handler ran, %d reports)",
	   n);
	kill(getpid(), SIGUSR1);
	n = reports_for(q_shared, 0xa0a1, 50, &sum, &err);
	ok(n == 1 && sum == 1 && hits[SIGUSR1] == 0,
	   "A's own SIGUSR1 is reported to A's registration and not delivered (%d reports, %d sends, %d runs)",
	   n, sum, hits[SIGUSR1]);

	/* B watches SIGUSR2 with NOMASK; A's SIGUSR2 is A's own. */
	is_int(ask(&b, CMD_ADD2), 0, "B adds a NOMASK SIGUSR2 registration on the shared queue");
	raise(SIGUSR2);
	n = reports_for(q_shared, 0xb0b2, 50, &sum, &err);
	ok(hits[SIGUSR2] == 1 && n == 0,
	   "B's registration neither takes nor reports A's SIGUSR2 (A's handler ran %d, %d reports)",
	   hits[SIGUSR2], n);
	kill(b.pid, SIGUSR2);
	msleep(20);
	n = reports_for(q_shared, 0xb0b2, 50, &sum, &err);
	ok(n == 1 && sum == 1 && ask(&b, CMD_HITS2) == 0,
	   "B's SIGUSR2 is reported to B's registration, and not delivered to B (%d reports)",
	   n);
	is_int(ask(&b, CMD_ADD_PID), 0,
	       "a signal id naming another process (id.raw[1] = its pid) is EINVAL");

	/* B goes away: its registration is reported BROKEN with ESRCH, once. */
	close(b.sock);
	waitpid(b.pid, &status, 0);
	n = reports_for(q_shared, 0xb0b2, 100, &sum, &err);
	ok(n == 1 && err == -ESRCH,
	   "B's exit reports its registration BROKEN with ESRCH, once (%d reports, error %d)",
	   n, err);
	uk = mk_uk(KEVENT_SIGNAL, SIGUSR1 | KEVENT_SIGNAL_NOMASK,
		KEVENT_SIGNAL_DELIVERY, 0, 0xa0a1);
	kevent_ctl(q_shared, KEVENT_CTL_REMOVE, 1, &uk);
}

/* After execve(): the program's own SIGTERM. */
static int exec_sigterm_main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGTERM, &sa, NULL);
	raise(SIGTERM);
	return hits[SIGTERM] == 1 ? 0 : 3;
}

static void test_exec(void)
{
	char buf[8192];
	struct ukevent uk;
	int n, sum, err, status;
	pid_t pid;

	pid = fork();
	must(pid >= 0, "fork");
	if (!pid) {
		uk = mk_uk(KEVENT_SIGNAL, SIGTERM | KEVENT_SIGNAL_NOMASK,
			KEVENT_SIGNAL_DELIVERY, 0, 0xe0e0);
		if (add1(q_shared, uk))
			_exit(5);
		execl("/proc/self/exe", "security", "--exec-sigterm", (char *)NULL);
		_exit(6);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "after execve() a NOMASK registration made before does not take the new program's SIGTERM (status %#x)",
	   status);
	n = reports_for(q_shared, 0xe0e0, 100, &sum, &err);
	if (read_fdinfo(q_shared, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	ok(n == 1 && err == -ESRCH && !strstr(buf, "user e0e0 "),
	   "the registration is reported BROKEN with ESRCH once and is gone (%d reports, error %d)",
	   n, err);
}

/* ---------------------------------------------------------------- */
/* Rings and address spaces.                                        */

enum { F_GET = 1, F_WAIT = 2, F_COMMIT = 4, F_MEM = 8, F_CTL = 16, F_PLAIN = 32 };

/*
 * In another address space: the ring calls must fail with EPERM and
 * write nothing; kevent_ctl() works; a plain queue works.  The result
 * is a mask of failures.
 */
static int other_mm_checks(int rq, struct kevent_ring *ring, size_t mapped,
			   int plain, uint64_t ptr)
{
	struct ukevent buf[8], uk;
	int fails = 0;

	memset(buf, PAT, sizeof(buf));
	if (!(kevent_get_events(rq, 0, 8, TSP(0, 0), buf, 0) == -1 && errno == EPERM))
		fails |= F_GET;
	if (!(kevent_wait(rq, 8, 0, TSP(0, 0), 0) == -1 && errno == EPERM))
		fails |= F_WAIT;
	if (!(kevent_commit(rq, 0, 0) == -1 && errno == EPERM))
		fails |= F_COMMIT;
	if (!all_pat(buf, sizeof(buf)) ||
	    (ring && (!all_pat(ring->event, mapped - sizeof(*ring)) ||
		      ring->ring_kidx || ring->ring_over)))
		fails |= F_MEM;
	uk = timer_ukevent(0, 1000000, KEVENT_REQ_ONESHOT, ptr);
	if (kevent_ctl(rq, KEVENT_CTL_ADD, 1, &uk) != 0)
		fails |= F_CTL;
	if (plain >= 0 && kevent_get_events(plain, 0, 8, TSP(0, 0), buf, 0) < 0)
		fails |= F_PLAIN;
	return fails;
}

static int exec_ring_main(int argc, char **argv)
{
	if (argc < 4)
		return 99;
	return other_mm_checks(atoi(argv[2]), NULL, 0, atoi(argv[3]), 0x5555);
}

static int send_fds(int sock, int a, int b)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))], c = 'f';
	struct iovec iov = { &c, 1 };
	struct msghdr msg;
	struct cmsghdr *cm;

	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), (int[]){ a, b }, 2 * sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fds(int sock, int *a, int *b)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))], c;
	struct iovec iov = { &c, 1 };
	struct msghdr msg;
	struct cmsghdr *cm;
	int fds[2];

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	*a = fds[0];
	*b = fds[1];
	return 0;
}

static void test_rings(pid_t helper, int helper_sock)
{
	struct kevent_ring *ring;
	struct ukevent buf[16];
	size_t mapped;
	int rq, plain, status, fails, n, i, seen = 0, a;
	char ans;
	pid_t pid;
	char fdarg[16], plainarg[16];

	ring = ring_alloc(8, &mapped);
	must(ring != NULL, "ring");
	memset(ring, PAT, mapped);
	rq = kevent_init(ring, 8, 0);
	plain = kevent_init(NULL, 0, 0);
	must(rq >= 0 && plain >= 0, "kevent_init: %s", strerror(errno));
	/* Two events ready, for whoever could take them. */
	for (i = 0; i < 2; i++) {
		struct ukevent uk = timer_ukevent(0, 1000000, KEVENT_REQ_ONESHOT,
						  0x1111 + (uint64_t)i);

		must(add1(rq, uk) == 0, "ADD");
	}
	{
		struct ukevent uk = timer_ukevent(0, 1000000, KEVENT_REQ_ONESHOT, 0x2222);

		must(add1(plain, uk) == 0, "ADD");
	}
	msleep(20);

	/* A forked child. */
	pid = fork();
	must(pid >= 0, "fork");
	if (!pid)
		_exit(other_mm_checks(rq, ring, mapped, plain, 0x3333));
	waitpid(pid, &status, 0);
	fails = WIFEXITED(status) ? WEXITSTATUS(status) : 0xff;
	ok(!(fails & F_GET), "a forked child: kevent_get_events on the parent's ring queue fails with EPERM");
	ok(!(fails & F_WAIT), "a forked child: kevent_wait fails with EPERM");
	ok(!(fails & F_COMMIT), "a forked child: kevent_commit fails with EPERM");
	ok(!(fails & F_MEM), "a forked child: neither its buffer nor its copy of the ring was written");
	ok(!(fails & F_CTL), "a forked child: kevent_ctl on the ring queue works");
	ok(!(fails & F_PLAIN), "a forked child: a queue without a ring works (status %#x)",
	   status);

	/* The creator lost nothing, and its ring was not written meanwhile. */
	a = ring->ring_kidx == 0 && ring->ring_over == 0 &&
	    all_pat(ring->event, mapped - sizeof(*ring));
	n = kevent_wait(rq, 8, 0, TSP(0, 50000000), 0);
	for (i = 0; i < n && i < 8; i++)
		if (ring->event[i].ptr == 0x1111 || ring->event[i].ptr == 0x2222 ||
		    ring->event[i].ptr == 0x1112 || ring->event[i].ptr == 0x3333)
			seen++;
	if (seen < 3) {
		msleep(20);
		n = kevent_wait(rq, 8, (unsigned int)n, TSP(0, 50000000), 0);
		(void)n;
		for (i = 0; i < 8; i++)
			if (ring->event[i].ptr == 0x3333)
				seen++;
	}
	ok(a && seen >= 3,
	   "the creator's ring was untouched and it still gets all its events (%d)", seen);

	/* A process that receives the descriptor. */
	must(!send_fds(helper_sock, rq, plain), "SCM_RIGHTS: %s", strerror(errno));
	if (read(helper_sock, &ans, 1) != 1)
		ans = (char)0xff;
	ok(!(ans & (F_GET | F_WAIT | F_COMMIT | F_MEM)),
	   "a process that received the ring queue over SCM_RIGHTS: EPERM, nothing written (%#x)",
	   (unsigned char)ans);
	ok(!(ans & (F_CTL | F_PLAIN)),
	   "it can use kevent_ctl on it, and a queue without a ring");
	(void)helper;

	/* A program run by execve() with the descriptor inherited. */
	snprintf(fdarg, sizeof(fdarg), "%d", rq);
	snprintf(plainarg, sizeof(plainarg), "%d", plain);
	pid = fork();
	must(pid >= 0, "fork");
	if (!pid) {
		execl("/proc/self/exe", "security", "--exec-ring", fdarg, plainarg,
		      (char *)NULL);
		_exit(98);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "after execve(), the inherited ring queue: EPERM on the ring calls, kevent_ctl works (status %#x)",
	   status);
	harvest(rq, buf, 16);
	close(rq);
	close(plain);
	munmap(ring, mapped);
}

/* Forked before any queue exists: receives descriptors, tries them. */
static void helper_loop(int sock)
{
	int rq, plain;
	char ans;

	for (;;) {
		if (recv_fds(sock, &rq, &plain))
			_exit(0);
		ans = (char)other_mm_checks(rq, NULL, 0, plain, 0x4444);
		close(rq);
		close(plain);
		if (write(sock, &ans, 1) != 1)
			_exit(1);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int sv[2], q;
	pid_t helper;

	if (argc > 1 && !strcmp(argv[1], "--exec-sigterm"))
		return exec_sigterm_main();
	if (argc > 1 && !strcmp(argv[1], "--exec-ring"))
		return exec_ring_main(argc, argv);

	plan(33);
	tap_watchdog(60);
	kevent_require();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);

	must(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	helper = fork();
	must(helper >= 0, "fork");
	if (!helper) {
		close(sv[0]);
		helper_loop(sv[1]);
	}
	close(sv[1]);

	q = open("/dev/kevent", O_RDONLY | O_CLOEXEC);
	must(q >= 0, "/dev/kevent: %s", strerror(errno));
	check_abi(q, "/dev/kevent");
	close(q);
	q = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
	check_abi(q, "a queue of kevent_init()");
	close(q);

	test_copy_back();
	test_harvest();
	test_ring();
	test_posix_timer();
	test_signals();
	test_exec();
	test_rings(helper, sv[0]);

	close(sv[0]);
	waitpid(helper, NULL, 0);
	close(q_shared);
	return tap_done();
}
