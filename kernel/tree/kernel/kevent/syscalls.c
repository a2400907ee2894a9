// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the five system calls.
 *
 * Each takes its arguments from userspace and hands them to the file
 * that does the work: queue.c creates queues, ctl.c runs the commands on
 * registrations, wait.c waits and harvests, ring.c takes commits.
 */

#include <linux/file.h>
#include <linux/syscalls.h>

#include "kevent.h"

SYSCALL_DEFINE3(kevent_init, struct kevent_ring __user *, ring,
		unsigned int, ring_size, unsigned int, flags)
{
	return kevent_queue_create(ring, ring_size, flags);
}

SYSCALL_DEFINE4(kevent_ctl, int, fd, unsigned int, cmd, unsigned int, num,
		struct ukevent __user *, arg)
{
	struct kevent_queue *q;
	struct fd f;
	long ret;

	q = kevent_fdget(fd, &f);
	if (IS_ERR(q))
		return PTR_ERR(q);
	ret = kevent_ctl(q, cmd, num, arg);
	fdput(f);
	return ret;
}

/* A restart keeps the deadline: wait.c gives the call its restart block. */
SYSCALL_DEFINE6(kevent_get_events, int, fd, unsigned int, min_nr,
		unsigned int, max_nr,
		const struct __kernel_timespec __user *, timeout,
		struct ukevent __user *, buf, unsigned int, flags)
{
	return kevent_get_events(fd, min_nr, max_nr, timeout, buf, flags, NULL);
}

SYSCALL_DEFINE5(kevent_wait, int, fd, unsigned int, num,
		unsigned int, old_uidx,
		const struct __kernel_timespec __user *, timeout,
		unsigned int, flags)
{
	return kevent_wait(fd, num, old_uidx, timeout, flags, NULL);
}

SYSCALL_DEFINE3(kevent_commit, int, fd, unsigned int, new_uidx,
		unsigned int, over)
{
	struct kevent_queue *q;
	struct fd f;
	long ret;

	q = kevent_fdget(fd, &f);
	if (IS_ERR(q))
		return PTR_ERR(q);
	ret = kevent_commit(q, new_uidx, over);
	fdput(f);
	return ret;
}
