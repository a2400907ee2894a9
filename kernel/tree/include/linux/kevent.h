/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: the interface between the kevent core and its event sources.
 */
#ifndef _LINUX_KEVENT_H
#define _LINUX_KEVENT_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <uapi/linux/kevent.h>

struct kevent;
struct kevent_queue;

/**
 * struct kevent_storage - the kevents that watch one object
 * @lock: protects @list; taken with interrupts disabled, because objects
 *	notify from any context
 * @list: attached kevents, linked by &kevent.storage_entry
 * @count: the length of @list, under @lock
 * @events: the event bits that some attached kevent asks for, or more;
 *	changed under @lock, read without it by kevent_storage_asked(), so
 *	that a notification nobody asked for takes no lock
 * @rcu: frees the storage an RCU grace period after its object went away
 *
 * An object that kevents watch points to its storage, which the first
 * registration allocates (kevent_storage_get()) and the object's death
 * releases (kevent_storage_release()).  The storage outlives the object
 * by an RCU grace period, because a queue that detaches a kevent at that
 * moment may still be about to take @lock.
 */
struct kevent_storage {
	/* protects list */
	spinlock_t lock;
	struct list_head list;
	unsigned int count;
	u32 events;
	struct rcu_head rcu;
};

/* Userspace may not add kevents of this type (take28). */
#define KEVENT_CALLBACKS_KERNELONLY	0x1
/* Notifications may be spurious: check readiness before every report. */
#define KEVENT_CALLBACKS_RECHECK	0x2
/*
 * The check polls another file, which may be an epoll set or a kevent
 * queue: poll() on a queue does not run it (see LOCKING in kevent.c).
 */
#define KEVENT_CALLBACKS_NESTS		0x4

/**
 * struct kevent_callbacks - what an event source does for the core
 * @validate: optional; is @uk a request this source accepts?  Checks the
 *	id, event and req_flags, at ADD before anything is allocated and
 *	again at MODIFY; returns 0 or a negative errno.
 * @enqueue: set every field of kevent_priv(@k), whose bytes are
 *	whatever a freed kevent of the same source left there, and attach
 *	@k to its object.  Return positive if the object is
 *	ready now, 0 if not, or a negative errno, which is reported to
 *	userspace in ret_data[1].  Only the state of the object counts: an
 *	event that merely happens during the call, such as a timer
 *	expiring, is queued by its notification.  @k may have been attached
 *	and notified (put on the ready list) before @enqueue fails; it
 *	must be detached again by then: the core takes it off the ready
 *	list and frees it.  -EAGAIN asks for @prepare, then another ADD.
 * @prepare: optional; make what @enqueue of the request @uk needs and
 *	may not make under the queue's mutex, which kevent_ctl() drops to
 *	call it: a pipe's storage, which the pipe's mutex guards.  Returns
 *	0, and the ADD runs again, or a negative errno for the entry.
 * @dequeue: detach @k from its object; once it returns, the source no
 *	longer refers to @k
 * @unhook: optional; undo what @enqueue hooked into the object besides
 *	the storage.  Called once, under the storage lock, when @k is
 *	detached from its storage.
 * @event: optional; an object notified @k, with the storage lock held,
 *	in any context: account what @hint says happened and return
 *	positive if @k is ready, 0 if not, a negative errno if the object
 *	is broken.  Without @event, every notification makes @k ready.
 * @check: is @k ready?  Positive if ready, 0 if not, a negative errno if
 *	the object is broken.  Called in process context with the queue's
 *	mutex held and no spinlock, at MODIFY and before reports that need
 *	a recheck; may set k->uk.ret_data.
 * @modified: optional; MODIFY changed k->uk.event or k->uk.req_flags
 * @fill: optional; complete the copy of @k that is about to be reported
 *	in @out, without consuming anything.  Called under the queue's ready
 *	lock with interrupts disabled.  For a source without @delivered,
 *	@out may be a slot of a direct ring, which userspace can write
 *	meanwhile: decide nothing from what it holds then.
 * @delivered: optional; @out has reached userspace: consume what it
 *	reported
 * @priv_size: bytes of per-kevent source data, see kevent_priv()
 * @flags: KEVENT_CALLBACKS_*
 * @name: the name of the slab cache of its kevents
 *
 * One const instance per event type, listed in kernel/kevent/sources.c,
 * in the manner of FreeBSD's filterops.
 */
struct kevent_callbacks {
	int (*validate)(const struct ukevent *uk);
	int (*enqueue)(struct kevent *k);
	int (*prepare)(const struct ukevent *uk);
	void (*dequeue)(struct kevent *k);
	void (*unhook)(struct kevent *k);
	int (*event)(struct kevent *k, void *hint);
	int (*check)(struct kevent *k);
	void (*modified)(struct kevent *k);
	void (*fill)(struct kevent *k, struct ukevent *out);
	void (*delivered)(struct kevent *k, const struct ukevent *out);
	size_t priv_size;
	unsigned int flags;
	const char *name;
};

