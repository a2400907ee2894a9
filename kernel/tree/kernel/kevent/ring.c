// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the ring in the caller's memory, and its commits.
 *
 * The kernel writes ready events at kidx and publishes kidx in
 * ring_kidx; userspace consumes them and hands the slots back with
 * kevent_commit().  The kernel never reads the ring, so nothing that
 * userspace writes there can confuse it; it never writes a slot that
 * has not been committed, so no event is overwritten.
 */

#include <linux/sched.h>
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
 * How many slots a commit up to @new_uidx, in wrap @over of the
 * committed index, frees: 0 if another thread has committed past
 * @new_uidx already, or a negative errno.
 */
static long kevent_ring_freed(const struct kevent_queue *q,
			      unsigned int new_uidx, unsigned int over)
{
	unsigned int freed, used;

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
	used = q->direct ? kevent_direct_used(q) : q->used;
	if (freed > used)
		return -EINVAL;
	return freed;
}

/* Free the slots up to @new_uidx; return how many, or a negative errno. */
static long kevent_ring_commit(struct kevent_queue *q, unsigned int new_uidx,
			       unsigned int over)
{
	long freed;

	lockdep_assert_held(&q->mutex);

	freed = kevent_ring_freed(q, new_uidx, over);
	if (freed <= 0)
		return freed;
	if (q->uidx + freed >= q->ring_size) {
		if (put_user(q->over + 1, &q->ring->ring_over))
			return -EFAULT;
		q->over++;
	}
	WRITE_ONCE(q->uidx, new_uidx);
	WRITE_ONCE(q->used, q->used - freed);
	return freed;
}

/*
 * The same on a direct ring, whose state the ready lock protects: the
 * kernel learns first how far the consumer went by itself.
 */
static long kevent_ring_commit_direct(struct kevent_queue *q,
				      unsigned int new_uidx, unsigned int over)
{
	long freed;

	spin_lock_irq(&q->ready_lock);
	kevent_direct_refresh_locked(q);
	freed = kevent_ring_freed(q, new_uidx, over);
	if (freed > 0)
		kevent_direct_consume_locked(q, freed);
	spin_unlock_irq(&q->ready_lock);
	return freed;
}

/**
 * kevent_commit - give ring slots back
 * @q: the queue
 * @new_uidx: the first slot not consumed
 * @over: the wrap of the committed index that @new_uidx lies in
 *
 * Return: the number of slots freed, 0 if another thread committed past
 * @new_uidx already, or -EPERM, -EINTR, -EINVAL, -EOVERFLOW or -EFAULT as
 * kevent_commit(2) says.
 */
long kevent_commit(struct kevent_queue *q, unsigned int new_uidx,
		   unsigned int over)
{
	long ret;

	if (!kevent_ring_owned(q))
		return -EPERM;
	if (mutex_lock_killable(&q->mutex))
		return -EINTR;
	if (q->direct)
		ret = kevent_ring_commit_direct(q, new_uidx, over);
	else
		ret = kevent_ring_commit(q, new_uidx, over);
	mutex_unlock(&q->mutex);

	/*
	 * A commit ends the wait of every thread in kevent_wait() whose
	 * old_uidx it made stale, and may have made room for all of them:
	 * all are woken, and each wake function decides.  The barrier of
	 * wq_has_sleeper() pairs with that of their
	 * prepare_to_wait_exclusive(), as for every waker that looks first.
	 */
	if (ret > 0 && wq_has_sleeper(&q->wq))
		wake_up_all(&q->wq);
	return ret;
}
