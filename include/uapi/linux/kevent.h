/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kevent: generic kernel event notification.
 *
 * This is the only definition of the kevent user-space ABI: the kernel
 * build copies this file into the tree, and applications copy it into
 * theirs.  The system call numbers, the wrappers and the probe that
 * tells whether the running kernel has kevent are in <kevent.h>, the
 * user-space header of this project.  See kevent(7).
 */
#ifndef _UAPI_LINUX_KEVENT_H
#define _UAPI_LINUX_KEVENT_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Event types: ukevent.type. */
#define KEVENT_SOCKET		0
#define KEVENT_INODE		1
#define KEVENT_TIMER		2
#define KEVENT_POLL		3
#define KEVENT_NAIO		4
#define KEVENT_AIO		5
#define KEVENT_PIPE		6
#define KEVENT_SIGNAL		7
#define KEVENT_POSIX_TIMER	8
/* Number of types: one past the last.  Not a type itself. */
#define KEVENT_MAX		9

/* Request flags: ukevent.req_flags. */
#define KEVENT_REQ_ONESHOT	(1U << 0)	/* remove once delivered */
#define KEVENT_REQ_WAKEUP_ALL	(1U << 1)	/* wake every waiter */
#define KEVENT_REQ_ET		(1U << 2)	/* edge triggered */
#define KEVENT_REQ_LAST_CHECK	(1U << 3)	/* recheck when dequeued */
#define KEVENT_REQ_ALWAYS_QUEUE	(1U << 4)	/* queue if ready at ADD */
#define KEVENT_REQ_MASK		(KEVENT_REQ_ONESHOT | KEVENT_REQ_WAKEUP_ALL | \
				 KEVENT_REQ_ET | KEVENT_REQ_LAST_CHECK | \
				 KEVENT_REQ_ALWAYS_QUEUE)	/* addition */

/* Return flags: ukevent.ret_flags. */
#define KEVENT_RET_BROKEN	(1U << 0)	/* object gone or error */
#define KEVENT_RET_DONE		(1U << 1)	/* processed */
#define KEVENT_RET_COPY_FAILED	(1U << 2)	/* not copied to the ring */

/* kevent_ctl() commands. */
#define KEVENT_CTL_ADD		0
#define KEVENT_CTL_REMOVE	1
#define KEVENT_CTL_MODIFY	2
#define KEVENT_CTL_READY	3

/* kevent_get_events() and kevent_wait() flags. */
#define KEVENT_FLAGS_ABSTIME	(1U << 0)	/* timeout is CLOCK_REALTIME */

/* kevent_init() flags (additions). */
#define KEVENT_INIT_CLOEXEC	(1U << 0)	/* close-on-exec descriptor */
#define KEVENT_INIT_NONBLOCK	(1U << 1)	/* O_NONBLOCK descriptor */
#define KEVENT_INIT_DIRECT	(1U << 2)	/* the kernel fills the ring */

/* kevent_ring_tail.flags. */
#define KEVENT_RING_F_PENDING	(1U << 0)	/* kevent_wait() has more */

/* KEVENT_SOCKET and KEVENT_PIPE events. */
#define KEVENT_SOCKET_RECV	(1U << 0)
#define KEVENT_SOCKET_ACCEPT	(1U << 1)
#define KEVENT_SOCKET_SEND	(1U << 2)

/* KEVENT_INODE events (no source is built for this type). */
#define KEVENT_INODE_CREATE	(1U << 0)
#define KEVENT_INODE_REMOVE	(1U << 1)

/* KEVENT_TIMER events. */
#define KEVENT_TIMER_FIRED	(1U << 0)

