/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap_checks.h - the checks of the kevent testsuite's TAP interface: ok(),
 * is_int(), is_err(), must() and tap_watchdog(), with the file and line
 * of a failed point.  They are written on top of what the including
 * tap.h provides, TAP_PRINTF(), tap_vok(), diag() and bail_out(): the
 * testsuite's own testsuite/lib/tap.h, and the selftests' lib/tap.h,
 * which reports through kselftest.h (make patchset copies this file
 * there).  Include it from a tap.h only.
 */
#ifndef KEVENT_TAP_CHECKS_H
#define KEVENT_TAP_CHECKS_H

/* "# FILE:LINE: text" after a failed point. */
static inline TAP_PRINTF(3, 4) void tap_where(const char *file, int line,
					       const char *fmt, ...)
{
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	diag("%s:%d: %s", file, line, text);
}

static inline TAP_PRINTF(4, 5)
int tap_ok_at(const char *file, int line, int cond, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = tap_vok(cond != 0, fmt, ap);
	va_end(ap);
	if (!ret)
		tap_where(file, line, "failed");
	return ret;
}

#define ok(cond, ...) tap_ok_at(__FILE__, __LINE__, (cond), __VA_ARGS__)

static inline TAP_PRINTF(5, 6)
int tap_is_int(const char *file, int line, long long got, long long want,
	       const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = tap_vok(got == want, fmt, ap);
	va_end(ap);
	if (!ret) {
		if (got == -1)
			tap_where(file, line,
				  "got: -1 (errno %d, %s), want: %lld",
				  saved, strerror(saved), want);
		else
			tap_where(file, line, "got: %lld, want: %lld", got,
				  want);
	}
	errno = saved;
	return ret;
}

#define is_int(got, want, ...) \
	tap_is_int(__FILE__, __LINE__, (long long)(got), (long long)(want), \
		   __VA_ARGS__)

static inline TAP_PRINTF(6, 7)
int tap_is_err(const char *file, int line, long long ret, int err, int want,
	       const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(ret == -1 && err == want, fmt, ap);
	va_end(ap);
	if (!r) {
		if (ret == -1)
			tap_where(file, line,
				  "got: -1 errno %d (%s), want: errno %d (%s)",
				  err, strerror(err), want, strerror(want));
		else
			tap_where(file, line,
				  "got: %lld, want: -1 errno %d (%s)",
				  ret, want, strerror(want));
	}
	return r;
}

/* ok(expr == -1 && errno == want); errno is read right after expr. */
#define is_err(expr, want, ...) ({					\
	long long tap_r_ = (long long)(expr);				\
	int tap_e_ = errno;						\
	tap_is_err(__FILE__, __LINE__, tap_r_, tap_e_, (want),		\
		   __VA_ARGS__);					\
})

/* A setup step that must work: bail out (the program fails) if not. */
#define must(cond, ...) do {						\
	if (!(cond))							\
		bail_out(__VA_ARGS__);					\
} while (0)

static inline void *tap_watchdog_thread(void *arg)
{
	unsigned int sec = (unsigned int)(unsigned long)arg;
	struct timespec t = { .tv_sec = sec, .tv_nsec = 0 };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
	bail_out("watchdog: still running after %u s", sec);
	return NULL;
}

/*
 * How much longer than on the normal x86 kernel things may take: a debug
 * kernel, or an emulated arm64 guest, is slower (/init exports
 * kevent.time_scale as KEVENT_TIME_SCALE).
 */
static inline unsigned int tap_time_scale(void)
{
	const char *scale = getenv("KEVENT_TIME_SCALE");

	return scale && atoi(scale) > 1 ? (unsigned int)atoi(scale) : 1;
}

/*
 * Bail out after sec seconds, times tap_time_scale(), from a thread that
 * blocks every signal (so it never takes a signal meant for the test).
 */
static inline void tap_watchdog(unsigned int sec)
{
	sigset_t all, old;
	pthread_t th;

	sec *= tap_time_scale();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&th, NULL, tap_watchdog_thread,
			   (void *)(unsigned long)sec))
		bail_out("pthread_create(watchdog) failed");
	pthread_detach(th);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

#endif /* KEVENT_TAP_CHECKS_H */
