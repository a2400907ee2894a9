// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_TIMER, timers on CLOCK_MONOTONIC.
 *
 * id.raw[0] holds seconds and id.raw[1] nanoseconds of the period.  The
 * timer is periodic unless the kevent is KEVENT_REQ_ONESHOT.  Each report
 * carries the time of the latest expiry, in milliseconds, in ret_data[0],
 * and the number of expiries since the previous report in ret_data[1].
 */

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "kevent.h"
#include "sources.h"

/* Shorter periods are raised to this, to bound the interrupt load. */
#define KEVENT_TIMER_MIN_PERIOD_NS	(100 * NSEC_PER_USEC)

/**
 * struct kevent_timer - the per-kevent data of a timer
 * @timer: the hrtimer
 * @k: the kevent it reports to
 * @period: the period
 * @expired: expiries not yet reported
 * @last_ms: CLOCK_MONOTONIC in milliseconds at the latest expiry
 */
struct kevent_timer {
	struct hrtimer timer;
	struct kevent *k;
	ktime_t period;
	atomic_t expired;
	u32 last_ms;
};

static enum hrtimer_restart kevent_timer_fire(struct hrtimer *timer)
{
	struct kevent_timer *t = container_of(timer, struct kevent_timer,
					      timer);
	bool oneshot = READ_ONCE(t->k->uk.req_flags) & KEVENT_REQ_ONESHOT;
	u64 expiries = 1;

	if (!oneshot)
		expiries = hrtimer_forward_now(timer, t->period);
	WRITE_ONCE(t->last_ms, (u32)ktime_to_ms(ktime_get()));
	atomic_add(expiries, &t->expired);
	kevent_ready(t->k, 1);

	return oneshot ? HRTIMER_NORESTART : HRTIMER_RESTART;
}

static int kevent_timer_enqueue(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);
	const struct ukevent *uk = &k->uk;

	if (uk->id.raw[1] >= NSEC_PER_SEC ||
	    !(uk->event & KEVENT_TIMER_FIRED))
		return -EINVAL;

	t->period = ktime_set(uk->id.raw[0], uk->id.raw[1]);
	if (!(uk->req_flags & KEVENT_REQ_ONESHOT)) {
		if (!t->period)
			return -EINVAL;
		t->period = max_t(ktime_t, t->period,
				  KEVENT_TIMER_MIN_PERIOD_NS);
	}
	t->k = k;
	hrtimer_init(&t->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	t->timer.function = kevent_timer_fire;
	hrtimer_start(&t->timer, t->period, HRTIMER_MODE_REL);
	return 0;
}

static void kevent_timer_dequeue(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);

	hrtimer_cancel(&t->timer);
}

static int kevent_timer_check(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);

	return atomic_read(&t->expired) > 0;
}

static void kevent_timer_fill(struct kevent *k, struct ukevent *out)
{
	struct kevent_timer *t = kevent_priv(k);

	out->ret_data[0] = READ_ONCE(t->last_ms);
	out->ret_data[1] = atomic_read(&t->expired);
}

static void kevent_timer_delivered(struct kevent *k,
				   const struct ukevent *out)
{
	struct kevent_timer *t = kevent_priv(k);

	atomic_sub(out->ret_data[1], &t->expired);
}

const struct kevent_callbacks kevent_timer_callbacks = {
	.enqueue	= kevent_timer_enqueue,
	.dequeue	= kevent_timer_dequeue,
	.check		= kevent_timer_check,
	.fill		= kevent_timer_fill,
	.delivered	= kevent_timer_delivered,
	.priv_size	= sizeof(struct kevent_timer),
};
