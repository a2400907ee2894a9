// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: registrations and kevent_ctl().
 *
 * A registration is identified by its type, its id and its user data;
 * the queue keeps them in a red-black tree sorted by that triple.  One
 * whose object went away (KEVENT_STATE_DEAD) is no longer found: it
 * stays in the tree only until it is reported or a new registration
 * takes its key.
 */

#include <linux/file.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>

#include "kevent.h"

static int kevent_key_cmp(const struct ukevent *a, const struct ukevent *b)
{
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->id.raw_u64 != b->id.raw_u64)
		return a->id.raw_u64 < b->id.raw_u64 ? -1 : 1;
	if (a->ptr != b->ptr)
		return a->ptr < b->ptr ? -1 : 1;
	return 0;
}

static bool kevent_dead(const struct kevent *k)
{
	return READ_ONCE(k->state) & KEVENT_STATE_DEAD;
}

/* The registration with @uk's key, dead or alive, or NULL. */
static struct kevent *kevent_find(struct kevent_queue *q,
				  const struct ukevent *uk)
{
	struct rb_node *node = q->index.rb_node;

	while (node) {
		struct kevent *k = rb_entry(node, struct kevent, index_node);
		int cmp = kevent_key_cmp(uk, &k->uk);

		if (!cmp)
			return k;
		node = cmp < 0 ? node->rb_left : node->rb_right;
	}
	return NULL;
}

static struct kevent *kevent_lookup(struct kevent_queue *q,
				    const struct ukevent *uk)
{
	struct kevent *k = kevent_find(q, uk);

	return k && !kevent_dead(k) ? k : NULL;
}

static void kevent_unindex(struct kevent_queue *q, struct kevent *k)
{
	if (RB_EMPTY_NODE(&k->index_node))
		return;
	mutex_lock(&q->index_lock);
	rb_erase(&k->index_node, &q->index);
	RB_CLEAR_NODE(&k->index_node);
	mutex_unlock(&q->index_lock);
	kevent_indexed(q, k, false);
}

/**
 * kevent_insert - put a new registration in its queue's index
 * @q: the queue, its mutex held
 * @new: the registration, with its key in @new->uk
 *
 * A dead registration with the same key leaves the index for it.
 *
 * Return: 0, or -EEXIST if @q has a live registration with the same key.
 */
int kevent_insert(struct kevent_queue *q, struct kevent *new)
{
	struct rb_node **link = &q->index.rb_node, *parent = NULL;
	struct kevent *k;
	int cmp;

	lockdep_assert_held(&q->mutex);

	k = kevent_find(q, &new->uk);
	if (k) {
		if (!kevent_dead(k))
			return -EEXIST;
		kevent_unindex(q, k);
	}
	while (*link) {
		k = rb_entry(*link, struct kevent, index_node);
		cmp = kevent_key_cmp(&new->uk, &k->uk);
		parent = *link;
		link = cmp < 0 ? &parent->rb_left : &parent->rb_right;
	}
	mutex_lock(&q->index_lock);
	rb_link_node(&new->index_node, parent, link);
	rb_insert_color(&new->index_node, &q->index);
	mutex_unlock(&q->index_lock);
	kevent_indexed(q, new, true);
	return 0;
}

static void kevent_free(struct kevent_queue *q, struct kevent *k)
{
	kevent_uncharge(q->user);
	kfree(k);
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
	kevent_unready(q, k);
	kevent_unindex(q, k);
	kevent_free(q, k);
}

/**
 * kevent_remove_all - remove every registration of a queue
 * @q: the queue, the mutex held, no system call in it
 *
 * A registration whose object went away and whose key a new one took is
 * no longer in the index, only on the ready list, waiting to be reported.
 */
