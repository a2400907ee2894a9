/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harness.h - helpers of the stress, fuzz and security tests, over
 * kevent_sys.h:
 *
 *	mk_uk(type, id, event, req_flags, ptr)	a ukevent request
 *	read_fdinfo(fd, buf, len)	/proc/self/fdinfo/FD into buf, or -1
 *	fdinfo_value(buf, "kevents")	a number of that text, or -1
 *	limit_probe(&err, &was)		how many registrations fit under a
 *					max_user_kevents of 64 (-1: no sysctl)
 *	leak_point(base, "the fuzz")	one point: as many fit as before
 *	timed_join(thread, deadline_ns)	pthread_join with a CLOCK_MONOTONIC
 *					deadline; 0 if joined
 *	wait_child(pid, ms)		its status, or -1 once killed
 *	bounded(fn, arg, ms, "what")	one point: fn(arg) in a child
 *					returned 0 within ms
 *	tcp_pair(sv)			two connected TCP sockets on
 *					127.0.0.1, or bail out
 *	dump_tasks(pid)			diag what each thread of pid does
 *	start_run("fuzz", argc, argv, 8, points, slack, &seed)
 *		"NAME [SECONDS [SEED]]": plan, watchdog at SECONDS + slack,
 *		KEVENT_RUN_SECONDS in the environment overriding SECONDS,
 *		kevent_require(), the seed in a diag line; returns SECONDS
 */
#ifndef KEVENT_TESTSUITE_HARNESS_H
#define KEVENT_TESTSUITE_HARNESS_H

#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"
#include "rand.h"

static inline struct ukevent mk_uk(uint32_t type, uint64_t id, uint32_t event,
				   uint32_t req_flags, uint64_t ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.type = type;
	uk.id.raw_u64 = id;
	uk.event = event;
	uk.req_flags = req_flags;
	uk.ptr = ptr;
	return uk;
}

