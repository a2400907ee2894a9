// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the life of a registration, from its allocation to its free.
 *
 * A registration is allocated and charged to its user (kevent_alloc()),
 * attached to its object (kevent_enqueue()) and put in its queue's index
 * (kevent_insert()).  Its object's notifications put it on the ready
 * list (__kevent_storage_notify(), kevent_ready()); a harvest takes it
 * off, asks its source where need be, reports it and, unless it is
 * edge-triggered with nothing pending, holds it until the call ends
 * (kevent_harvest(), kevent_sink_finish()); it leaves with
 * kevent_remove(), which detaches, unqueues, unindexes and frees it,
 * into the queue's cache of freed registrations (kevent_free()).
 *
 * The index (index.c) finds a registration by its key, (type, id, user
 * data).  One whose object went away (KEVENT_INDEX_DEAD) is no longer
 * found: it stays in the index only until it is reported or a new
 * registration takes its key.
 */
/**
 * DOC: locking
 *
 * The locks of kevent, in the order they nest:
 *
 * 1) kevent_queue->mutex (mutex)
 * 2) kevent_storage->lock (spinlock, interrupts disabled)
 * 3) kevent_queue->ready_lock (spinlock, interrupts disabled)
 * 4) the lock of kevent_queue->wq
 *
 * Around them, the locks of the event sources:
 *
 * - 1) is never held while pipe->mutex is taken: a splice into a full
 *   socket may hold that for long, and a harvest with a zero timeout
 *   must not wait for it.  The first KEVENT_PIPE kevent of a pipe, which
 *   sets the pipe's storage under pipe->mutex, has kevent_ctl() drop 1)
 *   for it (&kevent_callbacks.prepare).
 * - 2) nests inside siglock (KEVENT_SIGNAL), k_itimer->it_lock
 *   (KEVENT_POSIX_TIMER), the socket layer's locks and the peer_wait
 *   lock of an AF_UNIX socket (KEVENT_SOCKET), and a file's wait queue
 *   lock (KEVENT_POLL's wakeup reports kevents under it).
 * - A file's wait queue lock nests inside 2) where KEVENT_POLL unhooks
 *   under the storage lock.
 * - Each kind of object has a lockdep class of its own for 2), see
 *   kevent_storage_alloc().
 *
 * The pollers of the queue's file are woken from an irq_work, under no
 * kevent lock: their wakeup callbacks may belong to another kevent queue
 * or to an epoll instance that this queue watches in turn.
 *
 * Queues and epoll sets may watch each other, in chains and in cycles.
 * The queue's ->poll is a leaf: it takes its mutex only with a trylock,
 * and rechecks only kevents whose check reads the state of an object,
 * never those that poll another file (KEVENT_CALLBACKS_NESTS).  So an
 * epoll set that holds its mutex while it polls the queue is never
 * polled again from inside, and a chain recurses one level at most: a
 * harvest's check of KEVENT_POLL polls the watched file, and if that is
 * a queue, its ->poll goes no further.
 *
 * A recheck leaves the kevent on the ready list (CHECKING) while its
 * source is asked: a waiter deciding to sleep, or an outer queue polling
 * this one, never finds the list emptier than it is.  Only holders of
 * the mutex take kevents off the ready list.
 *
 * The mutex serializes what a queue does in process context: kevent_ctl(),
 * the harvests of kevent_get_events() and kevent_wait(), kevent_commit(),
 * the recheck of poll() on the queue, fdinfo and release, as epoll's
 * mutex does; every registration is allocated and freed under it, from
 * and to the queue's cache.  It may be held across copies to and from
 * userspace, and it is taken killably where a user asks for it.  Objects
 * never take it: they notify and die under their storage's lock alone.
 *
 * The ready lock protects the ready list and the state of each kevent.
 * Waiters join &kevent_queue.wq under it, and poll() on the queue reads
 * the ready count under it after joining &kevent_queue.poll_wq, so that
 * a notification tests for sleepers without a barrier (kevent_wake()).
 * A harvest takes a kevent off the list under the ready lock, copies it to
 * userspace holding only the mutex, and marks it TRANSIT meanwhile, so
 * that a notification that arrives then is remembered (AGAIN) rather than
 * lost; an edge-triggered kevent whose report ends its part in the call is
 * settled instead, off every list, and such a notification queues it
 * again.  A level-triggered kevent that was reported is HELD on the list of
 * the system call that reported it until the call ends, then requeued to
 * be rechecked.
 *
 * A direct ring (direct.c) is written under the ready lock, by
 * notifications and harvests alike, through the kernel's mapping of its
 * pinned pages, which never faults.  A kevent in one of its slots is
 * POSTED, on the ring's posted list by its ready_entry, until the slot
 * is consumed; kevent_direct_reap() takes the mutex, so that no
 * harvest has a kevent in transit while consumed slots are given back.
 */

#include <linux/kasan.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kevent.h"

/* A registration of @type that @q freed, taken back from its cache. */
static struct kevent *kevent_cache_pop(struct kevent_queue *q, u32 type)
{
	struct kevent *k = q->cache[type];

	if (!k)
		return NULL;
	kasan_unpoison_object_data(kevent_cache_of(type), k);
	q->cache[type] = k->next_cached;
	q->cached--;
	return k;
}

/**
 * kevent_alloc - a new registration, not yet indexed or attached
 * @q: its queue
 * @cb: the callbacks of its type
 * @uk: the request; the return fields start cleared
 *
 * The registration counts in the limit of the queue's user until freed.
 *
 * Return: the kevent, charged to the caller's memory cgroup,
 * ERR_PTR(-ENOSPC) if the user has reached fs.kevent.max_user_kevents,
 * or ERR_PTR(-ENOMEM).
 */
