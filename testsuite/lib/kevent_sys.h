/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent_sys.h - small helpers for the tests, over <kevent.h>.
 * Include "tap.h" first: the event comparisons are TAP points.
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

/* A request of a type whose id is a descriptor (poll, pipe, socket). */
static inline struct ukevent fd_ukevent(__u32 type, int fd, __u32 event,
					__u32 req_flags, __u64 ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = (__u32)fd;
	uk.type = type;
	uk.event = event;
	uk.req_flags = req_flags;
	uk.ptr = ptr;
	return uk;
}

/* A KEVENT_POLL request on fd. */
static inline struct ukevent poll_ukevent(int fd, __u32 events,
					  __u32 req_flags, __u64 ptr)
{
	return fd_ukevent(KEVENT_POLL, fd, events, req_flags, ptr);
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

/* A new queue without a ring, with kevent_init()'s flags, or bail out. */
static inline int new_queue(unsigned int flags)
{
	int fd = sys_kevent_init(NULL, 0, flags);

	if (fd < 0)
		bail_out("kevent_init: %s", strerror(errno));
	return fd;
}

/* ADD of one registration a test needs: bail out if it fails. */
#define setup_add(fd, uk) \
	must(add1((fd), (uk)) == 0, "setup ADD: %s", strerror(errno))

/* The user data of anchored_queue()'s timer. */
#define ANCHOR_PTR	0xa9c4

/*
 * A new queue holding one far-off timer, so that REMOVE, MODIFY or READY
 * of one entry that is not there is not refused for asking more than the
 * queue holds.
 */
static inline int anchored_queue(void)
{
	int fd = new_queue(0);

	if (add1(fd, timer_ms(100000, 0, ANCHOR_PTR)))
		bail_out("anchor timer: %s", strerror(errno));
	return fd;
}

/*
 * Comparing events field by field, as libkqueue's kevent_cmp() does:
 *
 *	is_ukevent(got, want, fields, fmt, ...)
 *		one point: *got equals *want in the fields of the mask
 *	is_event(n, got, want, fields, fmt, ...)
 *		one point: n == 1 (one event came) and is_ukevent()
 *
 * got and want are pointers; UKEV(.type = ..., .ptr = ...) makes a want.
 * A failure names the file and line of the check and dumps both
 * events, the fields that differ marked with '*', those not compared
 * in parentheses.
 */
#define UK_TYPE		(1U << 0)
#define UK_ID		(1U << 1)
#define UK_EVENT	(1U << 2)
#define UK_REQ_FLAGS	(1U << 3)
#define UK_RET_FLAGS	(1U << 4)
#define UK_RET_DATA0	(1U << 5)
#define UK_RET_DATA1	(1U << 6)
#define UK_PTR		(1U << 7)
#define UK_RET_DATA	(UK_RET_DATA0 | UK_RET_DATA1)
#define UK_KEY		(UK_TYPE | UK_ID | UK_PTR)	/* the identity */
#define UK_ALL		0xffU

#define UKEV(...)	(&(const struct ukevent){ __VA_ARGS__ })

/* The fields of the mask in which a and b differ. */
static inline unsigned int ukevent_diff(const struct ukevent *a,
					const struct ukevent *b,
					unsigned int fields)
{
	unsigned int d = 0;

	if (a->type != b->type)
		d |= UK_TYPE;
	if (a->id.raw[0] != b->id.raw[0] || a->id.raw[1] != b->id.raw[1])
		d |= UK_ID;
	if (a->event != b->event)
		d |= UK_EVENT;
	if (a->req_flags != b->req_flags)
		d |= UK_REQ_FLAGS;
	if (a->ret_flags != b->ret_flags)
		d |= UK_RET_FLAGS;
	if (a->ret_data[0] != b->ret_data[0])
		d |= UK_RET_DATA0;
	if (a->ret_data[1] != b->ret_data[1])
		d |= UK_RET_DATA1;
	if (a->ptr != b->ptr)
		d |= UK_PTR;
	return d & fields;
}

/* One field: "*name value" if it differs, "(name value)" if not compared. */
static inline size_t ukevent_field(char *buf, size_t len, const char *text,
				   unsigned int f, unsigned int fields,
				   unsigned int diff)
{
	int n = snprintf(buf, len, (diff & f) ? " *%s" : (fields & f) ?
			 " %s" : " (%s)", text);

	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/*
 * "type 2 *id 0:20000000 (event 0x1) (req_flags 0x1) *ret_flags 0x3
 * (ret_data[0] 0) ret_data[1] -22 ptr 0x5": '*' marks a field that
 * differs, parentheses one that is not compared.
 */
static inline void ukevent_format(char *buf, size_t len,
				  const struct ukevent *uk,
				  unsigned int fields, unsigned int diff)
{
	char t[64];
	size_t off = 0;

	buf[0] = '\0';
#define UK_FIELD(f, ...) do {						\
	snprintf(t, sizeof(t), __VA_ARGS__);				\
	off += ukevent_field(buf + off, len - off, t, f, fields, diff);	\
} while (0)
	UK_FIELD(UK_TYPE, "type %u", uk->type);
	UK_FIELD(UK_ID, "id %u:%u", uk->id.raw[0], uk->id.raw[1]);
	UK_FIELD(UK_EVENT, "event %#x", uk->event);
	UK_FIELD(UK_REQ_FLAGS, "req_flags %#x", uk->req_flags);
	UK_FIELD(UK_RET_FLAGS, "ret_flags %#x", uk->ret_flags);
	UK_FIELD(UK_RET_DATA0, "ret_data[0] %d", (int)uk->ret_data[0]);
	UK_FIELD(UK_RET_DATA1, "ret_data[1] %d", (int)uk->ret_data[1]);
	UK_FIELD(UK_PTR, "ptr %#llx", (unsigned long long)uk->ptr);
#undef UK_FIELD
}

static inline void ukevent_dump(const struct ukevent *got,
				const struct ukevent *want,
				unsigned int fields, unsigned int diff)
{
	char text[256];

	ukevent_format(text, sizeof(text), want, fields, diff);
	diag("  want:%s", text);
	ukevent_format(text, sizeof(text), got, fields, diff);
	diag("  got: %s", text);
}

static inline int tap_is_event_v(const char *file, int line, int n,
				 const struct ukevent *got,
				 const struct ukevent *want,
				 unsigned int fields, const char *fmt,
				 va_list ap)
{
	int saved = errno;
	unsigned int diff = ukevent_diff(got, want, fields);
	int ret = tap_vok(n == 1 && !diff, fmt, ap);

	if (!ret) {
		if (n < 0)
			tap_where(file, line, "got -1 (errno %d, %s), want 1 "
				  "event", saved, strerror(saved));
		else if (n != 1)
			tap_where(file, line, "got %d events, want 1%s", n,
				  n > 0 ? "; the first:" : "");
		else
			tap_where(file, line,
				  "the event differs ('*': differs, (...): not "
				  "compared):");
		if (n > 0)
			ukevent_dump(got, want, fields, diff);
	}
	errno = saved;
	return ret;
}

static inline TAP_PRINTF(6, 7)
int tap_is_ukevent(const char *file, int line, const struct ukevent *got,
		   const struct ukevent *want, unsigned int fields,
		   const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = tap_is_event_v(file, line, 1, got, want, fields, fmt, ap);
	va_end(ap);
	return ret;
}

static inline TAP_PRINTF(7, 8)
int tap_is_event_n(const char *file, int line, int n,
		   const struct ukevent *got, const struct ukevent *want,
		   unsigned int fields, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = tap_is_event_v(file, line, n, got, want, fields, fmt, ap);
	va_end(ap);
	return ret;
}

#define is_ukevent(got, want, fields, ...) \
	tap_is_ukevent(__FILE__, __LINE__, (got), (want), (fields), \
		       __VA_ARGS__)
#define is_event(n, got, want, fields, ...) \
	tap_is_event_n(__FILE__, __LINE__, (n), (got), (want), (fields), \
		       __VA_ARGS__)

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

static inline long long realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A KEVENT_FLAGS_ABSTIME deadline ms from now (negative: in the past). */
static inline struct __kernel_timespec realtime_in(long long ms)
{
	long long at = realtime_ns() + ms * 1000000LL;

	return ts(at / 1000000000LL, at % 1000000000LL);
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

/* An address whose first @mapped bytes end a page, before an unmapped one. */
static inline void *mapped_before_hole(size_t mapped)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * (size_t)psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p + psz, (size_t)psz);
	return p + psz - mapped;
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

/*
 * The scheduler state letter ('S' sleeping, 'D' uninterruptible) of
 * DIR/ID/stat: a process in "/proc", a thread of ours in
 * "/proc/self/task".  '?' if it cannot be read.
 */
static inline char proc_state(const char *dir, pid_t id)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", dir, (int)id);
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

/* The scheduler state letter of one of our threads ('S' = sleeping). */
static inline char thread_state(pid_t tid)
{
	return proc_state("/proc/self/task", tid);
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
