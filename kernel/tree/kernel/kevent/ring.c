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
 * kevent_ring_put - write events into the ring
 * @q: the queue, its mutex held
 * @out: the events
 * @n: how many
 *
 * Writes as many of @out, in order, as the ring has room for, with one
 * user access section, and publishes ring_kidx once for all of them.
 *
 * Return: how many were written, 0 if the ring is full or the first copy
 * faulted; the ring's state covers exactly those.
 */
unsigned int kevent_ring_put(struct kevent_queue *q, const struct ukevent *out,
			     unsigned int n)
{
	unsigned int kidx = q->kidx, i = 0;

	lockdep_assert_held(&q->mutex);

	n = min(n, q->ring_size - q->used);
	if (!n || !user_access_begin(q->ring,
				     struct_size(q->ring, event, q->ring_size)))
		return 0;
	for (; i < n; i++) {
		unsafe_copy_to_user((void __user *)&q->ring->event[kidx],
				    (const void *)&out[i], sizeof(out[i]), fault);
		kidx = kidx + 1 == q->ring_size ? 0 : kidx + 1;
	}
fault:
	user_access_end();
	if (!i)
		return 0;
	/* Userspace must see the events before the index that covers them. */
	smp_wmb();
	if (put_user(kidx, &q->ring->ring_kidx))
		return 0;
	q->kidx = kidx;
	WRITE_ONCE(q->used, q->used + i);
	return i;
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
	 * A commit ends the wait of every thread in kevent_wait() whose
	 * old_uidx it made stale, and may have made room for all of them:
	 * all are woken, and each wake function decides.  The barrier of
	 * wq_has_sleeper() pairs with that of their
	 * prepare_to_wait_exclusive(), as for every waker that looks first.
	 */
	if (ret > 0 && wq_has_sleeper(&q->wq))
		wake_up_all(&q->wq);
	fdput(f);
	return ret;
}
