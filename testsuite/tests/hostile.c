// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile use of one queue: regression tests for the kernel review's
 * findings C1, C6, M1-M6 and the manual review's item 2 (dead objects
 * leave the index, doc/design.md), each asserting the decided behaviour.  Each group of points names its
 * finding in a diag() line.  A call that could hang runs in a child with
 * a time bound, so that a regression is a failed point, not a hung test.
 *
 * Usage: hostile [GROUP...]   (default: every group)
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"
#include "child.h"

#define RECV		KEVENT_SOCKET_RECV
#define SEND		KEVENT_SOCKET_SEND
#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)

static struct ukevent sig_uk(int sig, int nomask, __u32 req_flags, __u64 ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_SIGNAL;
	uk.id.raw[0] = (__u32)sig;
	if (nomask)
		uk.id.raw_u64 |= KEVENT_SIGNAL_NOMASK;
	uk.event = KEVENT_SIGNAL_DELIVERY;
	uk.req_flags = req_flags;
	uk.ptr = ptr;
	return uk;
}

/* Is this a per-entry error report with errno err? */
static int entry_err(const struct ukevent *uk, int err)
{
	return uk->ret_flags == BROKEN_DONE && (int)uk->ret_data[1] == -err;
}

static void xpipe(int p[2], int flags)
{
	if (pipe2(p, flags))
		bail_out("pipe2: %s", strerror(errno));
}

static void xwrite(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		bail_out("write(%d): %s", fd, strerror(errno));
}

/* Move fd to number want (closing fd), unless it is there already. */
static int move_fd(int fd, int want)
{
	if (fd == want)
		return fd;
	if (dup2(fd, want) != want)
		bail_out("dup2: %s", strerror(errno));
	close(fd);
	return want;
}

/* "kevents:" of the queue's fdinfo: how many registrations it holds. */
static int fdinfo_count(int q)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", q);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "kevents:");
	return p ? atoi(p + 8) : -1;
}

/*
 * C1: a fault part-way through the copy to buf ends the call with the
 * count so far; the event that faulted is the first of the next call.
 */
static void c1_child(void *arg)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct ukevent uk[2], good[2], *buf;
	long long start, ms;
	int q, n, err;
	__u64 first;
	char *m;

	(void)arg;
	m = mmap(NULL, 2 * (size_t)psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + psz, (size_t)psz, PROT_NONE))
		_exit(2);
	/* Slot 0 ends the mapped page; slot 1 is on the unmapped one. */
	buf = (struct ukevent *)(m + psz - sizeof(struct ukevent));
	q = new_queue(0);
	uk[0] = timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 1);
	uk[1] = timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 2);
	cok(sys_kevent_ctl(q, KEVENT_CTL_ADD, 2, uk) == 0,
	    "C1: two ONESHOT 1 us timers added");

	start = now_ns();
	n = sys_kevent_get_events(q, 2, 2, TSP(5, 0), buf, 0);
	err = errno;
	ms = ms_since(start);
	cok(n == 1, "C1: min_nr 2, buf's second slot unmapped: returns 1 "
	    "(got %d, errno %d) [kevent_get_events.2 EFAULT buf-copy]", n, n < 0 ? err : 0);
	cok(ms < 3000, "C1: ... at once, not at the 5 s timeout (%lld ms)",
	    ms);
	first = buf[0].ptr;
	cok(n == 1 && (first == 1 || first == 2) &&
	    buf[0].ret_flags == KEVENT_RET_DONE,
	    "C1: the event in the mapped slot is whole (ptr %llu)",
	    (unsigned long long)first);
	memset(good, 0, sizeof(good));
	n = sys_kevent_get_events(q, 1, 2, TSP(2, 0), good, 0);
	cok(n == 1 && good[0].ptr == 3 - first &&
	    good[0].ret_flags == KEVENT_RET_DONE,
	    "C1: the event that faulted is reported by the next call "
	    "(got %d, ptr %llu) [kevent_get_events.2 EFAULT buf-copy]", n,
	    (unsigned long long)good[0].ptr);

	/* A fault on the first copy: EFAULT, and the event stays. */
	uk[0] = timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 3);
	add1(q, uk[0]);
	n = sys_kevent_get_events(q, 1, 1, TSP(2, 0), unmapped_page(), 0);
	cok(n == -1 && errno == EFAULT,
	    "C1: a fault on the first copy: EFAULT (got %d) [kevent_get_events.2 EFAULT buf-copy]", n);
	cok(wait1(q, good, 2000) == 1 && good[0].ptr == 3,
	    "C1: ... and that event stays ready for the next call [kevent_get_events.2 EFAULT buf-copy]");

	/*
	 * A fault in the middle of a slot: the event cut short is not
	 * counted as copied, and the next call reports it whole.
	 */
	buf = (struct ukevent *)(m + psz - sizeof(struct ukevent) -
				 sizeof(struct ukevent) / 2);
	add1(q, timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 4));
	add1(q, timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 5));
	n = sys_kevent_get_events(q, 2, 2, TSP(5, 0), buf, 0);
	first = buf[0].ptr;
	cok(n == 1 && (first == 4 || first == 5),
	    "C1: buf's second slot half mapped: returns 1, the first event "
	    "whole (got %d, ptr %llu) [kevent_get_events.2 EFAULT buf-copy]",
	    n, (unsigned long long)first);
	memset(good, 0, sizeof(good));
	n = sys_kevent_get_events(q, 1, 2, TSP(2, 0), good, 0);
	cok(n == 1 && good[0].ptr == 9 - first,
	    "C1: ... and the event cut short is reported by the next call "
	    "(got %d, ptr %llu) [kevent_get_events.2 EFAULT buf-copy]", n,
	    (unsigned long long)good[0].ptr);
}

