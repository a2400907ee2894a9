/* SPDX-License-Identifier: GPL-2.0 */
/*
 * child.h - TAP points made in a child process, for the tests whose
 * subject may hang or kill the caller (hostile.c, limits.c):
 *
 *	child_points(n, ms, fn, after_fork, arg, "what", &status)
 *		fn(arg) in a child, whose n points the parent reports;
 *		after_fork(arg), if not NULL, runs in the parent meanwhile
 *	cok(cond, fmt, ...)		a point, in the child
 *	reap_within(pid, ms, &status)	waitpid() with a deadline
 *
 * Include "tap.h" and "kevent_sys.h" first.
 */
#ifndef KEVENT_TESTSUITE_CHILD_H
#define KEVENT_TESTSUITE_CHILD_H

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>

/* A point of the child, as it goes through the pipe. */
struct crec {
	int ok;
	int line;		/* of the cok() in the child */
	char file[56];
	char msg[252];
};

static int crec_fd = -1;

#define cok(cond, ...) cok_at(__FILE__, __LINE__, (cond), __VA_ARGS__)

static inline TAP_PRINTF(4, 5) void cok_at(const char *file, int line,
					   int cond, const char *fmt, ...)
{
	struct crec r;
	va_list ap;

	memset(&r, 0, sizeof(r));
	r.ok = cond != 0;
	r.line = line;
	snprintf(r.file, sizeof(r.file), "%s", file);
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	if (write(crec_fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(99);
}

/* Wait up to ms for pid; 1 and *status if it was reaped. */
static inline int reap_within(pid_t pid, long long ms, int *status)
{
	long long start = now_ns();

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return 1;
		if (ms_since(start) >= ms)
			return 0;
		msleep(5);
	}
}

/*
 * The child runs fn(arg) and reports each point with cok() through a
 * pipe; the parent turns them into TAP points, so that the count stays
 * right whatever the child does.  The parent waits at most ms in all,
 * then kills the child; points the child did not report fail.  Return 1
 * if the child was reaped (its wait status in *status), 0 if even
 * SIGKILL did not end it (stuck in the kernel).
 */
static inline int child_points(unsigned int n, unsigned int ms,
			       void (*fn)(void *), void (*after_fork)(void *),
			       void *arg, const char *what, int *status)
{
	long long start = now_ns(), left;
	unsigned int got = 0;
	const char *why = "ended early";
	int pfd[2], st = -1, reaped;
	struct crec r;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		bail_out("pipe2: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (!pid) {
		close(pfd[0]);
		crec_fd = pfd[1];
		fn(arg);
		_exit(0);
	}
	close(pfd[1]);
	if (after_fork)
		after_fork(arg);
	while (got < n) {
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		int pr;

		left = ms - ms_since(start);
		if (left <= 0) {
			why = "timed out";
			break;
		}
		pr = poll(&pf, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			why = "timed out";
			break;
		}
		if (read(pfd[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
			break;
		r.msg[sizeof(r.msg) - 1] = '\0';
		r.file[sizeof(r.file) - 1] = '\0';
		tap_ok_at(r.file, r.line, r.ok, "%s", r.msg);
		got++;
	}
	left = ms - ms_since(start);
	reaped = reap_within(pid, left > 0 ? left : 0, &st);
	if (!reaped) {
		kill(pid, SIGKILL);
		reaped = reap_within(pid, 3000, &st);
		why = "timed out and was killed";
		if (!reaped) {
			diag("%s: the child (pid %d) survives SIGKILL: it is "
			     "stuck in the kernel", what, (int)pid);
			why = "is stuck in the kernel: SIGKILL does not end it";
		}
	}
	close(pfd[0]);
	if (got < n)
		diag("%s: the child %s after %u of %u points (status %#x)",
		     what, why, got, n, st);
	for (; got < n; got++)
		ok(0, "%s: point %u of %u: the child %s", what, got + 1, n,
		   why);
	if (status)
		*status = st;
	return reaped;
}

#endif /* KEVENT_TESTSUITE_CHILD_H */
