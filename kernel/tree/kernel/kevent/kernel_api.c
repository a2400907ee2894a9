// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: registrations that the kernel makes on a caller's behalf.
 *
 * Another subsystem, not userspace, adds these (timer_create() with
 * SIGEV_KEVENT), so they may be of a type userspace cannot add.  Once
 * made, a registration is like any other: its object removes it by
 * reporting it broken (kevent_storage_fini()), and userspace or the
 * queue's release may remove it first.
 */

#include <linux/slab.h>

#include "kevent.h"
#include "kernel_api.h"

/**
 * kevent_kernel_add - add a registration to a queue for the kernel
 * @file: the queue's file, which the caller holds
 * @uk: the registration: type, id, event, req_flags and ptr
 * @priv: what the source's per-kevent data holds before its enqueue runs
 * @size: bytes of @priv, no more than the source's priv_size
 *
 * Unlike kevent_ctl(), this accepts types marked
 * KEVENT_CALLBACKS_KERNELONLY, and a registration ready at once is kept
 * and queued, as with KEVENT_REQ_ALWAYS_QUEUE.
 *
 * Return: 0; -EINVAL if @file is not a kevent queue, @uk's type has no
 * source or @size is too large; -EEXIST if the queue has a registration
 * with the same type, id and ptr; -ENOMEM; or the source's error.
 */
int kevent_kernel_add(struct file *file, const struct ukevent *uk,
		      const void *priv, size_t size)
{
	const struct kevent_callbacks *cb = kevent_callbacks_of(uk->type);
	struct kevent_queue *q = kevent_queue_get(file);
	struct kevent *k;
	int err, ready;

	if (!q || !cb || size > cb->priv_size)
		return -EINVAL;

	k = kevent_alloc(q, cb, uk);
	if (!k)
		return -ENOMEM;
	memcpy(kevent_priv(k), priv, size);

	mutex_lock(&q->mutex);
	/* Index it first: once attached, it may be made ready at any time. */
	err = kevent_insert(q, k);
	if (err)
		goto out_free;
	ready = cb->enqueue(k);
	if (ready < 0) {
		kevent_unindex(q, k);
		err = ready;
		goto out_free;
	}
	if (ready)
		kevent_ready(k, ready);
	mutex_unlock(&q->mutex);
	return 0;

out_free:
	mutex_unlock(&q->mutex);
	kfree(k);
	return err;
}
