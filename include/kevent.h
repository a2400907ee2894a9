/* SPDX-License-Identifier: MIT */
/*
 * kevent.h - call the kevent system calls from user space.
 *
 * The C library has no wrappers for kevent, and <linux/kevent.h>, the
 * kernel's UAPI header, carries no system call numbers (upstream UAPI
 * headers leave them to <asm/unistd.h>).  This header gives both: the
 * numbers __NR_kevent_* of the kevent series for Linux 6.1, and one
 * inline wrapper per system call, named after it, which returns what
 * syscall(2) returns: the result, or -1 with errno set.
 *
 * These numbers belong to other system calls on Linux 6.5 and later,
 * so call kevent_probe() once before any wrapper: it asks the running
 * kernel, through /dev/kevent, whether it provides kevent at exactly
 * these numbers, and never calls a system call by number itself.
 * See kevent(7), kevent_probe(3), and the page of each system call
 * (man kevent_init, ...), which documents its wrapper.
 *
 * C99 or C++; define _GNU_SOURCE or _DEFAULT_SOURCE before the first
 * #include, as syscall(2) asks.  The GNU modes (-std=gnu11, the default
 * of gcc) and C++ define _DEFAULT_SOURCE already; the strict ones
 * (-std=c99, -std=c11) do not, and get the #error below.
 */
#ifndef KEVENT_USER_H
#define KEVENT_USER_H

#include <errno.h>

/*
 * syscall() and O_CLOEXEC are declared only with those macros; without
 * this check a strict build fails inside kevent_probe() with an error
 * about O_CLOEXEC that does not say what to do.  glibc tells through
 * __USE_MISC, which <errno.h> has defined by now; another C library
 * is judged by the macros themselves.
 */
#if defined(__GLIBC__)
#if !defined(__USE_MISC)
#define __KEVENT_NEEDS_SOURCE
#endif
#elif defined(__STRICT_ANSI__) && !defined(_GNU_SOURCE) && \
	!defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE)
#define __KEVENT_NEEDS_SOURCE
#endif
#ifdef __KEVENT_NEEDS_SOURCE
#error "<kevent.h> needs syscall(2): define _GNU_SOURCE or _DEFAULT_SOURCE before any #include"
#else	/* the rest, which would only add errors to the one above */

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kevent.h>
#include <linux/time_types.h>

#ifndef __NR_kevent_init
#if defined(__x86_64__) && defined(__ILP32__)
#define __KEVENT_NR_BASE	(0x40000000 + 451)	/* x32 */
#elif defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || \
	defined(__riscv) || defined(__loongarch__)
#define __KEVENT_NR_BASE	451
#else
#error "kevent.h: no kevent system call numbers for this architecture"
#endif
#define __NR_kevent_init	(__KEVENT_NR_BASE + 0)
#define __NR_kevent_ctl		(__KEVENT_NR_BASE + 1)
#define __NR_kevent_get_events	(__KEVENT_NR_BASE + 2)
#define __NR_kevent_wait	(__KEVENT_NR_BASE + 3)
#define __NR_kevent_commit	(__KEVENT_NR_BASE + 4)
#endif

/*
 * kevent_probe - does the running kernel provide kevent?
 * @abi: where to store what it reports, or NULL
 *
 * Returns 0 if it does, at the numbers of this header; otherwise -1
 * with errno ENOSYS (no kevent, or kevent at other numbers), or the
 * error of open(2) on /dev/kevent (EACCES, EMFILE, ENFILE, ENOMEM).
 */
static inline int kevent_probe(struct kevent_abi *abi)
{
	struct kevent_abi a;
	int fd, ret, err;

	fd = open("/dev/kevent", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
			errno = ENOSYS;
		return -1;
	}
	ret = ioctl(fd, KEVENT_IOC_GET_ABI, &a);
	err = errno;
	close(fd);
	if (ret) {
		errno = err == ENOTTY || err == EINVAL ? ENOSYS : err;
		return -1;
	}
	if (a.version != KEVENT_ABI_VERSION ||
	    a.nr_init != (__u32)__NR_kevent_init ||
	    a.nr_ctl != (__u32)__NR_kevent_ctl ||
	    a.nr_get_events != (__u32)__NR_kevent_get_events ||
	    a.nr_wait != (__u32)__NR_kevent_wait ||
	    a.nr_commit != (__u32)__NR_kevent_commit) {
		errno = ENOSYS;
		return -1;
	}
	if (abi)
		*abi = a;
	return 0;
}

