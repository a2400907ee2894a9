// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: waiting for events, in kevent_get_events() and kevent_wait().
 *
 * Waiters sleep exclusively on the queue's wait queue, and a ready event
 * wakes one of them, or all of them for KEVENT_REQ_WAKEUP_ALL.  Each
 * waiter's wake function first checks whether what the waiter waits for
 * has come (enough ready events, room in the ring, a commit, a kick), so
 * that a wakeup is never spent on a thread that would go back to sleep
 * while another one could have run.  Each waiter has its own deadline.
 */

#include <linux/compat.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/restart_block.h>
#include <linux/thread_info.h>
#include <linux/sched/signal.h>
#include <linux/time64.h>
#include <linux/uaccess.h>

#include "kevent.h"

/**
 * struct kevent_deadline - when a wait ends
 * @expires: the absolute time, on @clock
 * @clock: CLOCK_MONOTONIC, or CLOCK_REALTIME for KEVENT_FLAGS_ABSTIME
 * @forever: there is no deadline
 * @passed: the deadline has passed, or the call must not sleep
 * @relative: @expires was computed from a relative timeout, and a
 *	restart of the call must keep it
 * @pending: @expires still holds the relative timeout: the clock is read
 *	only once the call has to wait, not when events are ready at once
 */
struct kevent_deadline {
	ktime_t expires;
	clockid_t clock;
	bool forever;
	bool passed;
	bool relative;
	bool pending;
};

/**
 * struct kevent_waiter - a thread waiting on a queue
 * @q: the queue
 * @min_ready: how many ready events end the wait
 * @ring: the wait also needs room in the ring, or a commit
 * @direct: the ring is direct: the wait ends when the kernel has written
 *	past @old_uidx, the consumer's count of consumed slots
 * @old_uidx: the committed index the thread knows of, if @ring
 * @kick_seq: &kevent_queue.kick_seq when the wait began
 */
struct kevent_waiter {
	struct kevent_queue *q;
	unsigned int min_ready;
	bool ring;
	bool direct;
	unsigned int old_uidx;
	unsigned int kick_seq;
};

/*
 * The timeout, read as get_timespec64() reads it, in one window of user
 * access: get_timespec64() copies it with copy_from_user(), whose
 * out-of-line call and string copy of 16 bytes cost a call that finds
 * its events ready about 80 instructions, more than its wait.
 */
static int kevent_timeout_get(struct timespec64 *ts,
			      const struct __kernel_timespec __user *uts)
{
	s64 sec, nsec;

	if (!user_read_access_begin(uts, sizeof(*uts)))
		return -EFAULT;
	unsafe_get_user(sec, &uts->tv_sec, fault);
	unsafe_get_user(nsec, &uts->tv_nsec, fault);
	user_read_access_end();
	/* A 32-bit caller's tv_nsec is 32 bits, and padding. */
	if (in_compat_syscall())
		nsec &= 0xFFFFFFFFUL;
	ts->tv_sec = sec;
	ts->tv_nsec = nsec;
	return 0;
fault:
	user_read_access_end();
	return -EFAULT;
}

static int kevent_deadline_get(struct kevent_deadline *d, struct file *file,
			       const struct __kernel_timespec __user *timeout,
			       unsigned int flags)
{
	struct timespec64 ts;

	if (flags & ~KEVENT_FLAGS_ABSTIME)
		return -EINVAL;

	d->clock = CLOCK_MONOTONIC;
	d->forever = !timeout;
	d->passed = file->f_flags & O_NONBLOCK;
	d->relative = false;
	d->pending = false;
	if (!timeout)
		return 0;

	if (kevent_timeout_get(&ts, timeout))
		return -EFAULT;
	if (!timespec64_valid(&ts))
		return -EINVAL;

	if (flags & KEVENT_FLAGS_ABSTIME) {
		d->clock = CLOCK_REALTIME;
		d->expires = timespec64_to_ktime(ts);
	} else if (!ts.tv_sec && !ts.tv_nsec) {
		d->passed = true;
	} else {
		d->expires = timespec64_to_ktime(ts);
		d->relative = true;
		d->pending = true;
	}
	return 0;
}

/* Make a relative deadline absolute, from @now, if not done yet. */
static void kevent_deadline_start(struct kevent_deadline *d, ktime_t now)
{
	if (d->pending) {
		d->expires = ktime_add_safe(now, d->expires);
		d->pending = false;
	}
}