/* The text of a file, NUL-terminated; its length or -1. */
static inline ssize_t read_text(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int f = open(path, O_RDONLY | O_CLOEXEC);

	if (f < 0)
		return -1;
	while ((n = read(f, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(f);
	if (n < 0)
		return -1;
	buf[got] = '\0';
	return got;
}

static inline ssize_t read_fdinfo(int fd, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return read_text(path, buf, len);
}

/* The number after "key:" at the start of a line of buf, or -1. */
static inline long fdinfo_value(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtol(p + klen + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static const char limit_path[] = "/proc/sys/fs/kevent/max_user_kevents";

/*
 * With fs.kevent.max_user_kevents lowered to 64 for a moment, how many
 * ADDs succeed on a fresh queue (the user's other registrations count
 * too); err gets the error of the one that fails, was the limit before.
 * -1 if the sysctl is not there or cannot be written.
 */
static inline int limit_probe(int *err, long *was)
{
	char old[64];
	struct ukevent uk;
	int fd, q, i, added = 0;
	ssize_t n;

	*err = 0;
	fd = open(limit_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, old, sizeof(old) - 1);
	if (n <= 0 || pwrite(fd, "64\n", 3, 0) != 3) {
		close(fd);
		return -1;
	}
	old[n] = '\0';
	*was = strtol(old, NULL, 10);
	q = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
	for (i = 0; i < 65 && q >= 0; i++) {
		uk = timer_ukevent(100000, (uint32_t)i, 0, (uint64_t)i);
		if (kevent_ctl(q, KEVENT_CTL_ADD, 1, &uk) != 0) {
			*err = (int)uk.ret_data[1];
			break;
		}
		added++;
	}
	if (q >= 0)
		close(q);
	if (pwrite(fd, old, (size_t)n, 0) != n)
		diag("restoring %s: %s", limit_path, strerror(errno));
	close(fd);
	return added;
}

/*
 * One test point: after the program closed everything, as many
 * registrations fit under the lowered limit as did before it started
 * (base, from limit_probe()), so it left none behind.
 */
static inline void leak_point(int base, const char *what)
{
	int after, err;
	long was = 0;

	after = limit_probe(&err, &was);
	if (after < 0 || base < 0) {
		skip(1, "no %s", limit_path);
		return;
	}
	if (base < 64)
		diag("before %s only %d ADDs fit in 64: registrations of earlier programs are still charged",
		     what, base);
	ok(after == base && err == -ENOSPC,
	   "no registration leaked: with max_user_kevents 64 (was %ld), %d ADDs fit after %s, %d before; then ENOSPC (%d)",
	   was, after, what, base, err);
}

static inline int timed_join(pthread_t th, long long deadline_ns)
{
	struct timespec ts;
	long long left = deadline_ns - now_ns();

	if (left < 0)
		left = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += left / 1000000000;
	ts.tv_nsec += left % 1000000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_nsec -= 1000000000;
		ts.tv_sec++;
	}
	return pthread_timedjoin_np(th, NULL, &ts);
}

/* Wait for pid up to ms; its status, or -1 (it is then killed). */
static inline int wait_child(pid_t pid, unsigned int ms)
{
	long long end = now_ns() + (long long)ms * 1000000;
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(500);
	}
}

/*
 * Run fn in a child; it exits 0 on success.  One point: the child ended
 * with status 0 within ms.  A child still in the kernel after SIGKILL
 * is said so (wait_child() reaps it once it leaves).
 */
static inline void bounded(int (*fn)(void *), void *arg, unsigned int ms,
		    const char *what)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (!pid)
		_exit(fn(arg) ? 1 : 0);
	st = wait_child(pid, ms);
	if (st == -1)
		diag("%s: no answer within %u ms, killed", what, ms);
	ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "%s (status %#x)", what, st);
}

static inline void tcp_pair(int sv[2])
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	must(l >= 0 && sv[0] >= 0 && !bind(l, (struct sockaddr *)&sin, len) &&
	     !getsockname(l, (struct sockaddr *)&sin, &len) && !listen(l, 1) &&
	     !connect(sv[0], (struct sockaddr *)&sin, len),
	     "a TCP connection on 127.0.0.1: %s", strerror(errno));
	sv[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	must(sv[1] >= 0, "accept4: %s", strerror(errno));
	close(l);
}

/*
 * What each thread of pid is doing, as diag lines: for a hang report.  Its
 * name (pthread_setname_np()), where it sleeps, its system call and its
 * kernel stack, which /proc shows a root process.
 */
static inline void dump_tasks(pid_t pid)
{
	char path[320], stat[512], wchan[64], sc[128], comm[32], stack[2048];
	char *line, *save;
	struct dirent *d;
	DIR *dir;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid,
			 d->d_name);
		n = read_text(path, comm, sizeof(comm));
		comm[n > 0 ? n - 1 : 0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", (int)pid,
			 d->d_name);
		if (read_text(path, wchan, sizeof(wchan)) < 0)
			wchan[0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", (int)pid,
			 d->d_name);
		n = read_text(path, sc, sizeof(sc));
		sc[n > 0 ? n - 1 : 0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid,
			 d->d_name);
		n = read_text(path, stat, sizeof(stat));
		stat[n > 0 ? n - 1 : 0] = '\0';
		diag("task %s (%s): wchan %s, syscall %s, stat %.60s", d->d_name,
		     comm, wchan, sc, stat);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", (int)pid,
			 d->d_name);
		if (read_text(path, stack, sizeof(stack)) <= 0)
			continue;
		for (line = strtok_r(stack, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			diag("    %s", line);
	}
	closedir(dir);
}

static inline int start_run(const char *name, int argc, char **argv, int dflt,
			    unsigned int points, unsigned int slack,
			    uint64_t *seed)
{
	const char *env = getenv("KEVENT_RUN_SECONDS");
	int secs = argc > 1 ? atoi(argv[1]) : dflt;

	/* The debug variant runs longer: /init exports kevent.run_seconds. */
	if (env && atoi(env) > 0)
		secs = atoi(env);

	if (secs < 1)
		secs = 1;
	*seed = seed_from_args(argc, argv, 2);
	plan(points);
	tap_watchdog((unsigned int)secs + slack);
	kevent_require();
	diag("seed %llu, %d s (reproduce: %s %d %llu)",
	     (unsigned long long)*seed, secs, name, secs,
	     (unsigned long long)*seed);
	return secs;
}

#endif /* KEVENT_TESTSUITE_HARNESS_H */
