// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_POSIX_TIMER, POSIX timers that report to a queue.
 *
 * timer_create() with SIGEV_KEVENT names a queue by its descriptor, in
 * the place of sigev_notify_thread_id, and the kernel adds a registration
 * to it: id.raw[0] is the timer ID, event KEVENT_MASK_ALL, ptr the
 * sigev_value.  Userspace cannot add this type.
 *
 * An expiry does what the dequeue of the timer's signal would do: it
 * takes the overrun (the expiries the timer skipped because it was late,
 * or because its interval is below a jiffy) into it_overrun_last, for
 * timer_getoverrun(), and the timer rearms itself.  Each report carries
 * the number of expiries since the previous report in ret_data[0], and
 * the overrun, one less, in ret_data[1].
 *
 * The storage hangs off k_itimer.it_kevent; deleting the timer reports
 * the registration broken and releases the storage.  Closing the queue
 * detaches the timer, which goes on expiring.  A registration counts in
 * the limit of the queue's user like any other: timer_create() fails
 * with ENOSPC beyond it.
 */

#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/kevent_posix_timer.h>

#include "kevent.h"
#include "kernel_api.h"
#include "sources.h"

/**
 * struct kevent_posix_timer - the per-kevent data of KEVENT_POSIX_TIMER
 * @timr: the timer, for enqueue only
 * @expired: expiries not yet reported
 */
struct kevent_posix_timer {
	struct k_itimer *timr;
	atomic_t expired;
};

/**
 * kevent_posix_timer_create - register a new SIGEV_KEVENT timer
 * @timr: the timer, with its ID, not yet armed
 * @fd: the queue's descriptor, from sigev_notify_thread_id
 * @ptr: sigev_value.sival_ptr, the registration's ptr
 *
 * Return: 0, -EBADF if @fd is not open, -EINVAL if it is not a kevent
 * queue, -EEXIST if the queue holds a registration for a timer with the
 * same ID and ptr (made by another process sharing the queue), -ENOSPC
 * if the queue's user has reached fs.kevent.max_user_kevents, -ENOMEM,
 * -EINTR on a fatal signal.
 */
int kevent_posix_timer_create(struct k_itimer *timr, int fd,
			      void __user *ptr)
{
	struct kevent_posix_timer t = { .timr = timr };
	struct ukevent uk = {
		.type		= KEVENT_POSIX_TIMER,
		.event		= KEVENT_MASK_ALL,
		.ptr		= (unsigned long)ptr,
	};
	struct fd f;
	int err;

	f = fdget(fd);
	if (!f.file)
		return -EBADF;

	timr->it_kevent = kevent_storage_alloc();
	if (!timr->it_kevent) {
		err = -ENOMEM;
		goto out;
	}
	uk.id.raw[0] = timr->it_id;
	err = kevent_kernel_add(f.file, &uk, &t, sizeof(t));
	if (err) {
		kevent_storage_release(timr->it_kevent, err);
		timr->it_kevent = NULL;
	}
out:
	fdput(f);
	return err;
}

static int kevent_posix_timer_event(struct kevent *k, void *hint)
{
	struct kevent_posix_timer *t = kevent_priv(k);

	kevent_count_add(&t->expired, *(s64 *)hint + 1);
	return 1;
}

/**
 * __kevent_posix_timer_fire - report an expiry of a SIGEV_KEVENT timer
 * @timr: the timer, its it_lock held
 *
 * Called by kevent_posix_timer_fire().
 */
void __kevent_posix_timer_fire(struct k_itimer *timr)
{
	s64 overrun = clamp_t(s64, timr->it_overrun, 0, INT_MAX - 1);

	/* As posixtimer_rearm() does when the signal is dequeued. */
	timr->it_overrun_last = overrun;
	timr->it_overrun = -1;
	kevent_storage_notify(timr->it_kevent, KEVENT_MASK_ALL, &overrun);
}

/**
 * __kevent_posix_timer_release - report and detach a deleted timer
 * @timr: the timer, no longer armed
 *
 * Called by kevent_posix_timer_release().
 */
void __kevent_posix_timer_release(struct k_itimer *timr)
{
	kevent_storage_release(timr->it_kevent, -EBADF);
	timr->it_kevent = NULL;
}

static int kevent_posix_timer_enqueue(struct kevent *k)
{
	struct kevent_posix_timer *t = kevent_priv(k);

	atomic_set(&t->expired, 0);
	return kevent_storage_attach(t->timr->it_kevent, k);
}

static int kevent_posix_timer_check(struct kevent *k)
{
	struct kevent_posix_timer *t = kevent_priv(k);

	return atomic_read(&t->expired) > 0;
}

static void kevent_posix_timer_fill(struct kevent *k, struct ukevent *out)
{
	struct kevent_posix_timer *t = kevent_priv(k);
	int expired = atomic_read(&t->expired);

	out->ret_data[0] = expired;
	if (!(out->ret_flags & KEVENT_RET_BROKEN))
		out->ret_data[1] = expired ? expired - 1 : 0;
}

static void kevent_posix_timer_delivered(struct kevent *k,
					 const struct ukevent *out)
{
	struct kevent_posix_timer *t = kevent_priv(k);

	atomic_sub(out->ret_data[0], &t->expired);
}

const struct kevent_callbacks kevent_posix_timer_callbacks = {
	.enqueue	= kevent_posix_timer_enqueue,
	.dequeue	= kevent_storage_detach,
	.event		= kevent_posix_timer_event,
	.check		= kevent_posix_timer_check,
	.fill		= kevent_posix_timer_fill,
	.delivered	= kevent_posix_timer_delivered,
	.priv_size	= sizeof(struct kevent_posix_timer),
	.flags		= KEVENT_CALLBACKS_KERNELONLY,
	.name		= "kevent_posix_timer",
};