static void test_c1(void)
{
	diag("C1: a fault after the first copy must end kevent_get_events(); "
	     "on a kernel without the fix the child below spins in the "
	     "kernel, SIGKILL does not end it, and the guest stalls");
	child_points(9, 15000, c1_child, NULL, NULL, "C1", NULL);
}

/*
 * M1: one registration at most once per call, whatever min_nr; a waiter
 * short of min_nr leaves ready events to others.
 */
struct m1_waiter {
	int q;
	pid_t tid;
	int ret;
	long long ms;
};

static void *m1_waiter(void *arg)
{
	struct m1_waiter *w = arg;
	struct ukevent uk[2];
	long long start = now_ns();

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	w->ret = sys_kevent_get_events(w->q, 2, 2, TSP(1, 0), uk, 0);
	w->ms = ms_since(start);
	return NULL;
}

static void test_m1(void)
{
	int q = new_queue(0), p[2], p2[2];
	struct ukevent buf[4];
	struct m1_waiter w = { 0 };
	long long start, ms;
	pthread_t th;
	int n;

	diag("M1: a level-triggered registration is reported at most once "
	     "per kevent_get_events() call");
	xpipe(p, O_NONBLOCK);
	if (add1(q, fd_ukevent(KEVENT_PIPE, p[0], RECV, 0, 11)))
		bail_out("M1: ADD: %s", strerror(errno));
	xwrite(p[1], "x", 1);
	memset(buf, 0, sizeof(buf));
	start = now_ns();
	n = sys_kevent_get_events(q, 2, 2, TSP(0, 200000000), buf, 0);
	ms = ms_since(start);
	is_int(n, 1, "M1: one readable pipe, min_nr = max_nr = 2: returns 1");
	ok(ms >= 180, "M1: ... after the 200 ms timeout (%lld ms)", ms);
	ok(buf[0].ptr == 11 && buf[0].ret_flags == KEVENT_RET_DONE &&
	   (n < 2 || buf[1].ptr != buf[0].ptr),
	   "M1: ... the pipe, not twice");
	n = sys_kevent_get_events(q, 4, 4, TSP(0, 200000000), buf, 0);
	is_int(n, 1, "M1: min_nr = max_nr = 4: still 1");

	xpipe(p2, O_NONBLOCK);
	if (add1(q, fd_ukevent(KEVENT_PIPE, p2[0], RECV, 0, 12)))
		bail_out("M1: ADD: %s", strerror(errno));
	xwrite(p2[1], "y", 1);
	memset(buf, 0, sizeof(buf));
	n = sys_kevent_get_events(q, 3, 3, TSP(0, 200000000), buf, 0);
	ok(n == 2 && buf[0].ptr != buf[1].ptr,
	   "M1: two readable pipes, min_nr 3: 2 distinct events (got %d)", n);
	close(p[0]);
	close(p[1]);
	close(p2[0]);
	close(p2[1]);
	close(q);

	/* An ET event ready before the waiter came stays for others. */
	q = new_queue(0);
	xpipe(p, O_NONBLOCK);
	if (add1(q, fd_ukevent(KEVENT_PIPE, p[0], RECV, KEVENT_REQ_ET, 13)))
		bail_out("M1: ADD: %s", strerror(errno));
	xwrite(p[1], "z", 1);
	w.q = q;
	if (pthread_create(&th, NULL, m1_waiter, &w))
		bail_out("pthread_create");
	while (!__atomic_load_n(&w.tid, __ATOMIC_SEQ_CST))
		msleep(1);
	if (!wait_sleeping(w.tid, 3000))
		diag("M1: the waiter does not sleep");
	n = harvest(q, buf, 4);
	ok(n == 1 && buf[0].ptr == 13,
	   "M1: a waiter short of min_nr takes nothing: another thread "
	   "harvests the event (got %d)", n);
	pthread_join(th, NULL);
	is_int(w.ret, 0, "M1: ... and the waiter returns 0 at its deadline");
	ok(w.ms >= 900, "M1: ... after its 1 s timeout (%lld ms)", w.ms);
	close(p[0]);
	close(p[1]);
	close(q);
}

/* M2: NOMASK never takes a signal the kernel forces. */
#define M2_HANDLED	42

static void m2_segv_exit(int sig)
{
	(void)sig;
	_exit(M2_HANDLED);
}

struct m2_ctx {
	int q;
};

/* The si_code of the fault that m2_gp_child() makes. */
#ifdef __aarch64__
#define M2_FAULT_CODE		SEGV_MAPERR
#define M2_FAULT_CODE_NAME	"SEGV_MAPERR"
#else
#define M2_FAULT_CODE		SI_KERNEL
#define M2_FAULT_CODE_NAME	"SI_KERNEL"
#endif

static void m2_gp_child(void *arg)
{
	struct m2_ctx *c = arg;
	struct sigaction sa;

	/*
	 * A handler rather than the default action: a fatal #GP in user
	 * mode is logged as "general protection fault", which the report
	 * takes for a kernel splat.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = m2_segv_exit;
	sigaction(SIGSEGV, &sa, NULL);
	if (add1(c->q, sig_uk(SIGSEGV, 1, 0, 21)))
		_exit(3);
	alarm(20);
#if defined(__x86_64__)
	/* A non-canonical address: #GP, force_sig(SIGSEGV), SI_KERNEL. */
	*(volatile int *)0x8000000000000000UL = 1;
#elif defined(__aarch64__)
	/* A kernel address: data abort, force_sig_fault(), SEGV_MAPERR. */
	*(volatile int *)0xffff000000000000UL = 1;
#else
	/* hlt in user mode: #GP, force_sig(SIGSEGV), SI_KERNEL. */
	__asm__ volatile("hlt");
#endif
	_exit(4);
}