static inline int kevent_init(struct kevent_ring *ring,
			      unsigned int ring_size, unsigned int flags)
{
	return (int)syscall(__NR_kevent_init, ring, (unsigned long)ring_size,
			    (unsigned long)flags);
}

static inline int kevent_ctl(int fd, unsigned int cmd, unsigned int num,
			     struct ukevent *arg)
{
	return (int)syscall(__NR_kevent_ctl, (long)fd, (unsigned long)cmd,
			    (unsigned long)num, arg);
}

static inline int kevent_get_events(int fd, unsigned int min_nr,
				    unsigned int max_nr,
				    const struct __kernel_timespec *timeout,
				    struct ukevent *buf, unsigned int flags)
{
	return (int)syscall(__NR_kevent_get_events, (long)fd,
			    (unsigned long)min_nr, (unsigned long)max_nr,
			    timeout, buf, (unsigned long)flags);
}

static inline int kevent_wait(int fd, unsigned int num,
			      unsigned int old_uidx,
			      const struct __kernel_timespec *timeout,
			      unsigned int flags)
{
	return (int)syscall(__NR_kevent_wait, (long)fd, (unsigned long)num,
			    (unsigned long)old_uidx, timeout,
			    (unsigned long)flags);
}

static inline int kevent_commit(int fd, unsigned int new_uidx,
				unsigned int over)
{
	return (int)syscall(__NR_kevent_commit, (long)fd,
			    (unsigned long)new_uidx, (unsigned long)over);
}

/*
 * The bytes of the ring that kevent_init() with KEVENT_INIT_DIRECT
 * takes: the header, ring_size slots and the trailer.
 */
#define KEVENT_DIRECT_RING_BYTES(ring_size)				\
	(sizeof(struct kevent_ring) +					\
	 (size_t)(ring_size) * sizeof(struct ukevent) +			\
	 sizeof(struct kevent_ring_tail))

/* The trailer of a KEVENT_INIT_DIRECT ring, after its last slot. */
static inline struct kevent_ring_tail *
kevent_ring_tail(struct kevent_ring *ring, unsigned int ring_size)
{
	return (struct kevent_ring_tail *)(void *)&ring->event[ring_size];
}

/*
 * kevent_ring_take - copy the events of a direct ring out, for its only
 * consumer
 * @ring, @ring_size: as given to kevent_init()
 * @buf: where to copy them
 * @max: the most to copy
 *
 * Hands the slots back to the kernel (uhead) and returns how many
 * events were copied; 0 means the ring is empty, and a call of
 * kevent_wait() with old_uidx the tail's uhead waits for more.
 */
static inline unsigned int kevent_ring_take(struct kevent_ring *ring,
					    unsigned int ring_size,
					    struct ukevent *buf,
					    unsigned int max)
{
	struct kevent_ring_tail *t = kevent_ring_tail(ring, ring_size);
	__u32 head = t->uhead;
	__u32 tail = __atomic_load_n(&t->ktail, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	for (; head != tail && n < max; head++)
		buf[n++] = ring->event[head & (ring_size - 1)];
	__atomic_store_n(&t->uhead, head, __ATOMIC_RELEASE);
	return n;
}

/*
 * kevent_ring_take_shared - copy one event of a direct ring out, for
 * one of several consumer threads
 * @ring, @ring_size: as given to kevent_init()
 * @ev: where to copy it
 *
 * A thread claims the next slot with uclaim, copies it, and hands it
 * back once every slot claimed before it is back: uhead moves in order.
 * Returns 1, or 0 if the ring is empty: then kevent_wait() with
 * old_uidx the trailer's uclaim waits until a slot is left to claim.
 */
static inline int kevent_ring_take_shared(struct kevent_ring *ring,
					  unsigned int ring_size,
					  struct ukevent *ev)
{
	struct kevent_ring_tail *t = kevent_ring_tail(ring, ring_size);
	__u32 c = __atomic_load_n(&t->uclaim, __ATOMIC_RELAXED);

	do {
		if (c == __atomic_load_n(&t->ktail, __ATOMIC_ACQUIRE))
			return 0;
	} while (!__atomic_compare_exchange_n(&t->uclaim, &c, c + 1, 1,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	*ev = ring->event[c & (ring_size - 1)];
	while (__atomic_load_n(&t->uhead, __ATOMIC_ACQUIRE) != c)
		sched_yield();
	__atomic_store_n(&t->uhead, c + 1, __ATOMIC_RELEASE);
	return 1;
}

#endif	/* __KEVENT_NEEDS_SOURCE */
#endif /* KEVENT_USER_H */
