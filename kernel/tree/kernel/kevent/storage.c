// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: storages, the lists of kevents that watch one object.
 *
 * An object allocates its storage at the first registration and
 * releases it when it goes away.  Attaching, detaching and notifying
 * happen under the storage's lock; releasing reports every kevent still
 * attached as broken, detaches it, and frees the storage an RCU grace
 * period later, without the queues' mutexes: a queue may be stuck in a
 * copy to a slow user page, and an object must be able to die meanwhile.
 *
 * A kevent is detached by its queue (kevent_storage_detach()) or by its
 * object (kevent_storage_release()), whichever comes first; k->st tells
 * which.  The object's side clears it last, with a release store, once
 * it no longer touches the kevent: the queue's side may then free the
 * kevent at once, as epoll and io_uring do with their wait entries.
 *
 * A storage keeps the union of the event bits its kevents ask for, or
 * more, so that a notification of bits nobody asked for (a pipe's reader
 * making room where only data are watched) returns without the lock.  The
 * notifier changed its object before it reads the union, a kevent adds
 * its bits before it reads the object: a full barrier on each side
 * makes one of them see the other (kevent_storage_want() and
 * kevent_storage_asked(), inline in <linux/kevent.h>).  The walk of a
 * notification, __kevent_storage_notify(), is in kevent.c, beside the
 * ready list it feeds.
 */

#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "kevent.h"

/**
 * __kevent_storage_alloc - allocate a storage
 * @key: the lockdep class of its lock, one per kind of object
 *
 * Use kevent_storage_alloc(), which supplies @key.
 *
 * Return: the storage, charged to the caller's memory cgroup, or NULL.
 */
struct kevent_storage *__kevent_storage_alloc(struct lock_class_key *key)
{
	struct kevent_storage *st = kmalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);

	if (!st)
		return NULL;
	spin_lock_init(&st->lock);
	lockdep_set_class(&st->lock, key);
	INIT_LIST_HEAD(&st->list);
	st->count = 0;
	st->events = 0;
	return st;
}

/**
 * __kevent_storage_get - the storage an object points to, made if need be
 * @slot: the object's pointer to its storage, NULL until the first call
 * @key: the lockdep class of the storage's lock
 *
 * Use kevent_storage_get(), which supplies @key.  Callers racing for the
 * same object get the same storage.  The full barrier of cmpxchg()
 * orders the store of @slot before whatever the caller reads of the
 * object next, against an object that changes state and then reads
 * @slot to notify.
 *
 * Return: the storage, or NULL if none could be allocated.
 */
struct kevent_storage *__kevent_storage_get(struct kevent_storage **slot,
					    struct lock_class_key *key)
{
	struct kevent_storage *st, *old;

	st = READ_ONCE(*slot);
	if (st)
		return st;
	st = __kevent_storage_alloc(key);
	if (!st)
		return NULL;
	old = cmpxchg(slot, NULL, st);
	if (old) {
		kfree(st);
		return old;
	}
	return st;
}

/*
 * Add the bits that @k asks for to @st's union, under @st's lock.  The
 * barrier orders their store before what the caller reads of the object
 * next, against a notifier that changed the object and then finds the
 * bits missing (kevent_storage_asked()).
 */
static void kevent_storage_want(struct kevent_storage *st, struct kevent *k)
{
	u32 event = READ_ONCE(k->uk.event);

	if (event & ~st->events) {
		WRITE_ONCE(st->events, st->events | event);
		/* Pairs with the one of kevent_storage_asked(). */
		smp_mb();
	}
}

/**
 * kevent_storage_attach - attach a kevent to an object
 * @st: the object's storage
 * @k: the kevent, not attached anywhere yet
 *
 * Each notification of the object walks its kevents with interrupts
 * disabled: their number is bounded by fs.kevent.max_object_kevents,
 * whoever made them, so that no user can lengthen that walk without
 * bound, whatever his own limit.
 *
 * Return: 0, or -ENOSPC if @st has as many kevents as the limit allows.
 */