static void m2_kill_child(void *arg)
{
	union sigval v = { .sival_int = 7 };
	struct ukevent uk;
	int q = new_queue(0), n;

	(void)arg;
	if (add1(q, sig_uk(SIGSEGV, 1, 0, 22)))
		_exit(3);
	kill(getpid(), SIGSEGV);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGSEGV);
	sigqueue(getpid(), SIGSEGV, v);
	cok(1, "M2: a NOMASK SIGSEGV sent by kill(), tgkill() and sigqueue() "
	    "is taken: the process lives");
	memset(&uk, 0, sizeof(uk));
	n = harvest(q, &uk, 1);
	cok(n == 1 && uk.ptr == 22 && uk.ret_flags == KEVENT_RET_DONE &&
	    uk.ret_data[1] == 3 && (int)uk.ret_data[0] == SI_QUEUE,
	    "M2: ... and reported: 3 sends, si_code SI_QUEUE last "
	    "(n %d, count %u, code %d)", n, uk.ret_data[1],
	    (int)uk.ret_data[0]);
}

static void test_m2(void)
{
	struct m2_ctx c = { .q = new_queue(KEVENT_INIT_CLOEXEC) };
	struct ukevent uk[4];
	int q, st = -1, n, i, seen = 0;

	diag("M2: NOMASK never takes a signal that the kernel forces; "
	     "SIGTTIN/SIGTTOU cannot be NOMASK");
	child_points(0, 8000, m2_gp_child, NULL, &c, "M2 #GP", &st);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == M2_HANDLED,
	   "M2: #GP with a NOMASK SIGSEGV registration: SIGSEGV reaches "
	   "the thread within the time bound (status %#x)", st);
	n = harvest(c.q, uk, 4);
	for (i = 0; i < n; i++)
		if (uk[i].ptr == 21 &&
		    (int)uk[i].ret_data[0] == M2_FAULT_CODE)
			seen++;
	is_int(seen, 1, "M2: ... and it is reported through the queue too, "
	       "si_code " M2_FAULT_CODE_NAME);
	close(c.q);

	q = new_queue(0);
	uk[0] = sig_uk(SIGTTIN, 1, 0, 23);
	ok(ctl1(q, KEVENT_CTL_ADD, &uk[0]) == 1 && entry_err(&uk[0], EINVAL),
	   "M2: ADD of SIGTTIN with NOMASK: EINVAL "
	   "[kevent_signal.7 EINVAL tty-nomask]");
	uk[0] = sig_uk(SIGTTOU, 1, 0, 24);
	ok(ctl1(q, KEVENT_CTL_ADD, &uk[0]) == 1 && entry_err(&uk[0], EINVAL),
	   "M2: ADD of SIGTTOU with NOMASK: EINVAL "
	   "[kevent_signal.7 EINVAL tty-nomask]");
	is_int(add1(q, sig_uk(SIGTTIN, 0, 0, 25)), 0,
	       "M2: SIGTTIN without NOMASK is accepted");
	close(q);

	child_points(2, 8000, m2_kill_child, NULL, NULL, "M2 kill", &st);
}

/* C6: at execve() the thread's signal registrations are BROKEN, -ESRCH. */
static void test_c6(void)
{
	int q = new_queue(KEVENT_INIT_CLOEXEC), sync[2], out[2], st = -1, n;
	char text[256];
	struct ukevent uk[4];
	ssize_t len = 0, r;
	pid_t pid;

	diag("C6: a NOMASK registration does not survive execve()");
	xpipe(sync, O_CLOEXEC);
	xpipe(out, 0);
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (!pid) {
		close(sync[0]);
		close(out[0]);
		dup2(out[1], 1);
		if (add1(q, sig_uk(SIGTERM, 1, 0, 31)))
			_exit(3);
		alarm(20);
		execl("/bin/sh", "sh", "-c", "kill -TERM $$; sleep 1; "
		      "echo survived", (char *)NULL);
		_exit(4);
	}
	close(sync[1]);
	close(out[1]);
	/* EOF on the close-on-exec pipe: the exec has happened. */
	while (read(sync[0], text, 1) < 0 && errno == EINTR)
		;
	close(sync[0]);
	memset(uk, 0, sizeof(uk));
	n = wait1(q, uk, 3000);
	ok(n == 1 && uk[0].ptr == 31 && entry_err(&uk[0], ESRCH),
	   "C6: at exec the registration is reported BROKEN with -ESRCH "
	   "(n %d, flags %#x, data %d)", n, uk[0].ret_flags,
	   (int)uk[0].ret_data[1]);
	if (!reap_within(pid, 10000, &st)) {
		kill(pid, SIGKILL);
		reap_within(pid, 3000, &st);
	}
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
	   "C6: the new program's SIGTERM kills it (status %#x)", st);
	while (len < (ssize_t)sizeof(text) - 1 &&
	       (r = read(out[0], text + len, sizeof(text) - 1 - len)) > 0)
		len += r;
	text[len] = '\0';
	ok(!strstr(text, "survived"), "C6: the shell did not survive");
	is_int(harvest(q, uk, 4), 0, "C6: the BROKEN report came once, and "
	       "the SIGTERM was not reported");
	close(out[0]);
	close(q);
}

