// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the limits on registrations, per user and per object.
 *
 * fs.kevent.max_user_kevents bounds memory, as epoll's max_user_watches:
 * each registration counts against the user who created its queue, and
 * the default lets a user fill 4% of low memory with registrations.
 * Memory is charged to the caller's memory cgroup as well.
 *
 * fs.kevent.max_object_kevents bounds time: an object's notification
 * walks its registrations with interrupts disabled, in the context of
 * whoever changed the object (another user's write(), kill() or timer
 * interrupt).  epoll needs a descriptor per watch to make such a walk
 * long; a kevent key includes the caller's ptr, so one kevent_ctl() call
 * could hang a user's whole quota on one object.  1024 registrations
 * are a walk of tens of microseconds, and more than any program that
 * shares an object between threads or processes asks for.
 */

#include <linux/init.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sysctl.h>

#include "kevent.h"

/* What a registration costs at least: the kevent and its source's data. */
#define KEVENT_COST	(sizeof(struct kevent) + 4 * sizeof(long))

long kevent_max_user_kevents __read_mostly;
unsigned int kevent_max_object_kevents __read_mostly = 1024;

#ifdef CONFIG_SYSCTL
static long long_zero;
static long long_max = LONG_MAX;

static struct ctl_table kevent_table[] = {
	{
		.procname	= "max_user_kevents",
		.data		= &kevent_max_user_kevents,
		.maxlen		= sizeof(kevent_max_user_kevents),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &long_zero,
		.extra2		= &long_max,
	},
	{
		.procname	= "max_object_kevents",
		.data		= &kevent_max_object_kevents,
		.maxlen		= sizeof(kevent_max_object_kevents),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= SYSCTL_INT_MAX,
	},
	{ }
};
#endif

static int __init kevent_limit_init(void)
{
	struct sysinfo si;

	si_meminfo(&si);
	kevent_max_user_kevents =
		(((si.totalram - si.totalhigh) / 25) << PAGE_SHIFT) /
		KEVENT_COST;
#ifdef CONFIG_SYSCTL
	register_sysctl("fs/kevent", kevent_table);
#endif
	return 0;
}
fs_initcall(kevent_limit_init);
