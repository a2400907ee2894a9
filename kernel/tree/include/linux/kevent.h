/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: the interface between the kevent core and its event sources.
 */
#ifndef _LINUX_KEVENT_H
#define _LINUX_KEVENT_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/rbtree.h>
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
 *
 * Embedded in the watched object.  Its memory must stay valid for an RCU
 * grace period after kevent_storage_fini(), because a queue that removes a
 * kevent concurrently may still be about to take @lock.
 */
struct kevent_storage {
	/* protects list */
	spinlock_t lock;
	struct list_head list;
};

/* Userspace may not add kevents of this type (take28). */
#define KEVENT_CALLBACKS_KERNELONLY	0x1
/* Notifications may be spurious: check readiness before every report. */
#define KEVENT_CALLBACKS_RECHECK	0x2

/**
 * struct kevent_callbacks - what an event source does for the core
 * @enqueue: validate @k and attach it to its object.  Return positive if
 *	the object is ready now (at ADD), 0 if not, or a negative errno,
 *	which is reported to userspace in ret_data[1]; on error @k is left
 *	attached to nothing.  Only the state of
 *	the object counts: an event that merely happens during the call,
 *	such as a timer expiring, is queued by its notification.
 * @dequeue: detach @k from its object; once it returns, the source no
 *	longer refers to @k
 * @unhook: optional; undo what @enqueue hooked into the object besides
 *	the storage.  Called once, under the storage lock, when @k is
 *	detached from its storage, by kevent_storage_detach() or
 *	kevent_storage_fini().
 * @check: is @k ready?  Positive if ready, 0 if not, a negative errno if
 *	the object is broken.  Called in process context, without the
 *	storage lock, at MODIFY and before reports that need a recheck;
 *	may set k->uk.ret_data.
 * @fill: optional; complete the copy of @k that is about to be reported
 *	in @out, without consuming anything.  Called under the queue's ready
 *	lock with interrupts disabled.
 * @delivered: optional; @out has reached userspace: consume what it
 *	reported
 * @priv_size: bytes of per-kevent source data, see kevent_priv()
 * @flags: KEVENT_CALLBACKS_*
 *
 * One const instance per event type, listed in kernel/kevent/sources.c,
 * in the manner of FreeBSD's filterops.
 */
struct kevent_callbacks {
	int (*enqueue)(struct kevent *k);
	void (*dequeue)(struct kevent *k);
	void (*unhook)(struct kevent *k);
	int (*check)(struct kevent *k);
	void (*fill)(struct kevent *k, struct ukevent *out);
	void (*delivered)(struct kevent *k, const struct ukevent *out);
	size_t priv_size;
	unsigned int flags;
};

/**
 * struct kevent - one registration
 * @index_node: in the queue's index, under the queue's mutex
 * @ready_entry: on the queue's ready list, under the queue's ready lock
 * @storage_entry: on &kevent_storage.list, under its lock
 * @st: the storage @k is attached to, or NULL once detached
 * @queue: the queue @k belongs to
 * @cb: the callbacks of @k's type
 * @uk: the request as userspace made it, and its return fields
 * @state: KEVENT_STATE_* bits, under the queue's ready lock
 * @priv: @cb->priv_size bytes for the source
 */
struct kevent {
	struct rb_node index_node;
	struct list_head ready_entry;
	struct list_head storage_entry;
	struct kevent_storage __rcu *st;
	struct kevent_queue *queue;
	const struct kevent_callbacks *cb;
	struct ukevent uk;
	unsigned int state;
	unsigned long priv[];
};

static inline void *kevent_priv(struct kevent *k)
{
	return k->priv;
}

void kevent_storage_init(struct kevent_storage *st);
void kevent_storage_fini(struct kevent_storage *st);
void kevent_storage_attach(struct kevent_storage *st, struct kevent *k);
void kevent_storage_detach(struct kevent *k);
void kevent_storage_ready(struct kevent_storage *st, u32 event,
			  int (*state)(struct kevent *k));
void kevent_ready(struct kevent *k, int ret);

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