/**
 * struct kevent - one registration
 * @index_node: in a chain of the queue's index, under the queue's
 *	mutex; unhashed once out of the index
 * @ready_entry: on the queue's ready list, on the list of a harvest
 *	that holds it, or on the direct ring's list of posted kevents, under
 *	the queue's ready lock
 * @storage_entry: on &kevent_storage.list, under its lock
 * @next_cached: once freed, the next registration of its queue's cache,
 *	under the queue's mutex (kevent_free())
 * @st: the storage @k is attached to, or NULL once detached
 * @queue: the queue @k belongs to
 * @cb: the callbacks of @k's type
 * @uk: the request as userspace made it, and its return fields
 * @state: KEVENT_STATE_* bits, under the queue's ready lock
 * @index_state: KEVENT_INDEX_* bits, changed atomically
 * @index_hash: the hash of @uk's key, by which the index chains @k
 * @confirm: its notifications may be spurious: ask its source
 *	(&kevent_callbacks.check) before each report.  Set for every kevent
 *	of a source with KEVENT_CALLBACKS_RECHECK, or by the source's
 *	&kevent_callbacks.enqueue, before it attaches @k, for one kevent
 * @ring_pos: the free-running position of @k's slot in a direct ring,
 *	while KEVENT_STATE_POSTED, under the queue's ready lock
 * @reported_by: on a queue without a direct ring, the call that last
 *	reported @k held by no list, numbered as &kevent_sink.call, under
 *	the queue's ready lock
 * @priv: @cb->priv_size bytes for the source
 */
struct kevent {
	struct hlist_node index_node;
	struct list_head ready_entry;
	union {
		struct list_head storage_entry;
		struct kevent *next_cached;
	};
	struct kevent_storage __rcu *st;
	struct kevent_queue *queue;
	const struct kevent_callbacks *cb;
	struct ukevent uk;
	unsigned int state;
	atomic_t index_state;
	u32 index_hash;
	bool confirm;
	union {
		u64 ring_pos;
		u64 reported_by;
	};
	unsigned long priv[];
};

/**
 * kevent_priv - the data of a kevent's source
 * @k: the kevent
 *
 * Return: the &kevent_callbacks.priv_size bytes that the source keeps in
 * each of its kevents, zeroed when the kevent is allocated.
 */
static inline void *kevent_priv(struct kevent *k)
{
	return k->priv;
}

struct kevent_storage *__kevent_storage_alloc(struct lock_class_key *key);
struct kevent_storage *__kevent_storage_get(struct kevent_storage **slot,
					    struct lock_class_key *key);

/*
 * Each kind of object gets a lockdep class of its own for its storages:
 * they nest in different locks (siglock, it_lock, a wait queue's lock).
 */
#define kevent_storage_alloc()						\
({									\
	static struct lock_class_key __key;				\
									\
	__kevent_storage_alloc(&__key);					\
})

#define kevent_storage_get(slot)					\
({									\
	static struct lock_class_key __key;				\
									\
	__kevent_storage_get(slot, &__key);				\
})

void kevent_storage_release(struct kevent_storage *st, int err);
int kevent_storage_attach(struct kevent_storage *st, struct kevent *k);
void kevent_storage_detach(struct kevent *k);
int kevent_storage_call(struct kevent *k, int (*fn)(struct kevent *k));
void __kevent_storage_notify(struct kevent_storage *st, u32 event, void *hint);
void __kevent_storage_notify_more(struct kevent_storage *st, u32 event);
void __kevent_storage_notify_ready(struct kevent_storage *st, u32 event,
				   u32 ready);

/**
 * kevent_storage_asked - does a kevent of @st ask for a bit of @event?
 * @st: the object's storage
 * @event: the event bits that happened, after the object changed
 *
 * A notification of bits nobody asked for, a pipe's every read where
 * kevents wait for data, costs this test and no call.
 *
 * Return: false if no kevent of @st asks for any bit of @event.
 */
static inline bool kevent_storage_asked(struct kevent_storage *st, u32 event)
{
	if (READ_ONCE(st->events) & event)
		return true;
	/*
	 * Pairs with the barrier of kevent_storage_want(): the caller
	 * changed the object before this, so either the bits of a kevent
	 * being added are seen now, or its check sees the change.  Only
	 * the path that skips the lock needs it.
	 */
	smp_mb();
	return READ_ONCE(st->events) & event;
}

/**
 * kevent_storage_notify - an object reports that @event happened
 * @st: the object's storage
 * @event: the event bits that happened
 * @hint: what happened, for the source's &kevent_callbacks.event
 *
 * Every kevent attached to @st that asks for one of the bits is asked
 * whether it is ready (&kevent_callbacks.event; without one, it is), and
 * queued ready or broken if so.  Callable from any context.
 */
static inline void kevent_storage_notify(struct kevent_storage *st,
					 u32 event, void *hint)
{
	if (kevent_storage_asked(st, event))
		__kevent_storage_notify(st, event, hint);
}

void kevent_ready(struct kevent *k, int ret);

void kevent_count_add(atomic_t *count, u64 n);

#ifdef CONFIG_KEVENT
void __kevent_release_file(struct file *file);

/**
 * kevent_release_file - a file is going away
 * @file: the file, from __fput()
 *
 * Each kevent watching @file is reported broken, once, and detached.
 */
static inline void kevent_release_file(struct file *file)
{
	if (unlikely(READ_ONCE(file->f_kevent)))
		__kevent_release_file(file);
}
#else
static inline void kevent_release_file(struct file *file) { }
#endif

#endif /* _LINUX_KEVENT_H */