int kevent_storage_attach(struct kevent_storage *st, struct kevent *k)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&st->lock, flags);
	if (st->count < READ_ONCE(kevent_max_object_kevents)) {
		st->count++;
		list_add_tail(&k->storage_entry, &st->list);
		rcu_assign_pointer(k->st, st);
		kevent_storage_want(st, k);
	} else {
		err = -ENOSPC;
	}
	spin_unlock_irqrestore(&st->lock, flags);
	return err;
}

/*
 * Detach @k from @st, whose lock is held.  Nothing touches @k after the
 * store of NULL: its queue may free it as soon as it sees it.  Inline:
 * every REMOVE comes here, and a kernel optimised for size would call it.
 */
static __always_inline void kevent_storage_unlink(struct kevent_storage *st,
						  struct kevent *k)
{
	if (k->cb->unhook)
		k->cb->unhook(k);
	list_del(&k->storage_entry);
	st->count--;
	/* Pairs with the acquire in kevent_storage_detach(). */
	smp_store_release(&k->st, NULL);
}

/**
 * kevent_storage_detach - detach a kevent from its object, if still attached
 * @k: the kevent
 *
 * Once it returns, the object no longer refers to @k.
 */
void kevent_storage_detach(struct kevent *k)
{
	struct kevent_storage *st;
	unsigned long flags;

	rcu_read_lock();
	/* Pairs with the release in kevent_storage_unlink(). */
	st = (struct kevent_storage __force *)smp_load_acquire(&k->st);
	if (st) {
		spin_lock_irqsave(&st->lock, flags);
		/* The object's release may have come first. */
		if (rcu_access_pointer(k->st) == st) {
			kevent_storage_unlink(st, k);
			/*
			 * The union is left wider than need be until the
			 * last kevent goes: made anew at every detach, it
			 * would cost a walk of the list with interrupts off.
			 */
			if (!st->count)
				WRITE_ONCE(st->events, 0);
		}
		spin_unlock_irqrestore(&st->lock, flags);
	}
	rcu_read_unlock();
}

/**
 * kevent_storage_call - run @fn on @k under its storage's lock
 * @k: the kevent
 * @fn: what to run; while @k is attached its object is alive
 *
 * For sources that must look at their object outside a notification.
 * The check that follows a MODIFY comes through here: what @k asks for
 * now joins the storage's union before @fn looks at the object.
 *
 * Return: what @fn returned, or -EBADF if @k is no longer attached.
 */
int kevent_storage_call(struct kevent *k, int (*fn)(struct kevent *k))
{
	struct kevent_storage *st;
	unsigned long flags;
	int ret = -EBADF;

	rcu_read_lock();
	st = rcu_dereference(k->st);
	if (st) {
		spin_lock_irqsave(&st->lock, flags);
		if (rcu_access_pointer(k->st) == st) {
			/* A MODIFY may have asked for more bits. */
			kevent_storage_want(st, k);
			ret = fn(k);
		}
		spin_unlock_irqrestore(&st->lock, flags);
	}
	rcu_read_unlock();
	return ret;
}

/**
 * kevent_storage_release - an object goes away
 * @st: its storage
 * @err: the error each attached kevent is reported broken with
 *
 * Each attached kevent is reported once, broken, leaves its queue's
 * index (an ADD of the same request succeeds at once) and is detached.
 * @st is freed an RCU grace period later.
 */
void kevent_storage_release(struct kevent_storage *st, int err)
{
	struct kevent *k, *next;
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	list_for_each_entry_safe(k, next, &st->list, storage_entry) {
		kevent_object_gone(k, err);
		kevent_storage_unlink(st, k);
	}
	spin_unlock_irqrestore(&st->lock, flags);
	kfree_rcu(st, rcu);
}

/**
 * kevent_count_add - add to a count of events, saturating
 * @count: the count, never negative
 * @n: events to add
 *
 * A count that would pass INT_MAX stays there, so that it never wraps to
 * a value that reads as "nothing happened".
 */
void kevent_count_add(atomic_t *count, u64 n)
{
	int old = atomic_read(count), new;

	do {
		new = n >= INT_MAX - old ? INT_MAX : old + (int)n;
	} while (!atomic_try_cmpxchg(count, &old, new));
}
