// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: storages, the ready list and the harvest that reports it.
 *
 * LOCKING:
 * There are three locks, always taken in this order:
 *
 * 1) kevent_queue->mutex (mutex)
 * 2) kevent_storage->lock (spinlock, interrupts disabled)
 * 3) kevent_queue->ready_lock (spinlock, interrupts disabled)
 *
 * and the lock of the queue's wait queue for its threads nests inside 3).
 * kevent_queue->index_lock nests inside 1) where the index changes, and
 * is taken alone by fdinfo, which must not take the mutex: a splice of
 * fdinfo into a pipe holds the pipe's mutex, which KEVENT_PIPE takes
 * inside the queue's.
 * The pollers of the queue's file are woken from an irq_work, under no
 * kevent lock.
 *
 * The mutex serializes everything a queue does in process context that
 * changes a registration: kevent_ctl(), the harvest of ready events by
 * kevent_get_events() and kevent_wait(), kevent_commit() and release.
 * It may be held across copies to and from userspace.
 *
 * A storage lock is taken by the object an event source watches, from any
 * context, when it notifies its kevents; it protects the list of kevents
 * attached to the object.  The object may go away without the queue's
 * mutex: kevent_storage_fini() detaches its kevents under the storage lock
 * alone, and the object frees the storage an RCU grace period later, so a
 * queue that is detaching the same kevent can still take the lock safely.
 *
 * The ready lock protects the queue's ready list and the state of each of
 * its kevents.  A harvest takes a kevent off the list under the ready lock,
 * copies it to userspace holding only the mutex, and marks it
 * KEVENT_STATE_TRANSIT meanwhile, so that a notification that arrives then
 * is remembered (KEVENT_STATE_AGAIN) rather than lost.
 */

#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/uaccess.h>

#include "kevent.h"

/**
 * kevent_storage_init - prepare the storage of an object
 * @st: the storage, embedded in the object
 */
void kevent_storage_init(struct kevent_storage *st)
{
	spin_lock_init(&st->lock);
	INIT_LIST_HEAD(&st->list);
}

/**
 * kevent_storage_attach - attach a kevent to an object
 * @st: the object's storage
 * @k: the kevent, not attached anywhere yet
 */
void kevent_storage_attach(struct kevent_storage *st, struct kevent *k)
{
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	list_add_tail(&k->storage_entry, &st->list);
	rcu_assign_pointer(k->st, st);
	spin_unlock_irqrestore(&st->lock, flags);
}

/* Detach @k from its storage, whose lock is held. */
static void kevent_storage_unlink(struct kevent *k)
{
	if (k->cb->unhook)
		k->cb->unhook(k);
	list_del(&k->storage_entry);
	RCU_INIT_POINTER(k->st, NULL);
}

/**
 * kevent_storage_detach - detach a kevent from its object, if still attached
 * @k: the kevent
 *
 * Once it returns, the object no longer notifies @k.
 */
void kevent_storage_detach(struct kevent *k)
{
	struct kevent_storage *st;
	unsigned long flags;

	rcu_read_lock();
	st = rcu_dereference(k->st);
	if (st) {
		spin_lock_irqsave(&st->lock, flags);
		/* kevent_storage_fini() may have been first. */
		if (rcu_access_pointer(k->st) == st)
			kevent_storage_unlink(k);
		spin_unlock_irqrestore(&st->lock, flags);
	}
	rcu_read_unlock();
}

/**
 * kevent_storage_ready - an object reports that @event happened
 * @st: the object's storage
 * @event: the event bits that happened
 * @state: decides whether a kevent is ready: positive if ready, 0 if
 *	not, a negative errno if broken.  Called under the storage lock, in
 *	any context.
 *
 * Every kevent attached to @st that asks for one of the bits, and that
 * @state finds ready or broken, is queued on its queue's ready list.
 * Callable from any context.
 */
void kevent_storage_ready(struct kevent_storage *st, u32 event,
			  int (*state)(struct kevent *k))
{
	unsigned long flags;
	struct kevent *k;
	int ret;

	spin_lock_irqsave(&st->lock, flags);
	list_for_each_entry(k, &st->list, storage_entry) {
		if (!(READ_ONCE(k->uk.event) & event))
			continue;
		ret = state(k);
		if (ret)
			kevent_ready(k, ret);
	}
	spin_unlock_irqrestore(&st->lock, flags);
}

/**
 * kevent_storage_fini - an object goes away
 * @st: its storage
 *
 * Each attached kevent is detached and reported once, broken, with
 * -EBADF.  The caller frees @st no sooner than an RCU grace period later.
 */
void kevent_storage_fini(struct kevent_storage *st)
{
	struct kevent *k, *next;
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	list_for_each_entry_safe(k, next, &st->list, storage_entry) {
		kevent_storage_unlink(k);
		kevent_ready(k, -EBADF);
	}
	spin_unlock_irqrestore(&st->lock, flags);
}