static struct kevent *kevent_alloc(struct kevent_queue *q,
				   const struct kevent_callbacks *cb,
				   const struct ukevent *uk)
{
	struct kevent *k;
	u32 type;
	int err;

	err = kevent_charge(q->user);
	if (err)
		return ERR_PTR(err);
	type = array_index_nospec(uk->type, KEVENT_MAX);
	k = kevent_cache_pop(q, type) ?:
	    kmem_cache_alloc(kevent_cache_of(type), GFP_KERNEL);
	if (!k) {
		kevent_uncharge(q->user);
		return ERR_PTR(-ENOMEM);
	}
	/*
	 * Field by field, the request too: zeroing the whole object costs
	 * more, and a whole ukevent is copied with a rep movs (see
	 * kevent_fill_locked()).
	 */
	INIT_HLIST_NODE(&k->index_node);
	INIT_LIST_HEAD(&k->ready_entry);
	INIT_LIST_HEAD(&k->storage_entry);
	RCU_INIT_POINTER(k->st, NULL);
	k->queue = q;
	k->cb = cb;
	k->uk.id = uk->id;
	k->uk.type = uk->type;
	k->uk.event = uk->event;
	k->uk.req_flags = uk->req_flags;
	k->uk.ret_flags = 0;
	k->uk.ret_data[0] = 0;
	k->uk.ret_data[1] = 0;
	k->uk.ptr = uk->ptr;
	k->state = 0;
	atomic_set(&k->index_state, 0);
	k->confirm = cb->flags & KEVENT_CALLBACKS_RECHECK;
	k->ring_pos = 0;	/* and reported_by */
	/* The source's data are its enqueue's to set. */
	return k;
}

/*
 * Into the queue's cache, whose objects stay charged to the memory
 * cgroup, and poisoned for KASAN as if freed; beyond KEVENT_CACHE_MAX,
 * back to the slab.  Inline, as kevent_unindex(): every REMOVE runs both.
 */
static __always_inline void kevent_free(struct kevent_queue *q,
					struct kevent *k)
{
	struct kmem_cache *cache = kevent_cache_of(k->uk.type);
	u32 type = k->uk.type;

	lockdep_assert_held(&q->mutex);

	kevent_uncharge(q->user);
	if (q->cached >= KEVENT_CACHE_MAX) {
		kmem_cache_free(cache, k);
		return;
	}
	k->next_cached = q->cache[type];
	q->cache[type] = k;
	q->cached++;
	kasan_poison_object_data(cache, k);
}

/**
 * kevent_cache_drain - give a queue's cached registrations back
 * @q: the queue, being released
 */
void kevent_cache_drain(struct kevent_queue *q)
{
	struct kevent *k;
	u32 type;

	for (type = 0; type < KEVENT_MAX; type++)
		while ((k = kevent_cache_pop(q, type)))
			kmem_cache_free(kevent_cache_of(type), k);
}

/*
 * Wake one waiter that the ready list now satisfies, or, for
 * KEVENT_REQ_WAKEUP_ALL, end the wait of every thread as
 * KEVENT_CTL_READY with no entries does, so that each returns with
 * what it can take.  Pollers are woken from an irq_work, see LOCKING.
 *
 * Waiters and pollers join their wait queues before they look at the
 * ready list, and under the ready lock or before taking it (see
 * kevent_sleep() and kevent_poll()), so an empty wait queue seen under
 * the ready lock has no one to wake: the wait queue's lock and a
 * barrier are spent only when someone waits.
 *
 * This and the helpers of a notification and of a harvest below are
 * inline: a kernel optimised for size calls them out of line once they
 * have a few callers, and those calls, their saved registers and
 * returns, counted 30 instructions of the 350 that kevent's functions
 * spent per event of a pipe harvest.
 */