void kevent_remove_all(struct kevent_queue *q)
{
	struct rb_node *node;
	struct kevent *k;

	while ((node = rb_first(&q->index))) {
		kevent_remove(q, rb_entry(node, struct kevent, index_node));
		cond_resched();
	}
	while ((k = list_first_entry_or_null(&q->ready, struct kevent,
					     ready_entry))) {
		kevent_remove(q, k);
		cond_resched();
	}
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
struct kevent *kevent_alloc(struct kevent_queue *q,
			    const struct kevent_callbacks *cb,
			    const struct ukevent *uk)
{
	struct kevent *k;
	int err;

	err = kevent_charge(q->user);
	if (err)
		return ERR_PTR(err);
	k = kzalloc(struct_size(k, priv, DIV_ROUND_UP(cb->priv_size,
						      sizeof(long))),
		    GFP_KERNEL_ACCOUNT);
	if (!k) {
		kevent_uncharge(q->user);
		return ERR_PTR(-ENOMEM);
	}
	k->uk = *uk;
	k->uk.ret_flags = 0;
	k->uk.ret_data[0] = 0;
	k->uk.ret_data[1] = 0;
	k->queue = q;
	k->cb = cb;
	RB_CLEAR_NODE(&k->index_node);
	INIT_LIST_HEAD(&k->ready_entry);
	INIT_LIST_HEAD(&k->storage_entry);
	return k;
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
int kevent_enqueue(struct kevent_queue *q, struct kevent *k)
{
	int ret = k->cb->enqueue(k);

	if (ret < 0) {
		kevent_unready(q, k);
		kevent_unindex(q, k);
		kevent_free(q, k);
	}
	return ret;
}

/* The per-entry error that goes back to userspace in ret_data[1]. */
static void kevent_entry_error(struct ukevent *uk, int err)
{
	uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
	uk->ret_data[1] = err;
}

static int kevent_validate(const struct kevent_callbacks *cb,
			   const struct ukevent *uk)
{
	if (uk->req_flags & ~KEVENT_REQ_MASK)
		return -EINVAL;
	return cb->validate ? cb->validate(uk) : 0;
}

/*
 * Add one registration.  Return true if @uk is to be copied back: it
 * failed, or it was ready at once and is not kept.
 */
static bool kevent_add(struct kevent_queue *q, struct ukevent *uk)
{
	const struct kevent_callbacks *cb = kevent_callbacks_of(uk->type);
	struct kevent *k;
	int err, ready;

	if (!cb || (cb->flags & KEVENT_CALLBACKS_KERNELONLY)) {
		err = -ENOSYS;
		goto fail;
	}
	err = kevent_validate(cb, uk);
	if (err)
		goto fail;
	if (kevent_lookup(q, uk)) {
		err = -EEXIST;
		goto fail;
	}

	k = kevent_alloc(q, cb, uk);
	if (IS_ERR(k)) {
		err = PTR_ERR(k);
		goto fail;
	}
	ready = kevent_enqueue(q, k);
	if (ready < 0) {
		err = ready;
		goto fail;
	}
	WARN_ON_ONCE(kevent_insert(q, k));

	if (!ready)
		return false;
	if (uk->req_flags & KEVENT_REQ_ALWAYS_QUEUE) {
		kevent_ready(k, ready);
		return false;
	}
	kevent_report(k, uk);
	kevent_remove(q, k);
	return true;

fail:
	kevent_entry_error(uk, err);
	return true;
}

/*
 * Change the event and flags of @k, after its source accepted them.  Its
 * pending event is dropped and its object checked again: it may be
 * ready at once.
 */
static int kevent_modify(struct kevent_queue *q, struct kevent *k,
			 const struct ukevent *uk)
{
	int err, ready;

	err = kevent_validate(k->cb, uk);
	if (err)
		return err;

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
	kevent_unready(q, k);
	ready = k->state & KEVENT_STATE_BROKEN ? 1 : k->cb->check(k);
	if (ready)
		kevent_ready(k, ready);
	return 0;
}

typedef bool (*kevent_ctl_fn)(struct kevent_queue *q, struct ukevent *uk);

/* REMOVE, MODIFY and READY: return true if @uk is to be copied back. */
static bool kevent_ctl_remove(struct kevent_queue *q, struct ukevent *uk)
{
	struct kevent *k = kevent_lookup(q, uk);

	if (!k) {
		kevent_entry_error(uk, -ENOENT);
		return true;
	}
	kevent_remove(q, k);
	uk->ret_flags = KEVENT_RET_DONE;
	return true;
}

static bool kevent_ctl_modify(struct kevent_queue *q, struct ukevent *uk)
{
	struct kevent *k = kevent_lookup(q, uk);
	int err = k ? kevent_modify(q, k, uk) : -ENOENT;

	if (err)
		kevent_entry_error(uk, err);
	else
		uk->ret_flags = KEVENT_RET_DONE;
	return true;
}

static bool kevent_ctl_ready(struct kevent_queue *q, struct ukevent *uk)
{
	struct kevent *k = kevent_lookup(q, uk);

	if (k) {
		kevent_force_ready(k);
		return false;
	}
	kevent_entry_error(uk, -ENOENT);
	return true;
}

static const kevent_ctl_fn kevent_ctl_fns[] = {
	[KEVENT_CTL_ADD]	= kevent_add,
	[KEVENT_CTL_REMOVE]	= kevent_ctl_remove,
	[KEVENT_CTL_MODIFY]	= kevent_ctl_modify,
	[KEVENT_CTL_READY]	= kevent_ctl_ready,
};

/*
 * Run @fn on each of the @num entries of @arg, in order.  Entries to be
 * copied back are written compacted to the front of @arg, in order; for
 * REMOVE and MODIFY that is every entry, in place.  Return how many were
 * copied back; a fault ends the call with -EFAULT, the entries before it
 * having taken effect.
 */
static long kevent_ctl_each(struct kevent_queue *q, kevent_ctl_fn fn,
			    unsigned int num, struct ukevent __user *arg)
{
	unsigned int i, copied = 0;
	struct ukevent uk;

	for (i = 0; i < num; i++) {
		if (copy_from_user(&uk, &arg[i], sizeof(uk)))
			return -EFAULT;
		if (fn(q, &uk)) {
			if (copy_to_user(&arg[copied], &uk, sizeof(uk)))
				return -EFAULT;
			copied++;
		}
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return copied;
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

	if (cmd >= ARRAY_SIZE(kevent_ctl_fns)) {
		ret = -EINVAL;
	} else if (cmd == KEVENT_CTL_READY && !num) {
		kevent_kick(q);
		ret = 0;
	} else if (mutex_lock_killable(&q->mutex)) {
		ret = -EINTR;
	} else {
		if (cmd != KEVENT_CTL_ADD && num > atomic_read(&q->count))
			ret = -EINVAL;
		else
			ret = kevent_ctl_each(q, kevent_ctl_fns[cmd], num, arg);
		mutex_unlock(&q->mutex);
	}
	fdput(f);
	return ret;
}