/* M3: a ring is written only in the address space that created it. */
struct m3_ctx {
	int q;
	struct kevent_ring *ring;
	size_t len;
	int sv[2];
};

static int all_bytes(const void *p, int c, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (unsigned char)c)
			return 0;
	return 1;
}

static void m3_fork_child(void *arg)
{
	struct m3_ctx *c = arg;
	struct ukevent buf[2];
	int r;

	memset(buf, 0x5a, sizeof(buf));
	r = sys_kevent_get_events(c->q, 0, 2, TSP(0, 0), buf, 0);
	cok(r == -1 && errno == EPERM,
	    "M3: fork: kevent_get_events() in the child: EPERM (got %d) "
	    "[kevent_get_events.2 EPERM]", r);
	cok(all_bytes(buf, 0x5a, sizeof(buf)),
	    "M3: fork: ... and nothing was written to its buffer");
	r = sys_kevent_wait(c->q, 1, 0, TSP(0, 0), 0);
	cok(r == -1 && errno == EPERM,
	    "M3: fork: kevent_wait() in the child: EPERM (got %d) "
	    "[kevent_wait.2 EPERM]", r);
	cok(c->ring->ring_kidx == 0 &&
	    all_bytes(c->ring->event, 0xff, sizeof(struct ukevent)),
	    "M3: fork: ... and the child's copy of the ring is untouched");
	r = sys_kevent_commit(c->q, 0, 0);
	cok(r == -1 && errno == EPERM,
	    "M3: fork: kevent_commit() in the child: EPERM (got %d) "
	    "[kevent_commit.2 EPERM]", r);
	cok(add1(c->q, timer_ms(100000, 0, 0x77)) == 0,
	    "M3: fork: kevent_ctl() works in the child");
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh;
	struct cmsghdr *cm;
	int fd;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &mh, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

static void send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = "f", .iov_len = 1 };
	struct msghdr mh;
	struct cmsghdr *cm;

	memset(&mh, 0, sizeof(mh));
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	if (sendmsg(sock, &mh, 0) != 1)
		bail_out("sendmsg: %s", strerror(errno));
}

static void m3_scm_child(void *arg)
{
	struct m3_ctx *c = arg;
	struct ukevent buf[2];
	int fd, r;

	close(c->sv[0]);
	/* The receiver's own memory at the creator's ring address. */
	memset(c->ring, 0, c->len);
	fd = recv_fd(c->sv[1]);
	if (fd < 0)
		_exit(5);
	r = sys_kevent_get_events(fd, 0, 2, TSP(0, 0), buf, 0);
	cok(r == -1 && errno == EPERM,
	    "M3: SCM_RIGHTS: kevent_get_events() in the receiver: EPERM "
	    "(got %d) [kevent_get_events.2 EPERM]", r);
	r = sys_kevent_wait(fd, 1, 0, TSP(0, 0), 0);
	cok(r == -1 && errno == EPERM,
	    "M3: SCM_RIGHTS: kevent_wait() in the receiver: EPERM (got %d) "
	    "[kevent_wait.2 EPERM]", r);
	cok(all_bytes(c->ring, 0, c->len),
	    "M3: SCM_RIGHTS: the receiver's memory at the sender's ring "
	    "address is untouched");
}

/* The parent, once the receiver exists: a new ring queue, sent to it. */
static void m3_scm_parent(void *arg)
{
	struct m3_ctx *c = arg;
	struct pollfd pf;

	close(c->sv[1]);
	c->q = sys_kevent_init(c->ring, 16, KEVENT_INIT_CLOEXEC);
	if (c->q < 0)
		bail_out("kevent_init(ring): %s", strerror(errno));
	add1(c->q, timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT,
				 0x4141414141414141ULL));
	pf.fd = c->q;
	pf.events = POLLIN;
	poll(&pf, 1, 2000);
	send_fd(c->sv[0], c->q);
}

static void m3_plain_child(void *arg)
{
	struct m3_ctx *c = arg;
	struct ukevent uk;

	cok(wait1(c->q, &uk, 2000) == 1 && uk.ptr == 0x78,
	    "M3: a queue without a ring works in a forked child");
}

/* hostile --m3-exec FD: the image after execve() of the creator. */
static int m3_exec_main(int fd)
{
	struct ukevent buf[2];

	if (sys_kevent_get_events(fd, 0, 2, TSP(0, 0), buf, 0) != -1 ||
	    errno != EPERM)
		return 1;
	if (sys_kevent_wait(fd, 1, 0, TSP(0, 0), 0) != -1 || errno != EPERM)
		return 2;
	if (sys_kevent_commit(fd, 0, 0) != -1 || errno != EPERM)
		return 3;
	return 0;
}