static __always_inline void kevent_wake(struct kevent_queue *q, bool all)
{
	lockdep_assert_held(&q->ready_lock);

	if (all)
		WRITE_ONCE(q->kick_seq, q->kick_seq + 1);
	/* Ordered by the ready lock against kevent_sleep(), see above. */
	if (waitqueue_active(&q->wq)) {
		if (all)
			wake_up_all(&q->wq);
		else
			wake_up(&q->wq);
	}
	/* Ordered by the ready lock against kevent_poll(), see above. */
	if (waitqueue_active(&q->poll_wq))
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

/* Inline, as kevent_wake() is. */
static __always_inline void kevent_enqueue_locked(struct kevent_queue *q,
						  struct kevent *k)
{
	lockdep_assert_held(&q->ready_lock);

	k->state |= KEVENT_STATE_READY;
	list_add_tail(&k->ready_entry, &q->ready);
	q->ready_num++;
	kevent_wake(q, k->uk.req_flags & KEVENT_REQ_WAKEUP_ALL);
}

/* The same on a direct queue, which announces what waits on the list. */
static void kevent_direct_enqueue_locked(struct kevent_queue *q,
					 struct kevent *k)
{
	kevent_enqueue_locked(q, k);
	kevent_direct_flags_locked(q);
}

/*
 * Should a kevent just taken be reported?  A forced or broken one always
 * is; one asking for KEVENT_REQ_LAST_CHECK, requeued level-triggered, or
 * whose notifications may be spurious (confirm), only if its source
 * still says it is ready.  One that is not goes back to waiting, unless
 * it was notified meanwhile.
 */
static __always_inline bool kevent_needs_check(const struct kevent *k,
					       unsigned int state)
{
	if (state & (KEVENT_STATE_FORCED | KEVENT_STATE_BROKEN))
		return false;
	return (state & KEVENT_STATE_RECHECK) ||
	       (k->uk.req_flags & KEVENT_REQ_LAST_CHECK) || k->confirm;
}

/* The copy of @k that userspace is given; under the ready lock. */
static __always_inline void kevent_fill_locked(struct kevent *k,
					       struct ukevent *out)
{
	const u64 *from = (const u64 *)&k->uk;
	u64 *to = (u64 *)out;

	lockdep_assert_held(&k->queue->ready_lock);

	/*
	 * As the five words it is on every ABI: a kernel optimised for
	 * size copies the structure with a rep movs, ten steps of four
	 * bytes, and the report of every event comes here.
	 */
	BUILD_BUG_ON(sizeof(*out) != 5 * sizeof(u64));
	to[0] = from[0];
	to[1] = from[1];
	to[2] = from[2];
	to[3] = from[3];
	to[4] = from[4];
	out->ret_flags |= KEVENT_RET_DONE;
	if (k->state & KEVENT_STATE_BROKEN)
		out->ret_flags |= KEVENT_RET_BROKEN;
	if (k->cb->fill)
		k->cb->fill(k, out);
}

/*
 * Write the report of @k into its queue's direct ring now, if it may go
 * there: not if its source must confirm it or act on its delivery, in
 * process context, nor if the report ends the registration (one-shot,
 * broken), nor if the ring is full.  Those take the ready list and
 * reach the ring through kevent_wait().
 */
static bool kevent_post_locked(struct kevent_queue *q, struct kevent *k)
{
	if ((k->state & KEVENT_STATE_BROKEN) ||
	    (k->uk.req_flags & KEVENT_REQ_ONESHOT) || k->cb->delivered ||
	    kevent_needs_check(k, k->state) || !kevent_direct_room_locked(q))
		return false;
	kevent_fill_locked(k, kevent_direct_slot_locked(q));
	k->state &= ~KEVENT_STATE_FORCED;
	kevent_direct_publish_locked(q, k);
	kevent_wake(q, k->uk.req_flags & KEVENT_REQ_WAKEUP_ALL);
	return true;
}

/*
 * Queue @k as notified, or post it, unless it is queued, posted or
 * remembered already.  A posted kevent whose slot was consumed is
 * posted anew; one whose slot was not waits for it (AGAIN).
 */
static __always_inline void kevent_notified_locked(struct kevent_queue *q,
						   struct kevent *k)
{
	if (k->state & KEVENT_STATE_POSTED) {
		if (!kevent_direct_consumed_locked(q, k)) {
			kevent_direct_defer_locked(q, k);
			return;
		}
		kevent_direct_forget_locked(q, k);
	}
	if (k->state & (KEVENT_STATE_TRANSIT | KEVENT_STATE_HELD |
			KEVENT_STATE_CHECKING)) {
		k->state |= KEVENT_STATE_AGAIN;
	} else if (!(k->state & KEVENT_STATE_READY)) {
		/*
		 * Only a kevent that is ready or in transit is marked for a
		 * recheck: this one has nothing to clear.
		 */
		if (!q->direct)
			kevent_enqueue_locked(q, k);
		else if (!kevent_post_locked(q, k))
			kevent_direct_enqueue_locked(q, k);
		return;
	}
	/* Known ready now: a requeued one need not be rechecked. */
	if (k->state & KEVENT_STATE_READY)
		k->state &= ~KEVENT_STATE_RECHECK;
}

static void kevent_broken_locked(struct kevent *k, int err)
{
	if (!(k->state & KEVENT_STATE_BROKEN)) {
		k->state |= KEVENT_STATE_BROKEN;
		k->uk.ret_data[1] = err;
	}
}

/* The body of kevent_ready(), the ready lock held. */
static __always_inline void kevent_ready_locked(struct kevent_queue *q,
						struct kevent *k, int ret)
{
	if (ret < 0)
		kevent_broken_locked(k, ret);
	kevent_notified_locked(q, k);
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
	kevent_ready_locked(q, k, ret);
	spin_unlock_irqrestore(&q->ready_lock, flags);
}

/* How a notification's walk decides whether a kevent is ready. */
enum kevent_walk {
	KEVENT_WALK_ASK,	/* its source says */
	KEVENT_WALK_MORE,	/* as ASK, unless its report stands */
	KEVENT_WALK_DECIDED,	/* the notifier said, for every kevent */
};

/*
 * Does @k's report stand whatever a notification that only adds to what
 * its object offers of @event finds?  It does if @k is queued ready as
 * its source last found it (not forced, broken, or to be rechecked) and
 * asks for no other bit: asking its source again would find the same
 * bits ready, or none if they were taken meanwhile, which leaves a
 * queued kevent queued.  The state is peeked without the ready lock, so
 * that a kevent that is not queued costs the notification one test, and
 * confirmed under it.
 */
static __always_inline bool kevent_report_stands(struct kevent *k,
						 u32 asked, u32 event)
{
	struct kevent_queue *q = k->queue;
	bool stands;

	/* Read racily, as a hint: confirmed under the lock. */
	if (!(data_race(k->state) & KEVENT_STATE_READY) || (asked & ~event))
		return false;
	spin_lock(&q->ready_lock);
	stands = k->state == KEVENT_STATE_READY;
	spin_unlock(&q->ready_lock);
	return stands;
}

/*
 * The walk of a notification, inline in its callers below, so that
 * each kevent it queues takes the ready lock inline, and alone: the
 * storage's lock disabled interrupts already.  With KEVENT_WALK_DECIDED,
 * the notifier found what is ready for every kevent of @st, @ready, and
 * no source is asked.
 */
static __always_inline void kevent_storage_walk(struct kevent_storage *st,
						u32 event, void *hint,
						enum kevent_walk how, u32 ready)
{
	unsigned long flags;
	struct kevent *k;
	u32 asked;
	int ret;

	spin_lock_irqsave(&st->lock, flags);
	list_for_each_entry(k, &st->list, storage_entry) {
		asked = READ_ONCE(k->uk.event);
		if (!(asked & event))
			continue;
		if (how == KEVENT_WALK_DECIDED)
			ret = !!(asked & ready);
		else if (how == KEVENT_WALK_MORE &&
			 kevent_report_stands(k, asked, event))
			continue;
		else
			ret = k->cb->event ? k->cb->event(k, hint) : 1;
		if (ret) {
			spin_lock(&k->queue->ready_lock);
			kevent_ready_locked(k->queue, k, ret);
			spin_unlock(&k->queue->ready_lock);
		}
	}
	spin_unlock_irqrestore(&st->lock, flags);
}

/**
 * __kevent_storage_notify - the walk of kevent_storage_notify()
 * @st: the object's storage
 * @event: the event bits that happened, some of which a kevent asks for
 * @hint: what happened, for the source's &kevent_callbacks.event
 *
 * Use kevent_storage_notify(), which skips a notification nobody asked
 * for without the call.  Here, not in storage.c, beside the ready list
 * it feeds.
 */
void __kevent_storage_notify(struct kevent_storage *st, u32 event, void *hint)
{
	kevent_storage_walk(st, event, hint, KEVENT_WALK_ASK, 0);
}

/**
 * __kevent_storage_notify_more - a notification that only adds readiness
 * @st: the object's storage
 * @event: the event bits whose readiness the object added to, some of
 *	which a kevent asks for (kevent_storage_asked())
 *
 * As kevent_storage_notify() with no hint, for an object that announces
 * here only what it now offers more of (data, a connection, room to
 * send), and through kevent_storage_notify() every change that may take
 * readiness away or break a kevent.  A kevent queued ready that asks for
 * no other bit than @event is left as it is, without the call to its
 * source: its report stands.  A server that reads a socket as its
 * requests arrive, without waiting in between, pays this once per
 * request.  Callable from any context.
 */
void __kevent_storage_notify_more(struct kevent_storage *st, u32 event)
{
	kevent_storage_walk(st, event, NULL, KEVENT_WALK_MORE, 0);
}

/**
 * __kevent_storage_notify_ready - a notification whose readiness is known
 * @st: the object's storage
 * @event: the event bits that happened, some of which a kevent asks for
 *	(kevent_storage_asked())
 * @ready: the event bits that are ready now, for every kevent of @st
 *
 * As kevent_storage_notify(), for an object that tells once what is
 * ready for all its kevents: a kevent that asks for a bit of @event is
 * queued ready if it asks for a bit of @ready, without the call to its
 * source's &kevent_callbacks.event, which a pipe makes per kevent only
 * to read the same ring indexes again.  Callable from any context.
 */
void __kevent_storage_notify_ready(struct kevent_storage *st, u32 event,
				   u32 ready)
{
	kevent_storage_walk(st, event, NULL, KEVENT_WALK_DECIDED, ready);
}

/**
 * kevent_object_gone - the object a kevent watches went away
 * @k: the kevent, still attached, under its storage's lock
 * @err: the error to report
 *
 * @k is queued to be reported broken once, and from now on its queue's
 * lookups no longer find it: the same request may be added again at
 * once, for example for a descriptor number that accept() reused.
 */
void kevent_object_gone(struct kevent *k, int err)
{
	struct kevent_queue *q = k->queue;
	unsigned long flags;
	int old;

	/* See kevent_indexed(). */
	old = atomic_fetch_or(KEVENT_INDEX_DEAD, &k->index_state);
	if ((old & (KEVENT_INDEX_IN | KEVENT_INDEX_DEAD)) == KEVENT_INDEX_IN)
		atomic_dec(&q->count);
	spin_lock_irqsave(&q->ready_lock, flags);
	kevent_broken_locked(k, err);
	kevent_notified_locked(q, k);
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
	kevent_notified_locked(q, k);
	spin_unlock_irq(&q->ready_lock);
}

/**
 * kevent_unready - take a kevent off the ready list, or a harvest's list
 * @q: its queue, the mutex held
 * @k: the kevent
 * @leaving: @k is being removed: it also gives up its slot in a direct
 *	ring, which it keeps across a MODIFY, so that it never holds two
 *
 * A pending event of @k is dropped.
 */
static void kevent_unready(struct kevent_queue *q, struct kevent *k,
			   bool leaving)
{
	spin_lock_irq(&q->ready_lock);
	if (k->state & KEVENT_STATE_READY)
		q->ready_num--;
	if (k->state & (KEVENT_STATE_READY | KEVENT_STATE_HELD))
		list_del_init(&k->ready_entry);
	if (k->state & KEVENT_STATE_POSTED) {
		if (leaving)
			kevent_direct_forget_locked(q, k);
		else
			kevent_direct_undefer_locked(q, k);
	}
	k->state &= ~(KEVENT_STATE_READY | KEVENT_STATE_HELD |
		      KEVENT_STATE_AGAIN | KEVENT_STATE_FORCED |
		      KEVENT_STATE_RECHECK);
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
 * kevent_indexed - a kevent enters or leaves its queue's index
 * @q: the queue, its mutex held
 * @k: the kevent
 * @in: true if it entered
 *
 * &kevent_queue.count counts the kevents in the index whose object has
 * not gone away.  This and kevent_object_gone(), which may run at the
 * same time, each change one bit of @k->index_state atomically, and the
 * count only if the other bit allowed it: a change is counted once.
 * Inline, with @in known, as the helpers of kevent_wake() are.
 */
static __always_inline void kevent_indexed(struct kevent_queue *q,
					   struct kevent *k, bool in)
{
	int old;

	if (in)
		old = atomic_fetch_or(KEVENT_INDEX_IN, &k->index_state);
	else
		old = atomic_fetch_andnot(KEVENT_INDEX_IN, &k->index_state);
	if (!(old & KEVENT_INDEX_DEAD))
		atomic_add(in ? 1 : -1, &q->count);
}

static __always_inline void kevent_unindex(struct kevent_queue *q,
					   struct kevent *k)
{
	if (hlist_unhashed(&k->index_node))
		return;
	kevent_index_del(&q->index, k);
	kevent_indexed(q, k, false);
}

/**
 * kevent_lookup_for_add - the registration a request names, before an ADD
 * @q: the queue, its mutex held
 * @uk: the request, whose type, id and user data are the key
 * @hash: kevent_index_hash() of @uk
 *
 * A dead registration with @uk's key leaves the index, which only it
 * kept the key in: the same request may be added again at once.
 *
 * Return: the live registration with @uk's key, or NULL.
 */
static struct kevent *kevent_lookup_for_add(struct kevent_queue *q,
					    const struct ukevent *uk, u32 hash)
{
	struct kevent *k;

	lockdep_assert_held(&q->mutex);

	k = kevent_index_find(&q->index, uk, hash);
	if (k && kevent_dead(k)) {
		kevent_unindex(q, k);
		k = NULL;
	}
	return k;
}

/**
 * kevent_insert - put a new registration in its queue's index
 * @q: the queue, its mutex held since kevent_lookup_for_add() found no
 *	registration with @new's key
 * @new: the registration
 * @hash: kevent_index_hash() of @new's key
 */
static void kevent_insert(struct kevent_queue *q, struct kevent *new, u32 hash)
{
	lockdep_assert_held(&q->mutex);

	kevent_index_add(&q->index, new, hash);
	kevent_indexed(q, new, true);
}

/**
 * kevent_enqueue - attach a new registration to its object
 * @q: its queue, the mutex held
 * @k: the registration, from kevent_alloc()
 *
 * On error @k is freed: a notification that raced with the failure may
 * have queued it, and it leaves the ready list first.
 *
 * Return: positive if the object is ready now, 0 if not, or the
 * source's negative errno.
 */
static int kevent_enqueue(struct kevent_queue *q, struct kevent *k)
{
	int ret = k->cb->enqueue(k);

	if (ret < 0) {
		kevent_unready(q, k, true);
		kevent_unindex(q, k);
		kevent_free(q, k);
	}
	return ret;
}

/**
 * kevent_register - make a registration and attach it to its object
 * @q: the queue, its mutex held
 * @cb: the callbacks of @uk's type
 * @uk: the request: type, id, event, req_flags and ptr
 * @priv: what the source's data holds before its enqueue runs, or NULL
 * @size: bytes of @priv, no more than @cb->priv_size
 * @kp: where the new registration goes
 *
 * Return: what the source's enqueue returned, positive if the object is
 * ready now, the registration indexed and attached in *@kp; -EEXIST if
 * @q has a live registration with @uk's key, -ENOSPC if the queue's
 * user has reached fs.kevent.max_user_kevents, -ENOMEM, or the
 * source's error.
 */
int kevent_register(struct kevent_queue *q, const struct kevent_callbacks *cb,
		    const struct ukevent *uk, const void *priv, size_t size,
		    struct kevent **kp)
{
	u32 hash = kevent_index_hash(uk);
	struct kevent *k;
	int ready;

	if (kevent_lookup_for_add(q, uk, hash))
		return -EEXIST;
	k = kevent_alloc(q, cb, uk);
	if (IS_ERR(k))
		return PTR_ERR(k);
	if (size)
		memcpy(kevent_priv(k), priv, size);
	ready = kevent_enqueue(q, k);
	if (ready < 0)
		return ready;
	kevent_insert(q, k, hash);
	*kp = k;
	return ready;
}

/**
 * kevent_modify - change the event and flags of a registration
 * @q: its queue, the mutex held
 * @k: the registration
 * @uk: the new event and req_flags, which its source accepted
 *
 * The pending event of @k is dropped and its object checked again: it
 * may be ready at once.
 */
void kevent_modify(struct kevent_queue *q, struct kevent *k,
		   const struct ukevent *uk)
{
	int ready;

	spin_lock_irq(&q->ready_lock);
	WRITE_ONCE(k->uk.event, uk->event);
	WRITE_ONCE(k->uk.req_flags, uk->req_flags);
	k->uk.ret_flags = 0;
	k->uk.ret_data[0] = 0;
	if (!(k->state & KEVENT_STATE_BROKEN))
		k->uk.ret_data[1] = 0;
	spin_unlock_irq(&q->ready_lock);

	/* What the source queued under the old request goes. */
	if (k->cb->modified)
		k->cb->modified(k);
	kevent_unready(q, k, false);
	ready = k->state & KEVENT_STATE_BROKEN ? 1 : k->cb->check(k);
	if (ready)
		kevent_ready(k, ready);
}

/**
 * kevent_remove - remove a registration and free it
 * @q: its queue, the mutex held
 * @k: the registration
 *
 * A pending event of @k is dropped.
 */
void kevent_remove(struct kevent_queue *q, struct kevent *k)
{
	lockdep_assert_held(&q->mutex);

	k->cb->dequeue(k);
	/*
	 * Detached, @k is changed only under the mutex we hold: one never
	 * queued leaves without the ready lock.
	 */
	if (k->state & KEVENT_STATE_LISTED)
		kevent_unready(q, k, true);
	kevent_unindex(q, k);
	kevent_free(q, k);
}

/**
 * kevent_remove_all - remove every registration of a queue
 * @q: the queue, the mutex held, no system call in it
 *
 * A registration whose object went away and whose key a new one took is
 * no longer in the index, only on the ready list, or in a slot of a
 * direct ring, waiting to be reported.
 */
void kevent_remove_all(struct kevent_queue *q)
{
	struct hlist_node *next;
	struct kevent *k;
	unsigned int i;

	for (i = 0; i < 1U << q->index.bits; i++)
		hlist_for_each_entry_safe(k, next, &q->index.buckets[i],
					  index_node) {
			kevent_remove(q, k);
			cond_resched();
		}
	while ((k = list_first_entry_or_null(&q->ready, struct kevent,
					     ready_entry))) {
		kevent_remove(q, k);
		cond_resched();
	}
	while (q->direct &&
	       (k = list_first_entry_or_null(&q->direct->posted,
					     struct kevent, ready_entry))) {
		kevent_remove(q, k);
		cond_resched();
	}
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
	kevent_fill_locked(k, out);
	spin_unlock_irq(&q->ready_lock);
}

/*
 * Put a kevent taken but not reported back at the head of the list.  A
 * settled one may be on the list already, notified since it was taken.
 */
static void kevent_give_back(struct kevent_queue *q, struct kevent *k)
{
	spin_lock_irq(&q->ready_lock);
	k->state &= ~(KEVENT_STATE_TRANSIT | KEVENT_STATE_AGAIN);
	if (k->state & KEVENT_STATE_READY) {
		list_move(&k->ready_entry, &q->ready);
	} else {
		k->state |= KEVENT_STATE_READY;
		list_add(&k->ready_entry, &q->ready);
		q->ready_num++;
	}
	if (q->direct)
		kevent_direct_flags_locked(q);
	spin_unlock_irq(&q->ready_lock);
}

/*
 * Ask the source of @k, taken because kevent_needs_check() said so,
 * whether it is still ready.  Return true if it is to be reported.
 */
static bool kevent_confirm(struct kevent_queue *q, struct kevent *k)
{
	int ret = k->cb->check(k);

	if (ret) {
		if (ret < 0)
			kevent_ready(k, ret);
		return true;
	}

	spin_lock_irq(&q->ready_lock);
	k->state &= ~(KEVENT_STATE_TRANSIT | KEVENT_STATE_RECHECK);
	if (k->state & KEVENT_STATE_AGAIN) {
		k->state &= ~KEVENT_STATE_AGAIN;
		if (q->direct)
			kevent_direct_enqueue_locked(q, k);
		else
			kevent_enqueue_locked(q, k);
	}
	spin_unlock_irq(&q->ready_lock);
	return false;
}

/* @k, off every list, is held by the call of @sink until it ends. */
static void kevent_hold_locked(struct kevent *k, struct kevent_sink *sink)
{
	lockdep_assert_held(&k->queue->ready_lock);

	k->state |= KEVENT_STATE_HELD;
	list_add_tail(&k->ready_entry, &sink->held);
}

/*
 * May @k, filled at place @i of the batch with only filled kevents
 * before it (@i < first_check), be settled as it is taken?  Only if what
 * kevent_complete_batch() would do with it is nothing: it is
 * edge-triggered, stays registered, has no delivery hook, and its report
 * brings the call to its minimum, so that it waits for its next
 * notification on no list.  Nor if it was forced: given back after a
 * failed copy, it must still be reported without asking its source.
 */
static __always_inline bool kevent_settles(struct kevent_queue *q,
					   struct kevent *k, unsigned int i,
					   struct kevent_sink *sink)
{
	return (k->uk.req_flags & (KEVENT_REQ_ET | KEVENT_REQ_ONESHOT)) ==
	       KEVENT_REQ_ET &&
	       !(k->state & (KEVENT_STATE_BROKEN | KEVENT_STATE_FORCED)) &&
	       !k->cb->delivered && !q->direct && sink->done + i + 1 >= sink->min;
}

/*
 * Take up to @want kevents off the ready list into @b.  One that this
 * harvest reported already, and that was notified again since, is held
 * instead, its event pending, to be queued again when the call ends.
 *
 * Each kevent taken is in TRANSIT until its batch is complete, so that a
 * notification meanwhile is remembered (AGAIN), unless it is settled
 * here (kevent_settles()): it then waits for its next notification at
 * once, marked as reported by this call, and a notification during the
 * copy queues it again, to be held by this call's next batch, if any, as
 * one that came after its report.  A batch of settled kevents needs no
 * second hold of the ready lock.
 */
static void kevent_take_batch(struct kevent_queue *q, struct kevent_batch *b,
			      unsigned int want, struct kevent_sink *sink)
{
	struct kevent *k;
	unsigned int i;
	bool check;

	spin_lock_irq(&q->ready_lock);
	b->n = 0;
	b->first_check = want;
	b->settled = 0;
	while (b->n < want &&
	       (k = list_first_entry_or_null(&q->ready, struct kevent,
					     ready_entry))) {
		list_del_init(&k->ready_entry);
		q->ready_num--;
		if (sink->call && k->reported_by == sink->call) {
			k->state &= ~KEVENT_STATE_READY;
			k->state |= KEVENT_STATE_AGAIN;
			kevent_hold_locked(k, sink);
			continue;
		}
		i = b->n++;
		b->k[i] = k;
		check = kevent_needs_check(k, k->state);
		k->state &= ~(KEVENT_STATE_READY | KEVENT_STATE_AGAIN);
		b->filled[i] = !check;
		if (check) {
			b->first_check = min(b->first_check, i);
		} else {
			kevent_fill_locked(k, &b->out[i]);
			if (i < b->first_check &&
			    kevent_settles(q, k, i, sink)) {
				b->settled |= BIT(i);
				if (!sink->call)
					sink->call = ++q->calls;
				k->reported_by = sink->call;
				continue;
			}
		}
		k->state |= KEVENT_STATE_TRANSIT;
	}
	b->first_check = min(b->first_check, b->n);
	spin_unlock_irq(&q->ready_lock);
}

/* Copy one report to @dst in the caller's buffer, and the ring if room. */
static int kevent_sink_put(struct kevent_queue *q, struct ukevent __user *dst,
			   struct ukevent *out)
{
	bool ring_room = q->ring && q->used < q->ring_size;

	if (q->ring && !ring_room)
		out->ret_flags |= KEVENT_RET_COPY_FAILED;
	if (copy_to_user(dst, out, sizeof(*out)))
		return -EFAULT;
	if (ring_room && !kevent_ring_put(q, out, 1))
		put_user(out->ret_flags | KEVENT_RET_COPY_FAILED, &dst->ret_flags);
	return 0;
}

/* Write the reports of @b into a direct ring; return how many fit. */
static unsigned int kevent_direct_put_batch(struct kevent_queue *q,
					    struct kevent_batch *b)
{
	unsigned int i;

	spin_lock_irq(&q->ready_lock);
	for (i = 0; i < b->n && kevent_direct_room_locked(q); i++) {
		*kevent_direct_slot_locked(q) = b->out[i];
		kevent_direct_publish_locked(q, b->k[i]);
	}
	kevent_direct_flags_locked(q);
	if (i)
		kevent_wake(q, false);
	spin_unlock_irq(&q->ready_lock);
	return i;
}

/* Copy the reports of @b where the harvest goes; return how many. */
static unsigned int kevent_sink_put_batch(struct kevent_queue *q,
					  struct kevent_sink *sink,
					  struct kevent_batch *b)
{
	unsigned long left;
	unsigned int i;

	if (q->direct)
		return kevent_direct_put_batch(q, b);
	if (sink->to_ring)
		return kevent_ring_put(q, b->out, b->n);
	if (!q->ring) {
		/* One copy: the reports are contiguous in the buffer. */
		left = copy_to_user(sink->buf + sink->done, b->out,
				    b->n * sizeof(b->out[0]));
		return b->n - DIV_ROUND_UP(left, sizeof(b->out[0]));
	}
	/* A queue with a ring also gets a copy in the ring: one by one. */
	for (i = 0; i < b->n; i++)
		if (kevent_sink_put(q, sink->buf + sink->done + i, &b->out[i]))
			break;
	return i;
}

/*
 * What becomes of the first @n kevents of @b, reported, but for those
 * settled when taken (kevent_take_batch()): one-shot and broken ones are
 * removed; any other is held by the call until it ends, so that no call
 * reports it twice.  Then a level-triggered one, or one notified meanwhile,
 * is queued again; an edge-triggered one waits for its next
 * notification.  In a direct ring the slot holds it instead, see
 * kevent_direct_reap(); one whose slot was consumed already, and that was
 * notified meanwhile, is queued at once.
 *
 * A call ends with the harvest that brings it to @sink->min events, and
 * no other call harvests meanwhile (the mutex): an edge-triggered kevent
 * reported from there on, with nothing pending, waits for its next
 * notification at once, on no list.  Its reported_by, the call's number
 * given at the first such kevent, keeps the rest of this harvest from
 * reporting it again (kevent_take_batch()), and the call's end has no
 * list to walk.
 */
static void kevent_complete_batch(struct kevent_queue *q,
				  struct kevent_batch *b, unsigned int n,
				  struct kevent_sink *sink)
{
	unsigned long settled = b->settled, remove = 0;
	struct kevent *k;
	unsigned int i;

	if (!(~settled & (BIT(n) - 1)))
		return;
	for (i = 0; i < n; i++) {
		if (settled & BIT(i))
			continue;
		k = b->k[i];
		if ((b->out[i].ret_flags & KEVENT_RET_BROKEN) ||
		    (k->uk.req_flags & KEVENT_REQ_ONESHOT))
			remove |= BIT(i);
		if (k->cb->delivered)
			k->cb->delivered(k, &b->out[i]);
	}

	spin_lock_irq(&q->ready_lock);
	for (i = 0; i < n; i++) {
		if (settled & BIT(i))
			continue;
		k = b->k[i];
		k->state &= ~(KEVENT_STATE_TRANSIT | KEVENT_STATE_FORCED |
			      KEVENT_STATE_RECHECK);
		if ((remove & BIT(i)) || (k->state & KEVENT_STATE_POSTED))
			continue;
		if (q->direct) {
			k->state &= ~KEVENT_STATE_AGAIN;
			kevent_direct_enqueue_locked(q, k);
			continue;
		}
		if ((k->state & KEVENT_STATE_AGAIN) ||
		    !(k->uk.req_flags & KEVENT_REQ_ET) ||
		    sink->done + i + 1 < sink->min) {
			kevent_hold_locked(k, sink);
			continue;
		}
		if (!sink->call)
			sink->call = ++q->calls;
		k->reported_by = sink->call;
	}
	spin_unlock_irq(&q->ready_lock);

	for (i = 0; remove; i++, remove >>= 1)
		if (remove & 1)
			kevent_remove(q, b->k[i]);
}

/**
 * kevent_harvest - report ready kevents
 * @q: the queue, its mutex held
 * @sink: where to copy them; @sink->done counts them
 *
 * Stops when @sink is full, the ready list is empty, or a copy faults:
 * then @sink->fault is set and the events not copied stay at the head
 * of the list, in order.
 */
void kevent_harvest(struct kevent_queue *q, struct kevent_sink *sink)
{
	struct kevent_batch *b = &q->batch;
	unsigned int i, j, copied;

	lockdep_assert_held(&q->mutex);

	while (sink->done < sink->max) {
		kevent_take_batch(q, b, min_t(unsigned int,
					      sink->max - sink->done,
					      KEVENT_HARVEST_BATCH), sink);
		if (!b->n)
			break;
		/* Those that need a check: ask their source, keep the ready. */
		for (i = j = b->first_check; i < b->n; i++) {
			if (!b->filled[i]) {
				if (!kevent_confirm(q, b->k[i]))
					continue;
				kevent_report(b->k[i], &b->out[i]);
			}
			if (i != j) {
				b->k[j] = b->k[i];
				b->out[j] = b->out[i];
			}
			j++;
		}
		b->n = j;
		copied = kevent_sink_put_batch(q, sink, b);
		/* Not copied: back at the head of the list, in order. */
		for (i = b->n; i > copied; i--)
			kevent_give_back(q, b->k[i - 1]);
		kevent_complete_batch(q, b, copied, sink);
		sink->done += copied;
		if (copied < b->n) {
			/*
			 * The room of a direct ring also goes to the
			 * notifications meanwhile: a full one is no fault.
			 */
			sink->fault = !q->direct;
			break;
		}
		/* Full: the call returns, or sleeps for its minimum, next. */
		if (sink->done >= sink->max || fatal_signal_pending(current))
			break;
		cond_resched();
	}
}

/**
 * __kevent_sink_finish - the body of kevent_sink_finish()
 * @q: the queue
 * @sink: the sink, which holds kevents, or whose queue has some ready
 */
void __kevent_sink_finish(struct kevent_queue *q, struct kevent_sink *sink)
{
	unsigned int n = 0;
	struct kevent *k;

	spin_lock_irq(&q->ready_lock);
	/*
	 * Each kevent leaves the held list here, or is taken off it by a
	 * REMOVE meanwhile: take the first until none is left, and let
	 * interrupts in every batch, the list being as long as max_nr.
	 */
	while ((k = list_first_entry_or_null(&sink->held, struct kevent,
					     ready_entry))) {
		if (!(++n % KEVENT_HARVEST_BATCH)) {
			spin_unlock_irq(&q->ready_lock);
			cond_resched();
			spin_lock_irq(&q->ready_lock);
			continue;
		}
		k->state &= ~KEVENT_STATE_HELD;
		if (k->state & KEVENT_STATE_AGAIN) {
			k->state &= ~KEVENT_STATE_AGAIN;
		} else if (k->uk.req_flags & KEVENT_REQ_ET) {
			list_del_init(&k->ready_entry);
			continue;
		} else {
			k->state |= KEVENT_STATE_RECHECK;
		}
		k->state |= KEVENT_STATE_READY;
		list_move_tail(&k->ready_entry, &q->ready);
		q->ready_num++;
	}
	if (q->ready_num)
		kevent_wake(q, false);
	spin_unlock_irq(&q->ready_lock);
}

/**
 * kevent_direct_reap - give back the slots consumed in a direct ring
 * @q: a direct queue, its mutex held
 *
 * Each kevent whose slot was consumed gives it up: one notified
 * meanwhile is queued, a level-triggered one is queued to be rechecked,
 * an edge-triggered one waits for its next notification.  The mutex
 * keeps harvests away: no kevent taken by one holds a slot meanwhile.
 */
void kevent_direct_reap(struct kevent_queue *q)
{
	struct kevent_direct *d = q->direct;
	unsigned int n = 0;
	struct kevent *k;
	bool again;

	lockdep_assert_held(&q->mutex);

	spin_lock_irq(&q->ready_lock);
	kevent_direct_refresh_locked(q);
	while ((k = list_first_entry_or_null(&d->posted, struct kevent,
					     ready_entry)) &&
	       d->khead > k->ring_pos) {
		/* The list is as long as the ring: let interrupts in. */
		if (!(++n % KEVENT_HARVEST_BATCH)) {
			spin_unlock_irq(&q->ready_lock);
			cond_resched();
			spin_lock_irq(&q->ready_lock);
			continue;
		}
		again = k->state & KEVENT_STATE_AGAIN;
		kevent_direct_forget_locked(q, k);
		if (!again && (k->uk.req_flags & KEVENT_REQ_ET))
			continue;
		if (!again)
			k->state |= KEVENT_STATE_RECHECK;
		kevent_enqueue_locked(q, k);
	}
	kevent_direct_flags_locked(q);
	spin_unlock_irq(&q->ready_lock);
}

/*
 * Ask the source of @k, on the ready list, whether it is still ready,
 * leaving @k where it is: taken off the list, even for the length of
 * the check, it would read as absent to a waiter deciding to sleep and
 * to an outer queue polling this one, and a level-triggered event could
 * be lost.  Only holders of the mutex take kevents off the list, so @k
 * stays on it while the ready lock is dropped.  One no longer ready
 * leaves the list, as a harvest would drop it, unless notified meanwhile.
 */
static bool kevent_recheck_one(struct kevent_queue *q, struct kevent *k)
	__must_hold(&q->ready_lock)
{
	bool ready = true;
	int ret;

	k->state |= KEVENT_STATE_CHECKING;
	spin_unlock_irq(&q->ready_lock);
	ret = k->cb->check(k);
	if (ret < 0)
		kevent_ready(k, ret);
	cond_resched();
	spin_lock_irq(&q->ready_lock);
	k->state &= ~KEVENT_STATE_CHECKING;
	if (!ret && !(k->state & KEVENT_STATE_AGAIN)) {
		list_del_init(&k->ready_entry);
		q->ready_num--;
		k->state &= ~(KEVENT_STATE_READY | KEVENT_STATE_RECHECK);
		ready = false;
	}
	k->state &= ~KEVENT_STATE_AGAIN;
	return ready;
}

/**
 * kevent_count_ready - how many events would a harvest report now?
 * @q: the queue, its mutex held
 * @want: stop counting at this many
 * @nested: the caller may hold locks of the files this queue watches
 *
 * Kevents that need a recheck are rechecked in place, and those no
 * longer ready leave the list, as a harvest would do, but nothing is
 * reported.  With @nested, for poll() on the queue, a kevent whose check
 * polls another file counts as ready unchecked: that file may be an
 * epoll set whose mutex the caller holds, or a queue that watches
 * another in turn, see LOCKING.
 *
 * Return: the number of kevents a harvest would report, up to @want.
 */
unsigned int kevent_count_ready(struct kevent_queue *q, unsigned int want,
				bool nested)
{
	struct list_head *pos = &q->ready;	/* the last one counted */
	struct kevent *k;
	unsigned int n = 0;

	lockdep_assert_held(&q->mutex);

	spin_lock_irq(&q->ready_lock);
	while (n < want && pos->next != &q->ready &&
	       !fatal_signal_pending(current)) {
		k = list_entry(pos->next, struct kevent, ready_entry);
		if (!kevent_needs_check(k, k->state) ||
		    (nested && (k->cb->flags & KEVENT_CALLBACKS_NESTS)) ||
		    kevent_recheck_one(q, k)) {
			n++;
			pos = &k->ready_entry;
		}
	}
	spin_unlock_irq(&q->ready_lock);
	return n;
}
