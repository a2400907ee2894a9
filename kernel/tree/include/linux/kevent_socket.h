/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: the hooks of KEVENT_SOCKET in the socket layer.
 */
#ifndef _LINUX_KEVENT_SOCKET_H
#define _LINUX_KEVENT_SOCKET_H

#include <linux/compiler.h>
#include <linux/net.h>
#include <linux/types.h>
#include <uapi/linux/kevent.h>

#ifdef CONFIG_KEVENT
void __kevent_socket_notify(struct kevent_storage *st, u32 event);
void __kevent_socket_release(struct socket *sock);

/**
 * kevent_socket_notify - the state of a socket may have changed
 * @wq: the socket's wait queue, read from sk->sk_wq under RCU; may be NULL
 * @event: the KEVENT_SOCKET_* bits whose readiness may have changed
 *
 * Called from the socket's wakeup callbacks after skwq_has_sleeper() (or
 * another full barrier), which orders the change of state before the
 * load of @wq->kevent, as kevent_storage_get() orders the store of
 * @wq->kevent before its first readiness check.  For a socket that no
 * kevent ever watched, the cost is one load and a branch.
 */
static __always_inline void kevent_socket_notify(struct socket_wq *wq,
						 u32 event)
{
	struct kevent_storage *st;

	if (!wq)
		return;
	st = READ_ONCE(wq->kevent);
	if (unlikely(st))
		__kevent_socket_notify(st, event);
}

/**
 * kevent_socket_release - a socket is being released
 * @sock: the socket, from __sock_release(), before its protocol lets go
 *	of @sock->sk
 *
 * Each kevent watching @sock is reported broken, once, and detached.
 */
static __always_inline void kevent_socket_release(struct socket *sock)
{
	if (unlikely(sock->wq.kevent))
		__kevent_socket_release(sock);
}
#else
static inline void kevent_socket_notify(struct socket_wq *wq, u32 event) { }
static inline void kevent_socket_release(struct socket *sock) { }
#endif

#endif /* _LINUX_KEVENT_SOCKET_H */