/* KEVENT_POLL events: the same values as the POLL* constants. */
#define KEVENT_POLL_POLLIN	0x0001
#define KEVENT_POLL_POLLPRI	0x0002
#define KEVENT_POLL_POLLOUT	0x0004
#define KEVENT_POLL_POLLERR	0x0008
#define KEVENT_POLL_POLLHUP	0x0010
#define KEVENT_POLL_POLLNVAL	0x0020
#define KEVENT_POLL_POLLRDNORM	0x0040
#define KEVENT_POLL_POLLRDBAND	0x0080
#define KEVENT_POLL_POLLWRNORM	0x0100
#define KEVENT_POLL_POLLWRBAND	0x0200
#define KEVENT_POLL_POLLMSG	0x0400
#define KEVENT_POLL_POLLREMOVE	0x1000
#define KEVENT_POLL_POLLRDHUP	0x2000	/* take29 */

/* KEVENT_AIO events (no source is built for this type). */
#define KEVENT_AIO_BIO		(1U << 0)

/* KEVENT_SIGNAL events, and the id bit that keeps a signal off the task. */
#define KEVENT_SIGNAL_DELIVERY	(1U << 0)
#define KEVENT_SIGNAL_NOMASK	((__u64)1 << 63)

/* Event masks. */
#define KEVENT_MASK_ALL		0xffffffffU
#define KEVENT_MASK_EMPTY	0x0U

/* sigevent.sigev_notify value that sends a POSIX timer to a queue. */
#define SIGEV_KEVENT		8

/* What a registration watches; its meaning depends on the type. */
__extension__ struct kevent_id {
	union {
		__u32 raw[2];
		__aligned_u64 raw_u64;
	};
};

/*
 * One event request, and one reported event.  40 bytes, the same
 * layout for 32-bit and 64-bit processes.
 */
struct ukevent {
	struct kevent_id id;	/* what to watch: fd, signal, period */
	__u32 type;		/* KEVENT_SOCKET ... KEVENT_POSIX_TIMER */
	__u32 event;		/* event bits of that type */
	__u32 req_flags;	/* KEVENT_REQ_* */
	__u32 ret_flags;	/* KEVENT_RET_*, set by the kernel */
	__u32 ret_data[2];	/* reported data; [1] holds -errno if BROKEN */
	/* The caller's own data, returned as given. */
	__extension__ union {
		__u32 user[2];
		__u64 ptr;
	};
};

/* The ring of kevent_init(): the kernel produces, the caller commits. */
__extension__ struct kevent_ring {
	__u32 ring_kidx;	/* next slot the kernel writes */
	__u32 ring_over;	/* times the committed index wrapped */
	struct ukevent event[];
};

/*
 * With KEVENT_INIT_DIRECT, at &ring->event[ring_size]: the kernel's
 * count of slots written and the consumer's count of slots consumed,
 * both free-running; 64 bytes apart, they never share a cache line.
 */
struct kevent_ring_tail {
	__u32 ktail;		/* slots written, by the kernel */
	__u32 flags;		/* KEVENT_RING_F_*, by the kernel */
	__u32 __reserved1[14];
	__u32 uhead;		/* slots consumed, by the consumer */
	__u32 uclaim;		/* slots claimed by shared consumers */
	__u32 __reserved2[14];
};

/*
 * What the running kernel provides, from KEVENT_IOC_GET_ABI on any kevent
 * queue, /dev/kevent included (an addition).  Userspace asks before it
 * calls a kevent system call: on a kernel without kevent the numbers
 * below may belong to other system calls.
 */
#define KEVENT_ABI_VERSION	1

struct kevent_abi {
	__u32 version;		/* KEVENT_ABI_VERSION */
	__u32 types;		/* bit n set: type n has an event source */
	/* The system call numbers, for the ABI of the calling process. */
	__u32 nr_init;
	__u32 nr_ctl;
	__u32 nr_get_events;
	__u32 nr_wait;
	__u32 nr_commit;
	__u32 reserved[3];	/* 0 */
};

#define KEVENT_IOC_GET_ABI	_IOR(0xB8, 0x01, struct kevent_abi)

#endif /* _UAPI_LINUX_KEVENT_H */
