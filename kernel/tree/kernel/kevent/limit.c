// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the per-user limit on registrations, fs.kevent.max_user_kevents.
 *
 * As epoll's max_user_watches: each registration counts against the user
 * who created its queue, and the default lets a user fill 4% of low
 * memory with registrations.  Memory is charged to the caller's memory
 * cgroup as well; the limit also bounds what one user can make the
 * kernel walk when a watched object notifies.
 */

#include <linux/init.h>
#include <linux/mm.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/sysctl.h>

#include "kevent.h"

/* What a registration costs at least: the kevent and its source's data. */
#define KEVENT_COST	(sizeof(struct kevent) + 4 * sizeof(long))

static long max_user_kevents __read_mostly;

/**
 * kevent_charge - count one more registration of a user
 * @user: the user
 *
 * Return: 0, or -ENOSPC if @user has reached the limit.
 */
int kevent_charge(struct user_struct *user)
{
	if (atomic_long_inc_return(&user->kevent_registrations) >
	    READ_ONCE(max_user_kevents)) {
		atomic_long_dec(&user->kevent_registrations);
		return -ENOSPC;
	}
	return 0;
}

/**
 * kevent_uncharge - count one registration of a user less
 * @user: the user
 */
void kevent_uncharge(struct user_struct *user)
{
	atomic_long_dec(&user->kevent_registrations);
}

#ifdef CONFIG_SYSCTL
static long long_zero;
static long long_max = LONG_MAX;

static struct ctl_table kevent_table[] = {
	{
		.procname	= "max_user_kevents",
		.data		= &max_user_kevents,
		.maxlen		= sizeof(max_user_kevents),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &long_zero,
		.extra2		= &long_max,
	},
	{ }
};
#endif

static int __init kevent_limit_init(void)
{
	struct sysinfo si;

	si_meminfo(&si);
	max_user_kevents = (((si.totalram - si.totalhigh) / 25) << PAGE_SHIFT) /
			   KEVENT_COST;
#ifdef CONFIG_SYSCTL
	register_sysctl("fs/kevent", kevent_table);
#endif
	return 0;
}
fs_initcall(kevent_limit_init);
