/* SPDX-License-Identifier: MIT */
/*
 * kbench: kevent against epoll, io_uring and poll(2), in one program.
 *
 * Every workload prints one line per measurement:
 *
 *   BENCH wl=WORKLOAD key=value ... mech=MECH rep=N metric=value ...
 *
 * which bench/report.py gathers into the tables of doc/benchmarks.md.
 * Every workload counts what each mechanism delivered against what was
 * made to happen, and exits with status 1 on the first lost, duplicate
 * or unexpected event ("FAIL ..." on stderr): a number is never printed
 * for a run that did not deliver exactly what it should have.
 */
#ifndef KBENCH_H
#define KBENCH_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kevent.h>

/* The mechanisms a harvest can go through. */
enum mech {
	M_RING,		/* kevent_wait() + kevent_commit(), KEVENT_REQ_ET */
	M_GETEV,	/* kevent_get_events(), KEVENT_REQ_ET */
	M_EPOLL_LT,	/* epoll_wait(), level-triggered */
	M_EPOLL_ET,	/* epoll_wait(), EPOLLET */
	M_URING,	/* io_uring multishot IORING_OP_POLL_ADD */
	M_POLL,		/* poll(2) over every descriptor */
	M_RING_LT,	/* as M_RING, level-triggered */
	M_GETEV_LT,	/* as M_GETEV, level-triggered */
	M_URING_NODT,	/* as M_URING, without DEFER_TASKRUN */
	M_DIRECT,	/* the ring KEVENT_INIT_DIRECT fills, KEVENT_REQ_ET */
	M_NULL,		/* none: the counted bench's writes and reads alone */
	M_NR
};

extern const char *const mech_name[M_NR];

/* Options every workload shares. */
struct opts {
	double secs;		/* length of one measured run */
	int reps;		/* repetitions, mechanisms interleaved */
	int smoke;		/* TAP output, small sizes */
};

extern struct opts opt;

/*
 * The markers of the counted bench (doc/benchmarks.md): bench/kcount.c,
 * a QEMU plugin, logs its instruction counts each time the guest runs
 * one, and knows it by its bytes, "nopl 0x4b45XXXX(%rax)" with the
 * marker's id in XXXX.  Anywhere else it is a 7-byte no-op.  A measured
 * phase runs between MARK_BEGIN and MARK_END, and its "COUNT ..." line
 * is printed after MARK_END, so that the n-th line goes with the n-th
 * pair of markers.
 */
#define MARK_BEGIN	1
#define MARK_END	2
#define MARK(id)	asm volatile(".byte 0x0f, 0x1f, 0x80, %c0 & 0xff, " \
				     "%c0 >> 8, 0x45, 0x4b" : : "i" (id) : \
				     "memory")

void counted(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void settle(void);

/* Monotonic time in nanoseconds. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void raise_nofile(long n);
int try_nofile(long n);
int parse_mechs(const char *list, int *out);
void *xcalloc(size_t n, size_t size);
int cmp_u64(const void *a, const void *b);

/* What a registration watches. */
enum kind {
	K_PIPE,		/* read end of a pipe: KEVENT_PIPE */
	K_UNIX,		/* AF_UNIX stream socket: KEVENT_SOCKET */
	K_TCP,		/* TCP loopback connection: KEVENT_SOCKET */
	K_IDLE,		/* eventfd that never fires: KEVENT_POLL */
};

/* The harvest engine: bench/engine.c. */
struct engine;

int engine_is_kevent(enum mech m);
struct engine *engine_new(enum mech m, int nfds, int maxbatch);
void engine_free(struct engine *e);
void engine_add(struct engine *e, const int *fds, int from, int to,
		enum kind kind);
void engine_del(struct engine *e, const int *fds, int from, int to,
		enum kind kind);
int engine_harvest(struct engine *e, int *idx, int max, int timeout_ms);
unsigned long engine_rearms(const struct engine *e);
unsigned long engine_eintr(const struct engine *e);

int wl_harvest(int argc, char **argv);
int wl_scale(int argc, char **argv);
int wl_churn(int argc, char **argv);
int wl_wake(int argc, char **argv);
int wl_timer(int argc, char **argv);
int wl_httpd(int argc, char **argv);
int wl_httpc(int argc, char **argv);

/* TAP for the smoke run (make check). */
void tap_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* KBENCH_H */