static void test_m3(void)
{
	struct m3_ctx c;
	struct ukevent uk[2];
	struct pollfd pf;
	int n, st = -1;
	pid_t pid;

	diag("M3: a queue's ring is written only in the address space that "
	     "created it; others get EPERM");
	/* fork */
	memset(&c, 0, sizeof(c));
	c.ring = ring_alloc(16, &c.len);
	if (!c.ring)
		bail_out("ring_alloc");
	c.q = sys_kevent_init(c.ring, 16, KEVENT_INIT_CLOEXEC);
	if (c.q < 0)
		bail_out("kevent_init(ring): %s", strerror(errno));
	add1(c.q, timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 0x4242));
	pf.fd = c.q;
	pf.events = POLLIN;
	if (poll(&pf, 1, 2000) != 1)
		diag("M3: the timer did not fire within 2 s");
	child_points(6, 10000, m3_fork_child, NULL, &c, "M3 fork", NULL);
	memset(uk, 0, sizeof(uk));
	n = harvest(c.q, uk, 2);
	ok(n == 1 && uk[0].ptr == 0x4242,
	   "M3: fork: the creator still gets the event the child could not "
	   "take (got %d)", n);
	close(c.q);
	munmap(c.ring, c.len);

	/* SCM_RIGHTS, to a process forked before the queue existed. */
	memset(&c, 0, sizeof(c));
	c.ring = ring_alloc(16, &c.len);
	if (!c.ring || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				  c.sv))
		bail_out("ring_alloc or socketpair");
	child_points(3, 10000, m3_scm_child, m3_scm_parent, &c, "M3 SCM_RIGHTS",
		 NULL);
	close(c.sv[0]);
	close(c.q);
	munmap(c.ring, c.len);

	/* execve() of the creator, the fd left open. */
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (!pid) {
		struct kevent_ring *ring = ring_alloc(16, NULL);
		char arg[16];
		int q = ring ? sys_kevent_init(ring, 16, 0) : -1;

		if (q < 0)
			_exit(10);
		add1(q, timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 0x4343));
		pf.fd = q;
		pf.events = POLLIN;
		poll(&pf, 1, 2000);
		snprintf(arg, sizeof(arg), "%d", q);
		execl("/proc/self/exe", "hostile", "--m3-exec", arg,
		      (char *)NULL);
		_exit(11);
	}
	if (!reap_within(pid, 10000, &st)) {
		kill(pid, SIGKILL);
		reap_within(pid, 3000, &st);
	}
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "M3: execve() with the fd open: the new image gets EPERM from "
	   "kevent_get_events(), kevent_wait() and kevent_commit() "
	   "(status %#x) [kevent_get_events.2 EPERM] [kevent_wait.2 EPERM] "
	   "[kevent_commit.2 EPERM]", st);

	/* A queue without a ring works anywhere. */
	memset(&c, 0, sizeof(c));
	c.q = new_queue(0);
	add1(c.q, timer_ukevent(0, 1000, KEVENT_REQ_ONESHOT, 0x78));
	child_points(1, 10000, m3_plain_child, NULL, &c, "M3 no ring", NULL);
	close(c.q);
}

/* M4: MODIFY runs the source's validation and re-arms timers. */
#define M4_TRIES	8

static void test_m4(void)
{
	int q = new_queue(0), i, n, p[2], sv[2], bad, reports;
	struct ukevent uk, buf[M4_TRIES + 2];
	long long start, ms;
	unsigned int worst = 0, limit;

	diag("M4: MODIFY validates like ADD, re-arms timers, and keeps the "
	     "100 us floor");
	/*
	 * ONESHOT 30 us timers made periodic at once: the floor applies.
	 * Several tries, so that some MODIFY beats the first expiry.
	 */
	start = now_ns();
	bad = 0;
	for (i = 0; i < M4_TRIES; i++) {
		uk = timer_ukevent(0, 30000, KEVENT_REQ_ONESHOT, 40 + i);
		if (add1(q, uk))
			bail_out("M4: ADD: %s", strerror(errno));
		uk.req_flags = 0;
		if (ctl1(q, KEVENT_CTL_MODIFY, &uk) != 1 ||
		    uk.ret_flags != KEVENT_RET_DONE)
			bad++;
	}
	is_int(bad, 0, "M4: MODIFY of ONESHOT 30 us timers to periodic is "
	       "accepted");
	msleep(100);
	memset(buf, 0, sizeof(buf));
	n = harvest(q, buf, M4_TRIES + 2);
	ms = ms_since(start);
	limit = (unsigned int)(ms * 10 + 20);
	for (i = 0; i < n; i++)
		if (buf[i].ret_data[1] > worst)
			worst = buf[i].ret_data[1];
	is_int(n, M4_TRIES, "M4: each is reported");
	ok(worst <= limit, "M4: the 100 us floor holds: at most %u expiries "
	   "in %lld ms, the most was %u", limit, ms, worst);
	for (i = 0; i < M4_TRIES; i++) {
		uk = timer_ukevent(0, 30000, 0, 40 + i);
		ctl1(q, KEVENT_CTL_REMOVE, &uk);
	}
	close(q);

	/* Period 0 made periodic. */
	q = new_queue(0);
	uk = timer_ukevent(0, 0, KEVENT_REQ_ONESHOT, 50);
	is_int(add1(q, uk), 0, "M4: ONESHOT timer of period 0 added");
	uk.req_flags = 0;
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 && entry_err(&uk, EINVAL),
	   "M4: MODIFY of it to periodic: EINVAL (flags %#x, data %d) "
	   "[kevent_timer.7 EINVAL zero-period] "
	   "[kevent_ctl.2 EINVAL type-check]",
	   uk.ret_flags, (int)uk.ret_data[1]);
	close(q);

	/* A fired ONESHOT, not yet delivered, made periodic. */
	q = new_queue(0);
	uk = timer_ukevent(0, 10000000, KEVENT_REQ_ONESHOT, 51);
	add1(q, uk);
	{
		struct pollfd pf = { .fd = q, .events = POLLIN };

		if (poll(&pf, 1, 2000) != 1)
			diag("M4: the ONESHOT 10 ms timer did not fire in 2 s");
	}
	uk.req_flags = 0;
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 &&
	   uk.ret_flags == KEVENT_RET_DONE,
	   "M4: MODIFY of a fired, undelivered ONESHOT to periodic");
	reports = 0;
	for (i = 0; i < 3; i++)
		if (wait1(q, &uk, 2000) == 1 && uk.ptr == 51)
			reports++;
	is_int(reports, 3, "M4: ... it keeps firing: 3 reports in a row");
	close(q);

	/* Masks are validated as ADD validates them. */
	q = new_queue(0);
	xpipe(p, O_NONBLOCK);
	add1(q, fd_ukevent(KEVENT_PIPE, p[0], RECV, 0, 52));
	uk = fd_ukevent(KEVENT_PIPE, p[0], 0x80, 0, 52);
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 && entry_err(&uk, EINVAL),
	   "M4: MODIFY of a pipe registration to an unknown event bit: "
	   "EINVAL [kevent_pipe.7 EINVAL event]");
	uk = fd_ukevent(KEVENT_PIPE, p[0], 0, 0, 52);
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 && entry_err(&uk, EINVAL),
	   "M4: MODIFY of a pipe registration to no event: EINVAL "
	   "[kevent_pipe.7 EINVAL event]");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
		bail_out("socketpair");
	add1(q, fd_ukevent(KEVENT_SOCKET, sv[0], RECV, 0, 53));
	uk = fd_ukevent(KEVENT_SOCKET, sv[0], 0x8, 0, 53);
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 && entry_err(&uk, EINVAL),
	   "M4: MODIFY of a socket registration to an unknown event bit: "
	   "EINVAL [kevent_socket.7 EINVAL]");
	add1(q, sig_uk(SIGUSR2, 0, 0, 54));
	uk = sig_uk(SIGUSR2, 0, 0, 54);
	uk.event = 0;
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 && entry_err(&uk, EINVAL),
	   "M4: MODIFY of a signal registration without DELIVERY: EINVAL "
	   "[kevent_signal.7 EINVAL event]");
	add1(q, timer_ms(100000, 0, 55));
	uk = timer_ms(100000, 0, 55);
	uk.event = 0;
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 && entry_err(&uk, EINVAL),
	   "M4: MODIFY of a timer without FIRED: EINVAL "
	   "[kevent_timer.7 EINVAL event]");
	uk = timer_ms(100000, 0x100, 55);
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 && entry_err(&uk, EINVAL),
	   "M4: MODIFY with an unknown request flag: EINVAL "
	   "[kevent_ctl.2 EINVAL req-flags]");
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	close(q);
}

