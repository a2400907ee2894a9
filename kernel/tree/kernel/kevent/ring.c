// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the ring in the caller's memory, and kevent_commit().
 *
 * The kernel writes ready events at kidx and publishes kidx in
 * ring_kidx; userspace consumes them and hands the slots back with
 * kevent_commit().  The kernel never reads the ring, so nothing that
 * userspace writes there can confuse it; it never writes a slot that
 * has not been committed, so no event is overwritten.
 */

#include <linux/file.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>

#include "kevent.h"

/**
 * kevent_ring_put - write one event into the ring
 * @q: the queue, its mutex held
 * @out: the event
 *
 * Return: 0, -ENOSPC if the ring is full, or -EFAULT; on error the ring
 * is unchanged.
 */
int kevent_ring_put(struct kevent_queue *q, const struct ukevent *out)
{
	unsigned int kidx = q->kidx;

	lockdep_assert_held(&q->mutex);

	if (q->used == q->ring_size)
		return -ENOSPC;
	if (copy_to_user(&q->ring->event[kidx], out, sizeof(*out)))
		return -EFAULT;
	kidx = kidx + 1 == q->ring_size ? 0 : kidx + 1;
	/* Userspace must see the event before the index that covers it. */
	smp_wmb();
	if (put_user(kidx, &q->ring->ring_kidx))
		return -EFAULT;
	q->kidx = kidx;
	WRITE_ONCE(q->used, q->used + 1);
	return 0;
}

/*
 * Free the slots up to @new_uidx, which lies in wrap @over of the
 * committed index.  Return the number freed, 0 if another thread has
 * committed past @new_uidx already, or a negative errno.
 */
static long kevent_ring_commit(struct kevent_queue *q, unsigned int new_uidx,
			       unsigned int over)
{
	unsigned int freed;

	lockdep_assert_held(&q->mutex);

	if (!q->ring || new_uidx >= q->ring_size)
		return -EINVAL;

	if (over == q->over) {
		if (new_uidx <= q->uidx)
			return 0;
		freed = new_uidx - q->uidx;
	} else if (over == q->over + 1) {
		freed = q->ring_size - q->uidx + new_uidx;
	} else {
		return -EOVERFLOW;
	}
	if (freed > q->used)
		return -EINVAL;

	if (q->uidx + freed >= q->ring_size) {
		if (put_user(q->over + 1, &q->ring->ring_over))
			return -EFAULT;
		q->over++;
	}
	WRITE_ONCE(q->uidx, new_uidx);
	WRITE_ONCE(q->used, q->used - freed);
	return freed;
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

	if (!kevent_ring_owned(q)) {
		ret = -EPERM;
	} else if (mutex_lock_killable(&q->mutex)) {
		ret = -EINTR;
	} else {
		ret = kevent_ring_commit(q, new_uidx, over);
		mutex_unlock(&q->mutex);
	}

	/*
	 * Threads in kevent_wait() may have been waiting for room; the
	 * barrier of wq_has_sleeper() pairs with that of their
	 * prepare_to_wait_exclusive(), as for every waker that looks first.
	 */
	if (ret > 0 && wq_has_sleeper(&q->wq))
		wake_up(&q->wq);
	fdput(f);
	return ret;
}