/*
 * Wake one waiter that the ready list now satisfies, or, for
 * KEVENT_REQ_WAKEUP_ALL, end the wait of every thread as
 * KEVENT_CTL_READY with no entries does, so that each returns with
 * what it can take.
 *
 * Pollers of the queue's file are woken from an irq_work, never from
 * here: their wakeup callbacks may belong to another kevent queue or to
 * an epoll instance that this queue watches in turn, and running them
 * under the locks held here could close a cycle.
 */
static void kevent_wake(struct kevent_queue *q, bool all)
{
	lockdep_assert_held(&q->ready_lock);

	if (all) {
		WRITE_ONCE(q->kick_seq, q->kick_seq + 1);
		wake_up_all(&q->wq);
	} else {
		wake_up(&q->wq);
	}
	if (wq_has_sleeper(&q->poll_wq))
		irq_work_queue(&q->poll_work);
}

/**
 * kevent_wake_pollers - the irq_work that wakes pollers of a queue
 * @work: &kevent_queue.poll_work
 */
void kevent_wake_pollers(struct irq_work *work)
{
	struct kevent_queue *q = container_of(work, struct kevent_queue,
					      poll_work);

	wake_up_poll(&q->poll_wq, EPOLLIN | EPOLLRDNORM);
}

static void kevent_enqueue_locked(struct kevent_queue *q, struct kevent *k)
{
	lockdep_assert_held(&q->ready_lock);

	k->state |= KEVENT_STATE_READY;
	list_add_tail(&k->ready_entry, &q->ready);
	q->ready_num++;
	kevent_wake(q, k->uk.req_flags & KEVENT_REQ_WAKEUP_ALL);
}

/**
 * kevent_ready - queue a kevent as ready or broken
 * @k: the kevent
 * @ret: positive if ready, a negative errno if broken
 *
 * A kevent is on the ready list at most once.  Callable from any context.
 */
void kevent_ready(struct kevent *k, int ret)
{
	struct kevent_queue *q = k->queue;
	unsigned long flags;

	spin_lock_irqsave(&q->ready_lock, flags);
	if (ret < 0 && !(k->state & KEVENT_STATE_BROKEN)) {
		k->state |= KEVENT_STATE_BROKEN;
		k->uk.ret_data[1] = ret;
	}
	k->state &= ~KEVENT_STATE_RECHECK;
	if (k->state & KEVENT_STATE_TRANSIT)
		k->state |= KEVENT_STATE_AGAIN;
	else if (!(k->state & KEVENT_STATE_READY))
		kevent_enqueue_locked(q, k);
	spin_unlock_irqrestore(&q->ready_lock, flags);
}

/**
 * kevent_force_ready - queue a kevent as if its event happened
 * @k: the kevent
 *
 * For KEVENT_CTL_READY: @k is reported once without asking its source.
 */
void kevent_force_ready(struct kevent *k)
{
	struct kevent_queue *q = k->queue;

	spin_lock_irq(&q->ready_lock);
	k->state |= KEVENT_STATE_FORCED;
	k->state &= ~KEVENT_STATE_RECHECK;
	if (!(k->state & KEVENT_STATE_READY))
		kevent_enqueue_locked(q, k);
	spin_unlock_irq(&q->ready_lock);
}

/**
 * kevent_kick - end every wait on a queue
 * @q: the queue
 *
 * For KEVENT_CTL_READY with no entries.
 */
void kevent_kick(struct kevent_queue *q)
{
	spin_lock_irq(&q->ready_lock);
	kevent_wake(q, true);
	spin_unlock_irq(&q->ready_lock);
}

/**
 * kevent_report - the copy of a kevent that userspace is given
 * @k: the kevent
 * @out: the copy
 */
void kevent_report(struct kevent *k, struct ukevent *out)
{
	struct kevent_queue *q = k->queue;

	spin_lock_irq(&q->ready_lock);
	*out = k->uk;
	out->ret_flags |= KEVENT_RET_DONE;
	if (k->state & KEVENT_STATE_BROKEN)
		out->ret_flags |= KEVENT_RET_BROKEN;
	if (k->cb->fill)
		k->cb->fill(k, out);
	spin_unlock_irq(&q->ready_lock);
}

/* Take the first ready kevent off the list, or return NULL. */
static struct kevent *kevent_take(struct kevent_queue *q, unsigned int *state)
{
	struct kevent *k;

	spin_lock_irq(&q->ready_lock);
	k = list_first_entry_or_null(&q->ready, struct kevent, ready_entry);
	if (k) {
		list_del_init(&k->ready_entry);
		q->ready_num--;
		*state = k->state;
		k->state &= ~(KEVENT_STATE_READY | KEVENT_STATE_AGAIN);
		k->state |= KEVENT_STATE_TRANSIT;
	}
	spin_unlock_irq(&q->ready_lock);
	return k;
}

/* Put a kevent that could not be copied back at the head of the list. */
static void kevent_give_back(struct kevent_queue *q, struct kevent *k)
{
	spin_lock_irq(&q->ready_lock);
	k->state &= ~(KEVENT_STATE_TRANSIT | KEVENT_STATE_AGAIN);
	k->state |= KEVENT_STATE_READY;
	list_add(&k->ready_entry, &q->ready);
	q->ready_num++;
	spin_unlock_irq(&q->ready_lock);
}

