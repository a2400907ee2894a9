/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - a tiny header-only TAP (Test Anything Protocol) producer.
 *
 *	plan(n)				first: n points follow (see below)
 *	ok(cond, fmt, ...)		one test point, returns cond != 0
 *	is_int(got, want, fmt, ...)	ok(got == want) with a diagnostic
 *	is_err(expr, E, fmt, ...)	ok(expr == -1 && errno == E)
 *	(is_ukevent() and is_event(), which compare events field by
 *	field, are in kevent_sys.h)
 *	skip(n, fmt, ...)		n test points skipped
 *	diag(fmt, ...)			a "# " comment line
 *	bail_out(fmt, ...)		"Bail out!" and exit(1)
 *	tap_watchdog(sec)		bail out if the test runs longer
 *	must(cond, fmt, ...)		a setup step: bail out unless cond
 *	return tap_done();		0 if all planned points ran and passed
 *
 * plan(n) must come before the first point, with n fixed: a program
 * whose path gets shorter then fails.  plan() adds one point of its own,
 * "running as 64-bit code" (or 32-bit when the Makefile builds the
 * program with -m32 -DKEVENT_TEST_M32), so it prints "1..n+1".
 *
 * ok(), is_int() and is_err() are macros: a point that fails is
 * followed by a diagnostic naming the file and line of the check
 * ("# testsuite/tests/ctl.c:57: got: 0, want: 1"), which report.py
 * shows under the failure.
 *
 * A point that checks a statement of the manual carries its tag in the
 * description: "[kevent_wait.2 EINVAL no-ring]" for an ERRORS entry,
 * "[KEVENT_REQ_ET.2const]" for a page (doc/testing.md, Traceability).
 *
 * Every line is written with one write(2), so nothing is lost or
 * duplicated when the test is killed by a timeout or forks.
 */
#ifndef KEVENT_TESTSUITE_TAP_H
#define KEVENT_TESTSUITE_TAP_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))

static unsigned int tap_count;
static unsigned int tap_failed;
static unsigned int tap_planned;
static int tap_started;
static pthread_mutex_t tap_lock = PTHREAD_MUTEX_INITIALIZER;

/* Write one line; the caller holds tap_lock. */
static inline void tap_write_line(const char *line)
{
	size_t len = strlen(line), off = 0;
	ssize_t n;

	while (off < len) {
		n = write(STDOUT_FILENO, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

static inline void tap_header(void)
{
	if (!tap_started) {
		tap_started = 1;
		tap_write_line("TAP version 13\n");
	}
}

/* prefix + formatted text (newlines flattened) + "\n", one write. */
static inline void tap_vemit(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	size_t i, n;
	int saved = errno;

	n = (size_t)snprintf(buf, sizeof(buf), "%s", prefix);
	if (n >= sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	for (i = n; buf[i]; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	buf[i] = '\n';
	buf[i + 1] = '\0';
	tap_header();
	tap_write_line(buf);
	errno = saved;
}

static inline TAP_PRINTF(2, 3) void tap_emit(const char *prefix,
					      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vemit(prefix, fmt, ap);
	va_end(ap);
}

/* The caller holds tap_lock: a point before plan() ends the program. */
static inline void tap_need_plan(void)
{
	if (!tap_planned) {
		tap_emit("Bail out! ", "a point before plan()");
		_exit(1);
	}
}

static inline TAP_PRINTF(1, 2) void diag(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&tap_lock);
	va_start(ap, fmt);
	tap_vemit("# ", fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&tap_lock);
}

static inline int tap_vok(int cond, const char *fmt, va_list ap)
{
	char prefix[32];

	pthread_mutex_lock(&tap_lock);
	tap_need_plan();
	tap_count++;
	if (!cond)
		tap_failed++;
	snprintf(prefix, sizeof(prefix), "%sok %u - ",
		 cond ? "" : "not ", tap_count);
	tap_vemit(prefix, fmt, ap);
	pthread_mutex_unlock(&tap_lock);
	return cond;
}

static inline TAP_PRINTF(2, 3) void skip(unsigned int n, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&tap_lock);
	tap_need_plan();
	while (n--) {
		tap_count++;
		tap_emit("", "ok %u # SKIP %s", tap_count, reason);
	}
	pthread_mutex_unlock(&tap_lock);
}

static inline TAP_PRINTF(1, 2) void bail_out(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&tap_lock);
	va_start(ap, fmt);
	tap_vemit("Bail out! ", fmt, ap);
	va_end(ap);
	_exit(1);
}

#include "tap_checks.h"

#ifdef KEVENT_TEST_M32
#define TAP_WORD_BITS	32
#else
#define TAP_WORD_BITS	64
#endif

/*
 * Declare the number of points up front, as kselftest's ksft_set_plan()
 * does: a program that ends early then fails for the runner too.  The
 * first point checks that the program is the code its name says: a
 * -m32 twin silently built as 64-bit code fails here.
 */
static inline void plan(unsigned int n)
{
	pthread_mutex_lock(&tap_lock);
	if (tap_planned || tap_count) {
		tap_emit("Bail out! ", "plan(%u) after %u points", n, tap_count);
		_exit(1);
	}
	tap_planned = n + 1;
	tap_emit("", "1..%u", tap_planned);
	pthread_mutex_unlock(&tap_lock);
	ok(sizeof(void *) * 8 == TAP_WORD_BITS,
	   "running as %d-bit code (sizeof(void *) is %u)", TAP_WORD_BITS,
	   (unsigned int)sizeof(void *));
}

static inline int tap_done(void)
{
	pthread_mutex_lock(&tap_lock);
	if (!tap_planned)
		tap_emit("# ", "no plan(): the program declared no points");
	else if (tap_count != tap_planned)
		tap_emit("# ", "planned %u points, ran %u", tap_planned,
			 tap_count);
	if (tap_failed)
		tap_emit("# ", "failed %u of %u", tap_failed, tap_count);
	pthread_mutex_unlock(&tap_lock);
	return tap_failed || !tap_planned || tap_count != tap_planned ?
	       EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* KEVENT_TESTSUITE_TAP_H */
