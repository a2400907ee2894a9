// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection: every allocation and every user copy that a kevent
 * call makes is failed in turn, through /proc/thread-self/fail-nth (the
 * Nth should_fail() of the thread fails), and each call must then fail
 * with an errno its page documents, leave its queue as it was, and leak
 * nothing (the debug kernel's kmemleak scans run after the suite).
 *
 * Only the debug kernel (make check VARIANT=debug) has fault injection;
 * elsewhere every point is skipped.
 *
 * Usage: faults
 *
 * Conformance: checks a property of this tree, its fault-injection
 * sites: the errnos are the manual's, but which allocation or copy
 * fails at the Nth should_fail() is this implementation's.
 */
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/mount.h>

#include "tap.h"
#include "kevent_sys.h"

/* The result of one call: its return value and errno. */
struct outcome {
	long ret;
	int err;
};

/* One call to fail in turn, and the errnos its page allows. */
struct scenario {
	const char *name;
	const char *tags;
	void (*setup)(void);
	struct outcome (*call)(void);
	void (*undo)(struct outcome);
	int allowed[4];
};

static int fail_nth_fd = -1;
static int queue = -1;
static int sock[2] = { -1, -1 };
static int pipefd[2] = { -1, -1 };
static int efd = -1;
static struct kevent_ring *ring;

static void knob(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		diag("%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * Quiet, every kind of allocation, no random failures: only fail-nth
 * fails anything, and without a stack dump, which the report would take
 * for a splat.
 */
static int fault_injection_setup(void)
{
	static const char *const attr[] = {
		"failslab", "fail_page_alloc", "fail_usercopy",
	};
	char path[128];
	unsigned int i;

	mkdir("/sys/kernel/debug", 0755);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	for (i = 0; i < sizeof(attr) / sizeof(attr[0]); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/verbose",
			 attr[i]);
		knob(path, "0");
	}
	knob("/sys/kernel/debug/failslab/ignore-gfp-wait", "N");
	knob("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N");
	knob("/sys/kernel/debug/fail_page_alloc/min-order", "0");
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	return fail_nth_fd >= 0;
}

/*
 * The write and the read of fail-nth copy from and to user space, and
 * so count as fault sites themselves: a count left at 1 fails them with
 * EFAULT, and leaves 0 behind.
 */
static void fail_nth_set(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n), tries;

	for (tries = 0; tries < 2; tries++) {
		if (pwrite(fail_nth_fd, buf, (size_t)len, 0) == len)
			return;
		if (errno != EFAULT)
			break;
	}
	bail_out("fail-nth: %s", strerror(errno));
}

/* 0 if the Nth fault was injected in the call, else nonzero. */
static unsigned int fail_nth_left(void)
{
	char buf[16] = "";

	if (pread(fail_nth_fd, buf, sizeof(buf) - 1, 0) < 0) {
		if (errno == EFAULT)
			return 1;	/* the read took the last count */
		bail_out("fail-nth: %s", strerror(errno));
	}
	return (unsigned int)strtoul(buf, NULL, 10);
}

static int registrations(int fd)
{
	char path[64], buf[4096];
	int n = -1, f;
	ssize_t len;
	char *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	len = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	p = strstr(buf, "kevents:");
	if (p)
		n = atoi(p + strlen("kevents:"));
	return n;
}

static struct outcome outcome(long ret)
{
	struct outcome o = { ret, ret < 0 ? errno : 0 };

	return o;
}

/* A one-entry ADD, its per-entry error turned into errno. */
static struct outcome add_one(struct ukevent uk)
{
	int ret = ctl1(queue, KEVENT_CTL_ADD, &uk);

	if (ret == 1 && (uk.ret_flags & KEVENT_RET_BROKEN)) {
		errno = -(int)uk.ret_data[1];
		ret = -1;
	}
	return outcome(ret);
}

static void close_fd(struct outcome o)
{
	if (o.ret >= 0)
		close((int)o.ret);
}

static void remove_added(struct outcome o)
{
	(void)o;
}

static struct outcome call_init(void)
{
	return outcome(kevent_init(NULL, 0, 0));
}

static struct outcome call_init_ring(void)
{
	return outcome(kevent_init(ring, 16, 0));
}

static struct outcome call_init_direct(void)
{
	return outcome(kevent_init(ring, 16, KEVENT_INIT_DIRECT));
}

static struct outcome call_open_dev(void)
{
	return outcome(open("/dev/kevent", O_RDONLY | O_CLOEXEC));
}

static struct outcome call_add_timer(void)
{
	return add_one(timer_ms(60000, 0, 1));
}

static struct outcome call_add_poll(void)
{
	return add_one(poll_ukevent(efd, POLLIN, 0, 2));
}

static struct outcome call_add_pipe(void)
{
	struct ukevent uk = poll_ukevent(pipefd[0], KEVENT_SOCKET_RECV, 0, 3);

	uk.type = KEVENT_PIPE;
	return add_one(uk);
}

static struct outcome call_add_socket(void)
{
	struct ukevent uk = poll_ukevent(sock[0], KEVENT_SOCKET_RECV, 0, 4);

	uk.type = KEVENT_SOCKET;
	return add_one(uk);
}

static struct outcome call_add_signal(void)
{
	struct ukevent uk = poll_ukevent(SIGUSR2, KEVENT_SIGNAL_DELIVERY,
					 0, 5);

	uk.type = KEVENT_SIGNAL;
	return add_one(uk);
}

static timer_t posix_timer;

static struct outcome call_timer_create(void)
{
	struct sigevent sev;
	struct outcome o;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev.sigev_value.sival_ptr = &posix_timer;
	/* The queue's descriptor, where SIGEV_THREAD_ID takes a thread. */
	sev._sigev_un._tid = queue;
	o = outcome(timer_create(CLOCK_MONOTONIC, &sev, &posix_timer));
	return o;
}

static void delete_timer(struct outcome o)
{
	if (o.ret == 0)
		timer_delete(posix_timer);
}

/* A pipe with one byte in it, watched level-triggered: always ready. */
static void ready_pipe(void)
{
	struct ukevent uk = poll_ukevent(pipefd[0], KEVENT_SOCKET_RECV,
					 KEVENT_REQ_ALWAYS_QUEUE, 6);

	uk.type = KEVENT_PIPE;
	if (write(pipefd[1], "x", 1) != 1 || add1(queue, uk))
		bail_out("ready pipe: %s", strerror(errno));
}

static void unready_pipe(struct outcome o)
{
	struct ukevent uk = poll_ukevent(pipefd[0], KEVENT_SOCKET_RECV, 0, 6);
	char c;

	(void)o;
	uk.type = KEVENT_PIPE;
	ctl1(queue, KEVENT_CTL_REMOVE, &uk);
	if (read(pipefd[0], &c, 1) != 1)
		bail_out("unready pipe: %s", strerror(errno));
}

static struct outcome call_get_events(void)
{
	struct ukevent buf[2];

	return outcome(kevent_get_events(queue, 1, 2, TSP(0, 0), buf, 0));
}

/*
 * kevent_ctl() reads and writes its entries with unsafe_get_user() and
 * unsafe_put_user(), which fail-nth does not reach: a MODIFY, which
 * allocates nothing, has no fault site, and its EFAULT is tested with
 * unmapped entries (ctl).
 */
static const struct scenario scenarios[] = {
	{ "kevent_init without a ring", "[kevent_init.2 ENOMEM nomem]", NULL,
	  call_init, close_fd, { ENOMEM, EMFILE, ENFILE, 0 } },
	{ "kevent_init with a ring", "[kevent_init.2 ENOMEM nomem]", NULL,
	  call_init_ring, close_fd, { ENOMEM, EFAULT, EMFILE, ENFILE } },
	/* EFAULT: pinning the ring's page can fail to allocate too. */
	{ "kevent_init with a direct ring",
	  "[kevent_init.2 ENOMEM nomem] [KEVENT_INIT_DIRECT.2const]", NULL,
	  call_init_direct, close_fd, { ENOMEM, EFAULT, EMFILE, ENFILE } },
	/* EFAULT: open(2) copies the path, a fault site of its own. */
	{ "open of /dev/kevent",
	  "[kevent.7 /dev/kevent] [kevent_probe.3 ENOMEM]", NULL,
	  call_open_dev, close_fd, { ENOMEM, EMFILE, ENFILE, EFAULT } },
	{ "ADD of a timer", "[kevent_ctl.2 ENOMEM]", NULL,
	  call_add_timer, remove_added, { ENOMEM, EFAULT, 0 } },
	{ "ADD of KEVENT_POLL", "[kevent_poll.7 ENOMEM]", NULL,
	  call_add_poll, remove_added, { ENOMEM, EFAULT, 0 } },
	{ "ADD of KEVENT_PIPE", "[kevent_pipe.7 ENOMEM]", NULL,
	  call_add_pipe, remove_added, { ENOMEM, EFAULT, 0 } },
	{ "ADD of KEVENT_SOCKET", "[kevent_socket.7 ENOMEM]", NULL,
	  call_add_socket, remove_added, { ENOMEM, EFAULT, 0 } },
	{ "ADD of KEVENT_SIGNAL", "[kevent_signal.7 ENOMEM]", NULL,
	  call_add_signal, remove_added, { ENOMEM, EFAULT, 0 } },
	{ "timer_create with SIGEV_KEVENT", "[kevent_posix_timer.7 ENOMEM]",
	  NULL, call_timer_create, delete_timer,
	  { ENOMEM, EAGAIN, EFAULT, 0 } },
	{ "kevent_get_events of a ready pipe",
	  "[kevent_get_events.2 EFAULT buf-copy]",
	  ready_pipe, call_get_events, unready_pipe, { EFAULT, 0 } },
};
#define NSCENARIOS	(sizeof(scenarios) / sizeof(scenarios[0]))
#define POINTS		3

static int allowed(const struct scenario *s, int err)
{
	unsigned int i;

	for (i = 0; i < sizeof(s->allowed) / sizeof(s->allowed[0]); i++)
		if (s->allowed[i] && s->allowed[i] == err)
			return 1;
	return 0;
}

/* The registrations a scenario may leave, removed between rounds. */
static void reset_queue(void)
{
	struct ukevent uk[6];
	unsigned int i;

	uk[0] = timer_ms(60000, 0, 1);
	uk[1] = poll_ukevent(efd, POLLIN, 0, 2);
	uk[2] = poll_ukevent(pipefd[0], KEVENT_SOCKET_RECV, 0, 3);
	uk[2].type = KEVENT_PIPE;
	uk[3] = poll_ukevent(sock[0], KEVENT_SOCKET_RECV, 0, 4);
	uk[3].type = KEVENT_SOCKET;
	uk[4] = poll_ukevent(SIGUSR2, KEVENT_SIGNAL_DELIVERY, 0, 5);
	uk[4].type = KEVENT_SIGNAL;
	for (i = 0; i < 5; i++)
		ctl1(queue, KEVENT_CTL_REMOVE, &uk[i]);
}

/* Fail the 1st, 2nd, ... fault site of one call until none is left. */
static void run(const struct scenario *s)
{
	unsigned int n, injected = 0, bad = 0, changed = 0;
	int before, after, last_err = 0;
	struct outcome o = { -1, 0 };

	for (n = 1; n < 10000; n++) {
		if (s->setup)
			s->setup();
		before = registrations(queue);
		fail_nth_set(n);
		o = s->call();
		if (fail_nth_left()) {
			fail_nth_set(0);
			break;	/* the call made fewer than n attempts */
		}
		injected++;
		if (o.ret < 0 && !allowed(s, o.err)) {
			bad++;
			last_err = o.err;
		}
		after = registrations(queue);
		/* A failed call leaves the queue as it was. */
		if (o.ret < 0 && after != before)
			changed++;
		if (s->undo)
			s->undo(o);
		reset_queue();
	}
	diag("%s: %u fault sites failed in turn", s->name, injected);
	ok(injected > 0 && o.ret >= 0,
	   "%s: fails at each of its %u fault sites, then succeeds %s",
	   s->name, injected, s->tags);
	ok(!bad, "%s: every failure is a documented errno (%u not: %s) %s",
	   s->name, bad, bad ? strerror(last_err) : "-", s->tags);
	ok(!changed, "%s: a failed call leaves the queue as it was (%u did not)",
	   s->name, changed);
	if (s->undo)
		s->undo(o);
	reset_queue();
}

int main(void)
{
	unsigned int i;

	plan(NSCENARIOS * POINTS);
	tap_watchdog(300);
	kevent_require();
	if (!fault_injection_setup()) {
		skip(NSCENARIOS * POINTS,
		     "no /proc/thread-self/fail-nth: fault injection is in the debug kernel only");
		return tap_done();
	}

	ring = ring_alloc(16, NULL);
	queue = anchored_queue();
	efd = eventfd(0, EFD_CLOEXEC);
	if (!ring || efd < 0 || pipe2(pipefd, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock))
		bail_out("setup: %s", strerror(errno));
	for (i = 0; i < NSCENARIOS; i++)
		run(&scenarios[i]);
	return tap_done();
}
