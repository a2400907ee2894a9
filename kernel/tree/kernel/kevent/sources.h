/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: the callbacks of each event source, for the table in sources.c.
 */
#ifndef _KERNEL_KEVENT_SOURCES_H
#define _KERNEL_KEVENT_SOURCES_H

#include <linux/kevent.h>

extern const struct kevent_callbacks kevent_socket_callbacks;
extern const struct kevent_callbacks kevent_timer_callbacks;
extern const struct kevent_callbacks kevent_poll_callbacks;
extern const struct kevent_callbacks kevent_pipe_callbacks;
extern const struct kevent_callbacks kevent_signal_callbacks;
extern const struct kevent_callbacks kevent_posix_timer_callbacks;

#endif /* _KERNEL_KEVENT_SOURCES_H */