/* The deadline of a restarted call: the one it had when interrupted. */
static void kevent_deadline_restart(struct kevent_deadline *d,
				    struct file *file, u64 expires)
{
	d->clock = CLOCK_MONOTONIC;
	d->expires = ns_to_ktime(expires);
	d->forever = false;
	d->passed = file->f_flags & O_NONBLOCK;
	d->relative = true;
	d->pending = false;
}

/*
 * An interrupted call whose timeout was relative is restarted through
 * the restart block, as poll() is, so that it keeps its deadline: a
 * stop, a ptrace stop or task work would otherwise give it its whole
 * timeout again at every restart.  A caught signal still makes it fail
 * with EINTR.
 */
static long kevent_restart_with(struct kevent_deadline *d, long ret,
				long (*fn)(struct restart_block *rb), int fd,
				struct ukevent __user *buf, unsigned int nr,
				unsigned int max_nr)
{
	struct restart_block *rb = &current->restart_block;

	if (ret != -ERESTARTNOHAND || !d->relative)
		return ret;
	kevent_deadline_start(d, ktime_get());
	rb->kevent.fd = fd;
	rb->kevent.buf = buf;
	rb->kevent.nr = nr;
	rb->kevent.max_nr = max_nr;
	rb->kevent.expires = ktime_to_ns(d->expires);
	/* Also records the caller's ABI, for a 32-bit restart. */
	return set_restart_fn(rb, fn);
}

static bool kevent_kicked(const struct kevent_waiter *w)
{
	return READ_ONCE(w->q->kick_seq) != w->kick_seq;
}

static bool kevent_waiter_done(const struct kevent_waiter *w)
{
	struct kevent_queue *q = w->q;

	if (kevent_kicked(w))
		return true;
	if (w->direct) {
		if ((u32)READ_ONCE(q->direct->ktail) != w->old_uidx)
			return true;
		return w->min_ready && READ_ONCE(q->ready_num) &&
		       kevent_direct_used(q) < q->ring_size;
	}
	if (w->ring) {
		if (READ_ONCE(q->uidx) != w->old_uidx)
			return true;
		if (READ_ONCE(q->used) == q->ring_size)
			return false;
	}
	return READ_ONCE(q->ready_num) >= w->min_ready;
}

/*
 * The entry of a sleeping waiter in &kevent_queue.wq, on the stack of
 * kevent_sleep(): most calls never sleep, and do not set one up.
 */
struct kevent_sleeper {
	struct wait_queue_entry wq;
	const struct kevent_waiter *w;
};

static int kevent_waiter_wake(struct wait_queue_entry *wq, unsigned int mode,
			      int sync, void *key)
{
	struct kevent_sleeper *s = container_of(wq, struct kevent_sleeper, wq);

	/* Not counted as woken: an exclusive wakeup goes on to the next. */
	if (!kevent_waiter_done(s->w))
		return 0;
	return autoremove_wake_function(wq, mode, sync, key);
}

static void kevent_waiter_init(struct kevent_waiter *w, struct kevent_queue *q)
{
	w->q = q;
	w->min_ready = 0;
	w->ring = false;
	w->direct = false;
	w->old_uidx = 0;
	w->kick_seq = READ_ONCE(q->kick_seq);
}

/* Has the deadline passed?  Checked by every loop, not only by sleeps. */
static bool kevent_deadline_passed(struct kevent_deadline *d)
{
	ktime_t now;

	if (d->passed || d->forever)
		return d->passed;
	now = d->clock == CLOCK_REALTIME ? ktime_get_real() : ktime_get();
	kevent_deadline_start(d, now);
	d->passed = ktime_compare(now, d->expires) >= 0;
	return d->passed;
}

/*
 * Sleep until @w is done or @d passes.  Return 0, or -ERESTARTNOHAND if
 * a signal is pending: it ends the wait whatever else there is.  A
 * caught signal turns that into EINTR, whatever SA_RESTART says; a
 * signal without a handler, or task work (TIF_NOTIFY_SIGNAL, which
 * io_uring uses) restarts the call instead of failing it for nothing.
 */
static int kevent_sleep(struct kevent_waiter *w, struct kevent_deadline *d)
{
	struct kevent_sleeper s = { .w = w };
	struct kevent_queue *q = w->q;
	int ret = 0;

	init_wait_entry(&s.wq, 0);
	s.wq.func = kevent_waiter_wake;
	for (;;) {
		/* Under the ready lock, for kevent_wake(), see there. */
		spin_lock_irq(&q->ready_lock);
		prepare_to_wait_exclusive(&q->wq, &s.wq, TASK_INTERRUPTIBLE);
		spin_unlock_irq(&q->ready_lock);
		if (signal_pending(current)) {
			ret = -ERESTARTNOHAND;
			break;
		}
		if (kevent_waiter_done(w) || kevent_deadline_passed(d))
			break;
		if (d->forever)
			schedule();
		else if (!schedule_hrtimeout_range_clock(&d->expires,
							 current->timer_slack_ns,
							 HRTIMER_MODE_ABS,
							 d->clock))
			d->passed = true;
	}
	finish_wait(&q->wq, &s.wq);
	return ret;
}

