// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the table of event sources, one entry per type.
 *
 * A source is built whenever the subsystem it watches is, so that an
 * application can rely on every type its kernel can have.  A type
 * without a source is refused with ENOSYS.
 */

#include <linux/nospec.h>

#include "kevent.h"
#include "sources.h"

static const struct kevent_callbacks *const kevent_sources[KEVENT_MAX] = {
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

/**
 * kevent_callbacks_of - the event source of a type
 * @type: ukevent.type, from userspace
 *
 * Return: the source's callbacks, or NULL if @type has none.
 */
const struct kevent_callbacks *kevent_callbacks_of(u32 type)
{
	if (type >= KEVENT_MAX)
		return NULL;
	return kevent_sources[array_index_nospec(type, KEVENT_MAX)];
}