/* M5: AF_UNIX datagram SEND readiness as unix_dgram_poll() says. */
static void test_m5(void)
{
	int q = new_queue(0), srv, cli, sent = 0, i, n, lt = 0, et = 0;
	struct sockaddr_un a;
	socklen_t alen;
	struct ukevent uk[4];
	long long start;
	char c;

	diag("M5: AF_UNIX datagram SEND is ready exactly when the peer's "
	     "queue has room, and notified when it drains");
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "kevent-m5-%d",
		 (int)getpid());
	alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   strlen(a.sun_path + 1));
	srv = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	cli = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (srv < 0 || cli < 0 || bind(srv, (struct sockaddr *)&a, alen) ||
	    connect(cli, (struct sockaddr *)&a, alen))
		bail_out("M5: sockets: %s", strerror(errno));
	for (i = 0; i < 100000; i++) {
		if (send(cli, "x", 1, 0) != 1)
			break;
		sent++;
	}
	ok(sent > 0 && i < 100000 && errno == EAGAIN,
	   "M5: the server's queue is full after %d datagrams (EAGAIN)", sent);
	uk[0] = fd_ukevent(KEVENT_SOCKET, cli, SEND, 0, 61);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk[0]), 0,
	       "M5: level-triggered SEND: not ready at ADD (kept, not "
	       "copied back)");
	uk[0] = fd_ukevent(KEVENT_SOCKET, cli, SEND, KEVENT_REQ_ET, 62);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk[0]), 0,
	       "M5: edge-triggered SEND: not ready at ADD");
	is_int(harvest(q, uk, 4), 0, "M5: nothing is reported while the "
	       "peer is full");
	is_int(recv(srv, &c, 1, 0), 1, "M5: the server reads one datagram");
	start = now_ns();
	while ((!lt || !et) && ms_since(start) < 3000) {
		n = sys_kevent_get_events(q, 1, 4, TSP(0, 200000000), uk, 0);
		for (i = 0; i < n; i++) {
			if (uk[i].ret_flags != KEVENT_RET_DONE ||
			    !(uk[i].ret_data[0] & SEND))
				continue;
			lt |= uk[i].ptr == 61;
			et |= uk[i].ptr == 62;
		}
	}
	ok(lt, "M5: then the level-triggered SEND is reported");
	ok(et, "M5: and the edge-triggered one too");
	is_int(send(cli, "y", 1, 0), 1, "M5: and send() succeeds");
	close(cli);
	close(srv);
	close(q);
}

/*
 * M6: counters saturate at INT_MAX.  A CLOCK_REALTIME timer whose first
 * expiry is in 1970 and whose interval is 1 ns overruns by more than
 * INT_MAX at its second expiry (hrtimer_forward() over 56 years), whatever
 * the resolution of the guest's hrtimers, so the count it adds to the
 * registration would pass INT_MAX at once.
 */