/*
 * Take events into @sink once @sink->min are ready, or @d passed, or
 * the queue was kicked, or a commit came (for a ring), sleeping until
 * then: nothing is taken, and consumed, while the wait goes on, so that
 * other threads may have what this one cannot use yet.  The ready count
 * includes kevents queued only to be rechecked, so a call that needs
 * more than one first rechecks them in place and takes none until
 * enough are confirmed.  Return 0, or a negative errno that ends the
 * call if @sink took nothing.
 */
static int kevent_harvest_wait(struct kevent_queue *q, struct kevent_sink *sink,
			       struct kevent_waiter *w,
			       struct kevent_deadline *d)
{
	unsigned int min = sink->min, need, queued;
	bool last, ready;
	int ret;

	for (;;) {
		need = min - sink->done;
		queued = READ_ONCE(q->ready_num);
		ready = queued >= need;
		/* The deadline needs the clock: not read while events wait. */
		last = kevent_kicked(w) ||
		       (w->ring && READ_ONCE(q->uidx) != w->old_uidx) ||
		       (ready ? d->passed : kevent_deadline_passed(d));
		/*
		 * A harvest of an empty list takes nothing: a poll that
		 * finds nothing, the busy loop's common case, returns
		 * without the mutex, as epoll_wait() does.
		 */
		if (!queued && (last || ready))
			return 0;
		if (last || ready) {
			if (mutex_lock_killable(&q->mutex))
				return -EINTR;
			if (last || need <= 1 ||
			    kevent_count_ready(q, need, false) >= need) {
				if (sink->to_ring)
					sink->max = sink->done +
						    min(sink->want - sink->done,
							q->ring_size - q->used);
				kevent_harvest(q, sink);
			}
			mutex_unlock(&q->mutex);
			if (sink->fault)
				return -EFAULT;
			if (last || sink->done >= min)
				return 0;
		}
		w->min_ready = min - sink->done;
		ret = kevent_sleep(w, d);
		if (ret)
			return ret;
	}
}

/*
 * kevent_wait() on a direct ring: give back the slots consumed, write
 * what waits on the ready list into the ring, up to what the call asks
 * for, and return once the kernel has written past the slots the caller
 * consumed, or sleep until then.  Return 0, or a negative errno that
 * ends the call if @sink took nothing.
 */
static int kevent_direct_wait(struct kevent_queue *q, struct kevent_sink *sink,
			      struct kevent_waiter *w,
			      struct kevent_deadline *d)
{
	int ret;

	for (;;) {
		if (mutex_lock_killable(&q->mutex))
			return -EINTR;
		kevent_direct_reap(q);
		if (sink->want && READ_ONCE(q->ready_num)) {
			sink->max = sink->done +
				    min(sink->want - sink->done,
					q->ring_size - kevent_direct_used(q));
			kevent_harvest(q, sink);
		}
		mutex_unlock(&q->mutex);
		if (sink->fault)
			return -EFAULT;
		if (sink->done || kevent_waiter_done(w) ||
		    kevent_deadline_passed(d))
			return 0;
		ret = kevent_sleep(w, d);
		if (ret)
			return ret;
	}
}

static long kevent_get_events_restart(struct restart_block *rb);
static long kevent_wait_restart(struct restart_block *rb);

/* The deadline of a new call (@expires NULL) or of a restarted one. */
static int kevent_deadline_of(struct kevent_deadline *d, struct file *file,
			      const struct __kernel_timespec __user *timeout,
			      unsigned int flags, const u64 *expires)
{
	if (!expires)
		return kevent_deadline_get(d, file, timeout, flags);
	kevent_deadline_restart(d, file, *expires);
	return 0;
}

/**
 * kevent_get_events - harvest events into a buffer, waiting for min_nr
 * @fd: the queue's descriptor
 * @min_nr: wait until this many are ready
 * @max_nr: the most events to copy, the length of @buf
 * @timeout: the relative timeout, absolute with KEVENT_FLAGS_ABSTIME, or
 *	NULL to wait without one
 * @buf: where to copy them, in userspace
 * @flags: 0 or KEVENT_FLAGS_ABSTIME
 * @expires: the deadline of a restarted call, or NULL for a new call
 *
 * Return: the number of events copied, or an errno as
 * kevent_get_events(2) says.
 */
long kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr,
		       const struct __kernel_timespec __user *timeout,
		       struct ukevent __user *buf, unsigned int flags,
		       const u64 *expires)
{
	struct kevent_sink sink = {
		.buf = buf, .want = max_nr, .max = max_nr, .min = min_nr,
		.held = LIST_HEAD_INIT(sink.held),
	};
	struct kevent_deadline d;
	struct kevent_waiter w;
	struct kevent_queue *q;
	struct fd f;
	long ret;

	q = kevent_fdget(fd, &f);
	if (IS_ERR(q))
		return PTR_ERR(q);
	ret = -EINVAL;
	if (!max_nr || min_nr > max_nr || q->direct)
		goto out;
	ret = -EFAULT;
	if (!access_ok(buf, array_size(max_nr, sizeof(*buf))))
		goto out;
	ret = -EPERM;
	if (!kevent_ring_owned(q))
		goto out;
	ret = kevent_deadline_of(&d, f.file, timeout, flags, expires);
	if (ret)
		goto out;

	kevent_waiter_init(&w, q);
	ret = kevent_harvest_wait(q, &sink, &w, &d);
	kevent_sink_finish(q, &sink);
	if (sink.done)
		ret = sink.done;
	else
		ret = kevent_restart_with(&d, ret, kevent_get_events_restart,
					  fd, buf, min_nr, max_nr);
out:
	fdput(f);
	return ret;
}

static long kevent_get_events_restart(struct restart_block *rb)
{
	u64 expires = rb->kevent.expires;

	return kevent_get_events(rb->kevent.fd, rb->kevent.nr,
				 rb->kevent.max_nr, NULL, rb->kevent.buf, 0,
				 &expires);
}

/**
 * kevent_wait - harvest events into the ring, or wait for a change
 * @fd: the queue's descriptor
 * @num: the most events to write, 0 to wait only
 * @old_uidx: the committed index the caller knows of, or on a direct
 *	ring the low 32 bits of its count of consumed slots
 * @timeout: the relative timeout, absolute with KEVENT_FLAGS_ABSTIME, or
 *	NULL to wait without one
 * @flags: 0 or KEVENT_FLAGS_ABSTIME
 * @expires: the deadline of a restarted call, or NULL for a new call
 *
 * Return: the number of events written, 0, or an errno as kevent_wait(2)
 * says.
 */
long kevent_wait(int fd, unsigned int num, unsigned int old_uidx,
		 const struct __kernel_timespec __user *timeout,
		 unsigned int flags, const u64 *expires)
{
	struct kevent_sink sink = {
		.to_ring = true, .want = num, .min = 1,
		.held = LIST_HEAD_INIT(sink.held),
	};
	struct kevent_deadline d;
	struct kevent_waiter w;
	struct kevent_queue *q;
	struct fd f;
	long ret;

	q = kevent_fdget(fd, &f);
	if (IS_ERR(q))
		return PTR_ERR(q);
	ret = -EINVAL;
	if (!q->ring || num > q->ring_size)
		goto out;
	ret = -EPERM;
	if (!kevent_ring_owned(q))
		goto out;
	ret = kevent_deadline_of(&d, f.file, timeout, flags, expires);
	if (ret)
		goto out;

	kevent_waiter_init(&w, q);
	w.ring = true;
	w.old_uidx = old_uidx;
	w.min_ready = 1;
	if (q->direct) {
		w.direct = true;
		w.min_ready = !!num;
		ret = kevent_direct_wait(q, &sink, &w, &d);
	} else if (num) {
		/* Up to num events, as soon as there is one. */
		ret = kevent_harvest_wait(q, &sink, &w, &d);
	} else {
		/* Only wait: for a ready event, room, a commit or a kick. */
		while (!kevent_waiter_done(&w) && !kevent_deadline_passed(&d) &&
		       READ_ONCE(q->uidx) == old_uidx) {
			ret = kevent_sleep(&w, &d);
			if (ret)
				break;
		}
	}
	kevent_sink_finish(q, &sink);
	if (sink.done)
		ret = sink.done;
	else
		ret = kevent_restart_with(&d, ret, kevent_wait_restart, fd,
					  NULL, old_uidx, num);
out:
	fdput(f);
	return ret;
}

static long kevent_wait_restart(struct restart_block *rb)
{
	u64 expires = rb->kevent.expires;

	return kevent_wait(rb->kevent.fd, rb->kevent.max_nr, rb->kevent.nr,
			   NULL, 0, &expires);
}
