/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: the hooks of KEVENT_POSIX_TIMER in the POSIX timer code.
 */
#ifndef _LINUX_KEVENT_POSIX_TIMER_H
#define _LINUX_KEVENT_POSIX_TIMER_H

#include <linux/compiler.h>
#include <linux/posix-timers.h>
#include <uapi/linux/kevent.h>

#ifdef CONFIG_KEVENT
int kevent_posix_timer_create(struct k_itimer *timr, int fd,
			      void __user *ptr);
void __kevent_posix_timer_fire(struct k_itimer *timr);
void __kevent_posix_timer_release(struct k_itimer *timr);

/**
 * kevent_posix_timer_fire - a timer expired
 * @timr: the timer, its it_lock held
 *
 * Return: true if @timr is a SIGEV_KEVENT timer, whose expiry is then
 * reported to its queue; false if it is to send its signal.
 */
static inline bool kevent_posix_timer_fire(struct k_itimer *timr)
{
	if (likely(timr->it_sigev_notify != SIGEV_KEVENT))
		return false;
	__kevent_posix_timer_fire(timr);
	return true;
}

/**
 * kevent_posix_timer_release - a timer is deleted
 * @timr: the timer, no longer armed
 *
 * Its registration, if any, is reported broken once and detached.
 */
static inline void kevent_posix_timer_release(struct k_itimer *timr)
{
	if (unlikely(timr->it_kevent))
		__kevent_posix_timer_release(timr);
}
#else
static inline int kevent_posix_timer_create(struct k_itimer *timr, int fd,
					    void __user *ptr)
{
	return -EINVAL;
}

static inline bool kevent_posix_timer_fire(struct k_itimer *timr)
{
	return false;
}

static inline void kevent_posix_timer_release(struct k_itimer *timr) { }
#endif

#endif /* _LINUX_KEVENT_POSIX_TIMER_H */