static void test_m6(void)
{
	int q = new_queue(0), n;
	struct itimerspec its;
	struct sigevent sev;
	struct ukevent uk;
	static char tag;
	timer_t tid;

	diag("M6: a POSIX timer with a huge overrun, unharvested: its count "
	     "saturates at INT_MAX and LAST_CHECK still reports it");
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev._sigev_un._tid = q;
	sev.sigev_value.sival_ptr = &tag;
	if (!is_int(timer_create(CLOCK_REALTIME, &sev, &tid), 0,
		    "M6: timer_create(CLOCK_REALTIME, SIGEV_KEVENT)")) {
		skip(4, "no timer");
		close(q);
		return;
	}
	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_POSIX_TIMER;
	uk.id.raw[0] = (__u32)(intptr_t)tid;
	uk.event = KEVENT_MASK_ALL;
	uk.req_flags = KEVENT_REQ_LAST_CHECK;
	uk.ptr = (__u64)(uintptr_t)&tag;
	ok(ctl1(q, KEVENT_CTL_MODIFY, &uk) == 1 &&
	   uk.ret_flags == KEVENT_RET_DONE,
	   "M6: MODIFY of its registration to LAST_CHECK");
	its.it_value.tv_sec = 1;
	its.it_value.tv_nsec = 0;
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = 1;
	if (timer_settime(tid, TIMER_ABSTIME, &its, NULL))
		bail_out("timer_settime: %s", strerror(errno));
	/* A few jiffies: the second expiry adds the 56-year overrun. */
	msleep(500);
	memset(&uk, 0, sizeof(uk));
	n = harvest(q, &uk, 1);
	ok(n == 1 && uk.ptr == (__u64)(uintptr_t)&tag,
	   "M6: the LAST_CHECK harvest reports it (got %d)", n);
	ok(n == 1 && uk.ret_data[0] > 0 && uk.ret_data[0] <= INT32_MAX,
	   "M6: its count is > 0 and <= INT_MAX (%u)", uk.ret_data[0]);
	ok(n == 1 && uk.ret_data[1] <= INT32_MAX,
	   "M6: its overrun is <= INT_MAX (%u)", uk.ret_data[1]);
	timer_delete(tid);
	close(q);
}

/*
 * Item 2: a dead object's registration leaves the index at once;
 * its BROKEN report comes once; the number can be added again.
 */
enum obj_kind { OBJ_SOCKET, OBJ_PIPE, OBJ_FILE };

struct obj {
	enum obj_kind kind;
	int fd;		/* the watched descriptor */
	int other;	/* the peer end, or -1 */
};

static const char *obj_name(enum obj_kind k)
{
	return k == OBJ_SOCKET ? "socket" : k == OBJ_PIPE ? "pipe" :
	       "eventfd (KEVENT_POLL)";
}

static void obj_open(struct obj *o, enum obj_kind kind, int at)
{
	int p[2];

	o->kind = kind;
	o->other = -1;
	switch (kind) {
	case OBJ_SOCKET:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p))
			bail_out("socketpair");
		break;
	case OBJ_PIPE:
		xpipe(p, O_NONBLOCK);
		break;
	case OBJ_FILE:
		p[0] = eventfd(0, EFD_NONBLOCK);
		p[1] = -1;
		if (p[0] < 0)
			bail_out("eventfd");
		break;
	}
	if (at >= 0 && p[1] == at) {
		/* The number wanted is the peer's: swap them through a dup. */
		int t = dup(p[1]);

		close(p[1]);
		p[1] = t;
	}
	o->fd = at >= 0 ? move_fd(p[0], at) : p[0];
	o->other = p[1];
}

static void obj_close(struct obj *o)
{
	close(o->fd);
	if (o->other >= 0)
		close(o->other);
}

static void obj_make_ready(struct obj *o)
{
	uint64_t one = 1;

	if (o->kind == OBJ_FILE)
		xwrite(o->fd, &one, sizeof(one));
	else
		xwrite(o->other, "r", 1);
}

static struct ukevent obj_uk(struct obj *o, __u64 ptr)
{
	if (o->kind == OBJ_FILE)
		return poll_ukevent(o->fd, POLLIN, 0, ptr);
	return fd_ukevent(o->kind == OBJ_SOCKET ? KEVENT_SOCKET : KEVENT_PIPE,
		     o->fd, RECV, 0, ptr);
}

/* Harvest: how many reports BROKEN -EBADF with ptr, and how many others. */
static int dead_reports(int q, __u64 ptr, int *others)
{
	struct ukevent uk[8];
	int n = harvest(q, uk, 8), i, hits = 0;

	*others = 0;
	for (i = 0; i < n; i++) {
		if (uk[i].ptr == ptr && entry_err(&uk[i], EBADF))
			hits++;
		else
			(*others)++;
	}
	return hits;
}

