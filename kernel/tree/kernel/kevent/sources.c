// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the table of event sources, one entry per type.
 *
 * A source is built whenever the subsystem it watches is, so that an
 * application can rely on every type its kernel can have.  A type
 * without a source is refused with ENOSYS.
 *
 * Each source's registrations come from a slab cache of their own, of
 * the exact size of a kevent and the source's data.
 */

#include <linux/init.h>
#include <linux/slab.h>

#include "kevent.h"
#include "sources.h"

const struct kevent_callbacks *const kevent_sources[KEVENT_MAX] = {
#ifdef CONFIG_NET
	[KEVENT_SOCKET]	= &kevent_socket_callbacks,
#endif
	[KEVENT_TIMER]	= &kevent_timer_callbacks,
	[KEVENT_POLL]	= &kevent_poll_callbacks,
	[KEVENT_PIPE]	= &kevent_pipe_callbacks,
	[KEVENT_SIGNAL]	= &kevent_signal_callbacks,
#ifdef CONFIG_POSIX_TIMERS
	[KEVENT_POSIX_TIMER] = &kevent_posix_timer_callbacks,
#endif
};

struct kmem_cache *kevent_caches[KEVENT_MAX] __ro_after_init;

static int __init kevent_caches_init(void)
{
	unsigned int type;

	for (type = 0; type < KEVENT_MAX; type++) {
		const struct kevent_callbacks *cb = kevent_sources[type];

		if (!cb)
			continue;
		/* Registrations are charged to the memory cgroup. */
		kevent_caches[type] =
			kmem_cache_create(cb->name,
					  struct_size_t(struct kevent, priv,
							DIV_ROUND_UP(cb->priv_size,
								     sizeof(long))),
					  0, SLAB_PANIC | SLAB_ACCOUNT, NULL);
	}
	return 0;
}
fs_initcall(kevent_caches_init);
