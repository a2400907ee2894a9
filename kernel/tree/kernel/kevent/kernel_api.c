// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: registrations that the kernel makes on a caller's behalf.
 *
 * Another subsystem, not userspace, adds these (timer_create() with
 * SIGEV_KEVENT), so they may be of a type userspace cannot add.  Once
 * made, a registration is like any other: its object removes it by
 * reporting it broken (kevent_storage_release()), and userspace or the
 * queue's release may remove it first.
 */

#include "kevent.h"
#include "kernel_api.h"

/**
 * kevent_kernel_add - add a registration to a queue for the kernel
 * @file: the queue's file, which the caller holds
 * @uk: the registration: type, id, event, req_flags and ptr
 * @priv: what the source's per-kevent data holds before its enqueue runs,
 *	which sets the rest
 * @size: bytes of @priv, no more than the source's priv_size
 *
 * Unlike kevent_ctl(), this accepts types marked
 * KEVENT_CALLBACKS_KERNELONLY, and a registration ready at once is kept
 * and queued, as with KEVENT_REQ_ALWAYS_QUEUE.
 *
 * Return: 0; -EINVAL if @file is not a kevent queue, @uk's type has no
 * source or one that needs &kevent_callbacks.prepare, which only
 * kevent_ctl() runs, or @size is too large; -EEXIST if the queue has a
 * registration with the same type, id and ptr; -ENOSPC if the queue's
 * user has reached fs.kevent.max_user_kevents; -ENOMEM; -EINTR if a
 * fatal signal came while waiting for the queue; or the source's error.
 */
int kevent_kernel_add(struct file *file, const struct ukevent *uk,
		      const void *priv, size_t size)
{
	const struct kevent_callbacks *cb = kevent_callbacks_of(uk->type);
	struct kevent_queue *q = kevent_queue_from_file(file);
	struct kevent *k;
	int ret;

	if (!q || !cb || cb->prepare || size > cb->priv_size)
		return -EINVAL;
	if (mutex_lock_killable(&q->mutex))
		return -EINTR;
	ret = kevent_register(q, cb, uk, priv, size, &k);
	if (ret > 0)
		kevent_ready(k, ret);
	mutex_unlock(&q->mutex);
	return min(ret, 0);
}