static void test_item2_kind(enum obj_kind kind)
{
	const char *name = obj_name(kind);
	int q = anchored_queue(), num, others, hits;
	struct ukevent uk;
	struct obj o;

	/* REMOVE after the object died: ENOENT, the report still comes. */
	obj_open(&o, kind, -1);
	uk = obj_uk(&o, 71);
	if (add1(q, uk))
		bail_out("item 2: %s: ADD: %s", name, strerror(errno));
	obj_close(&o);
	is_int(fdinfo_count(q), 1, "item 2: %s closed: its registration left "
	       "the index at once (fdinfo lists the anchor only)", name);
	ok(ctl1(q, KEVENT_CTL_REMOVE, &uk) == 1 && entry_err(&uk, ENOENT),
	   "item 2: %s: REMOVE of the dead registration: ENOENT "
	   "[kevent_ctl.2 ENOENT]", name);
	hits = dead_reports(q, 71, &others);
	ok(hits == 1 && others == 0, "item 2: %s: its BROKEN report (EBADF) "
	   "still comes, once (%d, %d others)", name, hits, others);
	is_int(harvest(q, &uk, 1), 0, "item 2: %s: and only once", name);

	/* The number reused at once: ADD of the same key succeeds. */
	obj_open(&o, kind, -1);
	num = o.fd;
	if (add1(q, obj_uk(&o, 72)))
		bail_out("item 2: %s: ADD: %s", name, strerror(errno));
	obj_close(&o);
	obj_open(&o, kind, num);
	uk = obj_uk(&o, 72);
	is_int(ctl1(q, KEVENT_CTL_ADD, &uk), 0, "item 2: %s: a new object "
	       "at the number: ADD of the same (type, id, ptr) succeeds, no "
	       "EEXIST", name);
	hits = dead_reports(q, 72, &others);
	ok(hits == 1 && others == 0, "item 2: %s: the old one is reported "
	   "BROKEN once, the new one not (%d, %d others)", name, hits,
	   others);
	obj_make_ready(&o);
	ok(wait1(q, &uk, 2000) == 1 && uk.ptr == 72 &&
	   uk.ret_flags == KEVENT_RET_DONE,
	   "item 2: %s: the new registration reports the new object", name);
	uk = obj_uk(&o, 72);
	ok(ctl1(q, KEVENT_CTL_REMOVE, &uk) == 1 &&
	   uk.ret_flags == KEVENT_RET_DONE,
	   "item 2: %s: REMOVE finds the new registration", name);
	obj_close(&o);
	close(q);
}

static void test_item2(void)
{
	diag("item 2: a watched object closed: its registration "
	     "leaves the index at once, its BROKEN report comes once");
	test_item2_kind(OBJ_SOCKET);
	test_item2_kind(OBJ_PIPE);
	test_item2_kind(OBJ_FILE);
}

/* Decision 14: the queue polls readable only when a harvest would give. */
static void test_ready(void)
{
	struct kevent_ring *ring = ring_alloc(16, NULL);
	struct epoll_event ev = { .events = EPOLLIN };
	struct pollfd pf;
	struct ukevent uk;
	long long start, ms;
	int q, p[2], ep, n;
	char buf[8];

	diag("decision 14: a drained level-triggered registration does not "
	     "make the queue readable");
	if (!ring)
		bail_out("ring_alloc");
	q = sys_kevent_init(ring, 16, 0);
	if (q < 0)
		bail_out("kevent_init(ring): %s", strerror(errno));
	xpipe(p, O_NONBLOCK);
	if (add1(q, fd_ukevent(KEVENT_PIPE, p[0], RECV, 0, 81)))
		bail_out("ADD: %s", strerror(errno));
	xwrite(p[1], "x", 1);
	ok(wait1(q, &uk, 2000) == 1 && uk.ptr == 81,
	   "readiness: the LT pipe registration is delivered");
	if (read(p[0], buf, sizeof(buf)) != 1)
		bail_out("read");
	pf.fd = q;
	pf.events = POLLIN;
	pf.revents = 0;
	n = poll(&pf, 1, 0);
	ok(n == 0 && !(pf.revents & POLLIN),
	   "readiness: the pipe drained: poll() on the queue reports no "
	   "POLLIN (got %d, revents %#x)", n, pf.revents);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, q, &ev))
		bail_out("epoll: %s", strerror(errno));
	is_int(epoll_wait(ep, &ev, 1, 0), 0,
	       "readiness: ... nor does epoll");
	start = now_ns();
	n = sys_kevent_wait(q, 0, 0, TSP(0, 300000000), 0);
	ms = ms_since(start);
	ok(n == 0 && ms >= 250, "readiness: kevent_wait(num 0) waits for an "
	   "event: 0 after its 300 ms timeout (got %d after %lld ms)", n, ms);
	is_int(harvest(q, &uk, 1), 0,
	       "readiness: kevent_get_events() with a zero timeout gives 0");
	xwrite(p[1], "y", 1);
	pf.revents = 0;
	ok(poll(&pf, 1, 2000) == 1 && (pf.revents & POLLIN),
	   "readiness: new data: the queue polls readable again");
	close(ep);
	close(p[0]);
	close(p[1]);
	close(q);
}

struct group {
	const char *name;
	unsigned int points;
	void (*fn)(void);
};

static const struct group groups[] = {
	{ "c1", 9, test_c1 },
	{ "m1", 8, test_m1 },
	{ "m2", 7, test_m2 },
	{ "c6", 4, test_c6 },
	{ "m3", 12, test_m3 },
	{ "m4", 13, test_m4 },
	{ "m5", 8, test_m5 },
	{ "m6", 5, test_m6 },
	{ "item2", 24, test_item2 },
	{ "ready", 6, test_ready },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

int main(int argc, char **argv)
{
	unsigned int i, total = 0;
	int j, want[NGROUPS] = { 0 }, any = 0;

	if (argc == 3 && !strcmp(argv[1], "--m3-exec"))
		return m3_exec_main(atoi(argv[2]));
	for (j = 1; j < argc; j++) {
		for (i = 0; i < NGROUPS; i++)
			if (!strcmp(argv[j], groups[i].name))
				break;
		if (i == NGROUPS) {
			printf("Bail out! unknown group %s\n", argv[j]);
			return 1;
		}
		want[i] = any = 1;
	}
	for (i = 0; i < NGROUPS; i++) {
		if (!any)
			want[i] = 1;
		if (want[i])
			total += groups[i].points;
	}
	plan(total);
	tap_watchdog(55);
	kevent_require();
	diag("%ld CPUs online", sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 0; i < NGROUPS; i++)
		if (want[i])
			groups[i].fn();
	return tap_done();
}
