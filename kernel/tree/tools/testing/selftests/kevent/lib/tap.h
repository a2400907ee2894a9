/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h for the selftests: the TAP interface of the kevent testsuite
 * (plan, skip, diag, bail_out, tap_done, and through tap_checks.h,
 * the testsuite's own, ok, is_int, is_err, must and tap_watchdog) on
 * top of kselftest.h, so that the testsuite's programs build here
 * unchanged and report through ksft_*.
 *
 * The points of a program may come from several threads: each goes out
 * under a lock, as one line, flushed at once, so that a fork() never
 * copies a line that is still buffered.
 */
#ifndef KEVENT_SELFTEST_TAP_H
#define KEVENT_SELFTEST_TAP_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../kselftest.h"

/* The testsuite's build checks the formats: lib/tap.h has the attribute. */
#define TAP_PRINTF(a, b)

static unsigned int tap_failed;
static int tap_planned;
static pthread_mutex_t tap_lock = PTHREAD_MUTEX_INITIALIZER;

/* The text of a point or comment: one line. */
static inline void tap_vformat(char *buf, size_t size, const char *fmt,
			       va_list ap)
{
	size_t i;

	vsnprintf(buf, size, fmt, ap);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
}

static inline TAP_PRINTF(1, 2) void diag(const char *fmt, ...)
{
	int saved = errno;
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	tap_vformat(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&tap_lock);
	ksft_print_msg("%s\n", text);
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
	errno = saved;
}

static inline TAP_PRINTF(1, 2) void bail_out(const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	tap_vformat(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&tap_lock);
	ksft_exit_fail_msg("%s\n", text);
}

/* A point before plan() is a bug of the test. */
static inline void tap_need_plan(void)
{
	if (!tap_planned)
		ksft_exit_fail_msg("a point before plan()\n");
}

static inline int tap_vok(int cond, const char *fmt, va_list ap)
{
	int saved = errno;
	char text[1024];

	tap_vformat(text, sizeof(text), fmt, ap);
	pthread_mutex_lock(&tap_lock);
	tap_need_plan();
	if (!cond)
		tap_failed++;
	ksft_test_result(cond, "%s\n", text);
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
	errno = saved;
	return cond;
}

static inline TAP_PRINTF(2, 3) void skip(unsigned int n, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	tap_vformat(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&tap_lock);
	tap_need_plan();
	while (n--)
		ksft_test_result_skip("%s\n", reason);
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
}

#include "tap_checks.h"

/*
 * ksft_set_plan() with the testsuite's first point: the program is
 * the code its name says (the testsuite also builds -m32 twins).
 */
static inline void plan(unsigned int n)
{
	pthread_mutex_lock(&tap_lock);
	if (tap_planned)
		ksft_exit_fail_msg("declared twice: %u points\n", n);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	ksft_set_plan(n + 1);
	tap_planned = 1;
	pthread_mutex_unlock(&tap_lock);
	ok(sizeof(void *) * 8 == sizeof(long) * 8,
	   "running as %d-bit code", (int)sizeof(void *) * 8);
}

/* The exit status for kselftest: pass, or fail with the totals. */
static inline int tap_done(void)
{
	pthread_mutex_lock(&tap_lock);
	fflush(stdout);
	if (!tap_planned)
		ksft_exit_fail_msg("no plan(): the program declared no points\n");
	if (tap_failed || ksft_test_num() != ksft_plan)
		ksft_exit_fail();
	ksft_exit_pass();
	return KSFT_PASS;
}

#endif /* KEVENT_SELFTEST_TAP_H */
