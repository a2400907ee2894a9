// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_TIMER, timers on CLOCK_MONOTONIC.
 *
 * id.raw[0] holds seconds and id.raw[1] nanoseconds of the period.  The
 * timer is periodic unless the kevent is KEVENT_REQ_ONESHOT.  Each report
 * carries the time of the latest expiry, in milliseconds, in ret_data[0],
 * and the number of expiries since the previous report in ret_data[1].
 *
 * An expired timer is not restarted until its event is delivered: the
 * expiries it missed meanwhile are counted from the clock then, and the
 * timer is set again one period after the last of them.  A timer that
 * nobody harvests therefore costs one interrupt, not one per period.
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "kevent.h"
#include "sources.h"

/* Shorter periods are raised to this, to bound the interrupt load. */
#define KEVENT_TIMER_MIN_PERIOD_NS	(100 * NSEC_PER_USEC)

/**
 * struct kevent_timer - the per-kevent data of a timer
 * @timer: the hrtimer; its expiry is that of the first expiry not yet
 *	reported
 * @k: the kevent it reports to
 * @period: the period
 * @expired: the hrtimer expired and waits for the report
 * @last_ms: CLOCK_MONOTONIC in milliseconds at the latest expiry reported
 */
struct kevent_timer {
	struct hrtimer timer;
	struct kevent *k;
	ktime_t period;
	bool expired;
	u32 last_ms;
};

static bool kevent_timer_oneshot(const struct kevent *k)
{
	return READ_ONCE(k->uk.req_flags) & KEVENT_REQ_ONESHOT;
}

static enum hrtimer_restart kevent_timer_fire(struct hrtimer *timer)
{
	struct kevent_timer *t = container_of(timer, struct kevent_timer,
					      timer);

	WRITE_ONCE(t->expired, true);
	kevent_ready(t->k, 1);
	return HRTIMER_NORESTART;
}

static int kevent_timer_validate(const struct ukevent *uk)
{
	if (uk->id.raw[1] >= NSEC_PER_SEC || !(uk->event & KEVENT_TIMER_FIRED))
		return -EINVAL;
	if (!(uk->req_flags & KEVENT_REQ_ONESHOT) && !uk->id.raw_u64)
		return -EINVAL;
	return 0;
}

/* Arm the timer one period from now, forgetting any pending expiry. */
static void kevent_timer_arm(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);

	t->period = ktime_set(k->uk.id.raw[0], k->uk.id.raw[1]);
	if (!kevent_timer_oneshot(k))
		t->period = max_t(ktime_t, t->period,
				  KEVENT_TIMER_MIN_PERIOD_NS);
	WRITE_ONCE(t->expired, false);
	hrtimer_start(&t->timer, t->period, HRTIMER_MODE_REL);
}

static int kevent_timer_enqueue(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);

	t->k = k;
	t->last_ms = 0;
	hrtimer_init(&t->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	t->timer.function = kevent_timer_fire;
	kevent_timer_arm(k);
	return 0;
}

static void kevent_timer_dequeue(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);

	hrtimer_cancel(&t->timer);
}

static void kevent_timer_modified(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);

	hrtimer_cancel(&t->timer);
	kevent_timer_arm(k);
}

static int kevent_timer_check(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);

	return READ_ONCE(t->expired);
}

/* Expiries from the hrtimer's expiry until now, at least one. */
static u64 kevent_timer_expiries(struct kevent *k)
{
	struct kevent_timer *t = kevent_priv(k);
	ktime_t late;

	if (kevent_timer_oneshot(k))
		return 1;
	late = ktime_sub(ktime_get(), hrtimer_get_expires(&t->timer));
	if (late < 0)
		return 1;
	return min_t(u64, 1 + ktime_divns(late, t->period), INT_MAX);
}

static void kevent_timer_fill(struct kevent *k, struct ukevent *out)
{
	struct kevent_timer *t = kevent_priv(k);
	ktime_t last;
	u64 n;

	out->ret_data[0] = t->last_ms;
	out->ret_data[1] = 0;
	if (!READ_ONCE(t->expired))
		return;
	n = kevent_timer_expiries(k);
	last = ktime_add(hrtimer_get_expires(&t->timer),
			 t->period * (n - 1));
	out->ret_data[0] = (u32)ktime_to_ms(last);
	out->ret_data[1] = n;
}

/* Set the timer for the first expiry after those just reported. */
static void kevent_timer_delivered(struct kevent *k,
				   const struct ukevent *out)
{
	struct kevent_timer *t = kevent_priv(k);
	u64 n = out->ret_data[1];

	if (!n)
		return;
	t->last_ms = out->ret_data[0];
	if (kevent_timer_oneshot(k))
		return;
	WRITE_ONCE(t->expired, false);
	hrtimer_add_expires(&t->timer, t->period * n);
	hrtimer_start_expires(&t->timer, HRTIMER_MODE_ABS);
}

const struct kevent_callbacks kevent_timer_callbacks = {
	.validate	= kevent_timer_validate,
	.enqueue	= kevent_timer_enqueue,
	.dequeue	= kevent_timer_dequeue,
	.check		= kevent_timer_check,
	.modified	= kevent_timer_modified,
	.fill		= kevent_timer_fill,
	.delivered	= kevent_timer_delivered,
	.priv_size	= sizeof(struct kevent_timer),
	.name		= "kevent_timer",
};