/*
 * Should a kevent just taken be reported?  A forced or broken one always
 * is; one asking for KEVENT_REQ_LAST_CHECK, or requeued level-triggered,
 * only if its source still says it is ready.  One that is not goes back
 * to waiting, unless it was notified meanwhile.
 */
static bool kevent_confirm(struct kevent_queue *q, struct kevent *k,
			   unsigned int state)
{
	int ret;

	if (state & (KEVENT_STATE_FORCED | KEVENT_STATE_BROKEN))
		return true;
	if (!(state & KEVENT_STATE_RECHECK) &&
	    !(k->uk.req_flags & KEVENT_REQ_LAST_CHECK) &&
	    !(k->cb->flags & KEVENT_CALLBACKS_RECHECK))
		return true;

	ret = k->cb->check(k);
	if (ret) {
		if (ret < 0)
			kevent_ready(k, ret);
		return true;
	}

	spin_lock_irq(&q->ready_lock);
	k->state &= ~(KEVENT_STATE_TRANSIT | KEVENT_STATE_RECHECK);
	if (k->state & KEVENT_STATE_AGAIN) {
		k->state &= ~KEVENT_STATE_AGAIN;
		kevent_enqueue_locked(q, k);
	}
	spin_unlock_irq(&q->ready_lock);
	return false;
}

/* Copy one report to where the harvest is going. */
static int kevent_sink_put(struct kevent_queue *q, struct kevent_sink *sink,
			   struct ukevent *out)
{
	struct ukevent __user *dst;
	bool ring_room;

	if (sink->to_ring)
		return kevent_ring_put(q, out);

	/*
	 * The caller's buffer gets every event; the ring, if there is one,
	 * gets those it has room for, and the others say so in the buffer.
	 */
	dst = sink->buf + sink->done;
	ring_room = q->ring && q->used < q->ring_size;
	if (q->ring && !ring_room)
		out->ret_flags |= KEVENT_RET_COPY_FAILED;
	if (copy_to_user(dst, out, sizeof(*out)))
		return -EFAULT;
	if (ring_room && kevent_ring_put(q, out))
		put_user(out->ret_flags | KEVENT_RET_COPY_FAILED, &dst->ret_flags);
	return 0;
}

/*
 * What becomes of a kevent once reported: one-shot and broken ones are
 * removed; an edge-triggered one waits for its next notification; a
 * level-triggered one is queued again, to be rechecked.  One that was
 * notified while in transit is queued again as ready.  Either waits on
 * @later until the harvest ends, so that no call reports it twice.
 */
static void kevent_complete(struct kevent_queue *q, struct kevent *k,
			    const struct ukevent *out, struct list_head *later)
{
	bool remove = (out->ret_flags & KEVENT_RET_BROKEN) ||
		      (k->uk.req_flags & KEVENT_REQ_ONESHOT);

	if (k->cb->delivered)
		k->cb->delivered(k, out);

	spin_lock_irq(&q->ready_lock);
	k->state &= ~(KEVENT_STATE_TRANSIT | KEVENT_STATE_FORCED |
		      KEVENT_STATE_RECHECK);
	if (!remove) {
		if (k->state & KEVENT_STATE_AGAIN) {
			k->state &= ~KEVENT_STATE_AGAIN;
			k->state |= KEVENT_STATE_READY;
			list_add_tail(&k->ready_entry, later);
		} else if (!(k->uk.req_flags & KEVENT_REQ_ET)) {
			k->state |= KEVENT_STATE_READY | KEVENT_STATE_RECHECK;
			list_add_tail(&k->ready_entry, later);
		}
	}
	spin_unlock_irq(&q->ready_lock);

	if (remove)
		kevent_remove(q, k);
}

/**
 * kevent_harvest - report ready kevents
 * @q: the queue, its mutex held
 * @sink: where to copy them
 *
 * Return: the number of events in @sink, or -EFAULT if the first copy
 * failed.  An event whose copy fails stays at the head of the ready list.
 */
int kevent_harvest(struct kevent_queue *q, struct kevent_sink *sink)
{
	unsigned int state, requeued = 0;
	struct ukevent out;
	struct kevent *k;
	LIST_HEAD(later);
	int err = 0;

	lockdep_assert_held(&q->mutex);

	while (sink->done < sink->max) {
		k = kevent_take(q, &state);
		if (!k)
			break;
		if (!kevent_confirm(q, k, state))
			continue;
		kevent_report(k, &out);
		err = kevent_sink_put(q, sink, &out);
		if (err) {
			kevent_give_back(q, k);
			break;
		}
		sink->done++;
		kevent_complete(q, k, &out, &later);
	}

	spin_lock_irq(&q->ready_lock);
	list_for_each_entry(k, &later, ready_entry)
		requeued++;
	list_splice_tail(&later, &q->ready);
	q->ready_num += requeued;
	/* Pass the wakeup on: another thread may take what is left. */
	if (q->ready_num)
		kevent_wake(q, false);
	spin_unlock_irq(&q->ready_lock);

	if (sink->done)
		return sink->done;
	return err;
}
