// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the commands of kevent_ctl() on an array of requests.
 */

#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "kevent.h"

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
 * failed, or it was ready at once and is not kept; -EAGAIN if its source
 * needs its prepare first (kevent_ctl_prepare()).
 */
static int kevent_add(struct kevent_queue *q, struct ukevent *uk)
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
	ready = kevent_register(q, cb, uk, NULL, 0, &k);
	if (ready == -EAGAIN && cb->prepare)
		return ready;
	if (ready < 0) {
		err = ready;
		goto fail;
	}
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

typedef int (*kevent_ctl_fn)(struct kevent_queue *q, struct ukevent *uk);

/* REMOVE, MODIFY and READY: return true if @uk is to be copied back. */
static int kevent_ctl_remove(struct kevent_queue *q, struct ukevent *uk)
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

static int kevent_ctl_modify(struct kevent_queue *q, struct ukevent *uk)
{
	struct kevent *k = kevent_lookup(q, uk);
	int err = k ? kevent_validate(k->cb, uk) : -ENOENT;

	if (err) {
		kevent_entry_error(uk, err);
	} else {
		kevent_modify(q, k, uk);
		uk->ret_flags = KEVENT_RET_DONE;
	}
	return true;
}

static int kevent_ctl_ready(struct kevent_queue *q, struct ukevent *uk)
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
 * A request in, in one window of user access, as the five 64-bit words
 * it is on every ABI: field by field, its eight reads cost the caller
 * more, and the compiler kept three of their addresses for the result.
 */
static int kevent_get_request(struct ukevent *uk,
			      const struct ukevent __user *src)
{
	const u64 __user *from = (const u64 __user *)src;
	u64 *to = (u64 *)uk;

	BUILD_BUG_ON(sizeof(*uk) != 5 * sizeof(u64));
	if (!user_read_access_begin(src, sizeof(*src)))
		return -EFAULT;
	unsafe_get_user(to[0], &from[0], fault);
	unsafe_get_user(to[1], &from[1], fault);
	unsafe_get_user(to[2], &from[2], fault);
	unsafe_get_user(to[3], &from[3], fault);
	unsafe_get_user(to[4], &from[4], fault);
	user_read_access_end();
	return 0;
fault:
	user_read_access_end();
	return -EFAULT;
}

/*
 * A request's result back into its own entry: a command changes only
 * the ret_ fields of the request it copies back.
 */
static int kevent_put_result(struct ukevent __user *dst,
			     const struct ukevent *uk)
{
	if (!user_write_access_begin(dst, sizeof(*dst)))
		return -EFAULT;
	unsafe_put_user(uk->ret_flags, &dst->ret_flags, fault);
	unsafe_put_user(uk->ret_data[0], &dst->ret_data[0], fault);
	unsafe_put_user(uk->ret_data[1], &dst->ret_data[1], fault);
	user_write_access_end();
	return 0;
fault:
	user_write_access_end();
	return -EFAULT;
}

/*
 * Run the prepare of @uk's source, which its ADD asked for, without the
 * queue's mutex: what it waits for may be held by a thread that waits
 * for the queue (see LOCKING in kevent.c).  Return 0 to run the ADD
 * again, or true if @uk is to be copied back with the prepare's error;
 * the mutex held again.  Return -EINTR without it on a fatal signal.
 */
static int kevent_ctl_prepare(struct kevent_queue *q, struct ukevent *uk)
{
	int err;

	mutex_unlock(&q->mutex);
	err = kevent_callbacks_of(uk->type)->prepare(uk);
	if (err == -EINTR || mutex_lock_killable(&q->mutex))
		return -EINTR;
	if (!err)
		return 0;
	kevent_entry_error(uk, err);
	return true;
}

/*
 * Entries a call runs between two tests of a fatal signal and two
 * chances to reschedule: a test per entry costs more than the entry's
 * own loop, and 16 entries take microseconds.
 */
#define KEVENT_CTL_CHECK_EVERY	16

/*
 * Run @cmd on each of the @num entries of @arg, in order, under the
 * queue's mutex.  Entries to be copied back are written compacted to the
 * front of @arg, in order; for REMOVE and MODIFY that is every entry, in
 * place.  Return how many were copied back; a fault ends the call with
 * -EFAULT, a fatal signal with -EINTR, the entries before having taken
 * effect.
 */
static long kevent_ctl_each(struct kevent_queue *q, unsigned int cmd,
			    unsigned int num, struct ukevent __user *arg)
{
	unsigned int i, copied = 0, budget = KEVENT_CTL_CHECK_EVERY;
	kevent_ctl_fn fn = kevent_ctl_fns[cmd];
	struct ukevent uk;
	long ret;

	if (mutex_lock_killable(&q->mutex))
		return -EINTR;
	ret = -EINVAL;
	if (cmd != KEVENT_CTL_ADD && num > atomic_read(&q->count))
		goto out;
	for (i = 0; i < num; i++) {
		ret = -EFAULT;
		if (kevent_get_request(&uk, &arg[i]))
			goto out;
		ret = fn(q, &uk);
		if (ret == -EAGAIN) {
			ret = kevent_ctl_prepare(q, &uk);
			if (ret < 0)	/* without the mutex */
				return ret;
			/*
			 * The same entry again, counted in the budget below:
			 * each ADD may ask again, if its descriptor names
			 * another pipe by then.  i wraps and comes back.
			 */
			if (!ret)
				i--;
		}
		if (ret) {
			if (copied == i)
				ret = kevent_put_result(&arg[i], &uk);
			else
				ret = copy_to_user(&arg[copied], &uk,
						   sizeof(uk)) ? -EFAULT : 0;
			if (ret)
				goto out;
			copied++;
		}
		if (!--budget) {
			ret = -EINTR;
			if (fatal_signal_pending(current))
				goto out;
			cond_resched();
			budget = KEVENT_CTL_CHECK_EVERY;
		}
	}
	ret = copied;
out:
	mutex_unlock(&q->mutex);
	return ret;
}

/**
 * kevent_ctl - run a command on an array of requests
 * @q: the queue
 * @cmd: KEVENT_CTL_ADD, _REMOVE, _MODIFY or _READY
 * @num: the number of entries of @arg
 * @arg: the entries, in userspace; those to be copied back are written
 *	compacted to its front
 *
 * Return: the number of entries copied back, or -EINVAL, -EFAULT or
 * -EINTR as kevent_ctl(2) says.
 */
long kevent_ctl(struct kevent_queue *q, unsigned int cmd, unsigned int num,
		struct ukevent __user *arg)
{
	if (cmd >= ARRAY_SIZE(kevent_ctl_fns))
		return -EINVAL;
	if (cmd == KEVENT_CTL_READY && !num) {
		kevent_kick(q);
		return 0;
	}
	return kevent_ctl_each(q, cmd, num, arg);
}
