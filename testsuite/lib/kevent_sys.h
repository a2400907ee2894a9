/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent_sys.h - small helpers for the tests, over <kevent.h>.
 */
#ifndef KEVENT_TESTSUITE_KEVENT_SYS_H
#define KEVENT_TESTSUITE_KEVENT_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <kevent.h>

/* The tests call the system calls through <kevent.h>'s wrappers. */
#define sys_kevent_init		kevent_init
#define sys_kevent_ctl		kevent_ctl
#define sys_kevent_get_events	kevent_get_events
#define sys_kevent_wait		kevent_wait
#define sys_kevent_commit	kevent_commit

/* A timespec value, and a pointer to a temporary one. */
static inline struct __kernel_timespec ts(long long sec, long long nsec)
{
	struct __kernel_timespec t;

	t.tv_sec = sec;
	t.tv_nsec = nsec;
	return t;
}

#define TSP(sec, nsec) \
	(&(struct __kernel_timespec){ .tv_sec = (sec), .tv_nsec = (nsec) })

/* A KEVENT_TIMER request: period sec + nsec, the caller's ptr. */
static inline struct ukevent timer_ukevent(__u32 sec, __u32 nsec,
					   __u32 req_flags, __u64 ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = sec;
	uk.id.raw[1] = nsec;
	uk.type = KEVENT_TIMER;
	uk.event = KEVENT_TIMER_FIRED;
	uk.req_flags = req_flags;
	uk.ptr = ptr;
	return uk;
}

static inline struct ukevent timer_ms(unsigned int ms, __u32 req_flags,
				      __u64 ptr)
{
	return timer_ukevent(ms / 1000, (ms % 1000) * 1000000U, req_flags, ptr);
}

/* A KEVENT_POLL request on fd. */
static inline struct ukevent poll_ukevent(int fd, __u32 events,
					  __u32 req_flags, __u64 ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = (__u32)fd;
	uk.type = KEVENT_POLL;
	uk.event = events;
	uk.req_flags = req_flags;
	uk.ptr = ptr;
	return uk;
}

/* kevent_ctl() with one entry. */
static inline int ctl1(int fd, unsigned int cmd, struct ukevent *uk)
{
	return sys_kevent_ctl(fd, cmd, 1, uk);
}

/* Add one entry that must be registered (ADD returns 0); 0 or -1. */
static inline int add1(int fd, struct ukevent uk)
{
	int ret = ctl1(fd, KEVENT_CTL_ADD, &uk);

	if (ret > 0) {
		errno = -(int)uk.ret_data[1];
		return -1;
	}
	return ret;
}

/*
 * A new queue holding one far-off timer, so that REMOVE, MODIFY or READY
 * of one entry that is not there is not refused for asking more than the
 * queue holds.
 */
static inline int anchored_queue(void)
{
	int fd = sys_kevent_init(NULL, 0, 0);

	if (fd < 0)
		bail_out("kevent_init: %s", strerror(errno));
	if (add1(fd, timer_ms(100000, 0, 0xa9c4)))
		bail_out("anchor timer: %s", strerror(errno));
	return fd;
}

/* Harvest without blocking. */
static inline int harvest(int fd, struct ukevent *buf, unsigned int max)
{
	return sys_kevent_get_events(fd, 0, max, TSP(0, 0), buf, 0);
}

/* Wait up to ms for one event. */
static inline int wait1(int fd, struct ukevent *uk, unsigned int ms)
{
	return sys_kevent_get_events(fd, 1, 1, TSP(ms / 1000,
			(ms % 1000) * 1000000LL), uk, 0);
}

static inline long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline long long ms_since(long long start_ns)
{
	return (now_ns() - start_ns) / 1000000;
}

/* Low 32 bits of CLOCK_MONOTONIC in ms, as timer ret_data[0]. */
static inline __u32 mono_ms32(void)
{
	return (__u32)(now_ns() / 1000000);
}

static inline void msleep(unsigned int ms)
{
	struct timespec t = { .tv_sec = ms / 1000,
			      .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* An address with nothing mapped at it. */
static inline void *unmapped_page(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, (size_t)psz);
	return p;
}

/* A mapped, read-only page holding a copy of len bytes of src. */
static inline void *readonly_copy(const void *src, size_t len)
{
	long psz = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (src)
		memcpy(p, src, len);
	if (mprotect(p, (size_t)psz, PROT_READ)) {
		munmap(p, (size_t)psz);
		return NULL;
	}
	return p;
}

static inline size_t kevent_ring_bytes(unsigned int ring_size)
{
	return sizeof(struct kevent_ring) +
	       (size_t)ring_size * sizeof(struct ukevent);
}

/* A page-aligned ring of ring_size slots, filled with 0xff. */
static inline struct kevent_ring *ring_alloc(unsigned int ring_size,
					     size_t *mapped)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = (kevent_ring_bytes(ring_size) + (size_t)psz - 1) &
		     ~((size_t)psz - 1);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xff, len);
	if (mapped)
		*mapped = len;
	return p;
}

/* The scheduler state letter of one of our threads ('S' = sleeping). */
static inline char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return '?';
	return p[2];
}

/* Wait up to ms for thread tid to be asleep; 1 if it is. */
static inline int wait_sleeping(pid_t tid, unsigned int ms)
{
	long long start = now_ns();

	while (ms_since(start) < ms) {
		if (thread_state(tid) == 'S')
			return 1;
		msleep(1);
	}
	return 0;
}

/*
 * Exit with a TAP bail-out unless the running kernel provides kevent
 * at the numbers of <kevent.h>: without it no test can say anything,
 * and a system call at those numbers may be another one.
 */
static inline void kevent_require(void)
{
	if (kevent_probe(NULL)) {
		printf("Bail out! kevent_probe: %s: not a kevent kernel?\n",
		       strerror(errno));
		fflush(stdout);
		exit(1);
	}
}

#endif /* KEVENT_TESTSUITE_KEVENT_SYS_H */
