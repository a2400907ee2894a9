// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_SOCKET, readiness of TCP, UDP and UNIX domain sockets.
 *
 * id.raw[0] holds the socket's descriptor, which is looked up at ADD only:
 * a kevent keeps no reference to the socket.  The kevents of a socket hang
 * off a storage that the socket's wait queue (struct socket_wq, inside
 * struct socket) points to, allocated at the first ADD.  The socket
 * layer's wakeup callbacks notify it through kevent_socket_notify(), and
 * __sock_release() reports its kevents broken and detaches them, before
 * the protocol's ->release() lets go of sock->sk.
 *
 * Lifetimes: while a kevent is attached, under the storage lock, its
 * socket has not been released, so the socket's file can be referenced.
 * struct socket lives in the socket's inode, which is freed an RCU grace
 * period after the release, and the storage is released RCU-delayed: the
 * callbacks, which read sk->sk_wq under RCU, and kevent_storage_detach()
 * can still take the lock of a storage whose socket is being released.
 *
 * Readiness is decided when the socket notifies, under the storage lock,
 * from the socket's state read without its locks, as each protocol's
 * poll reads it: the callbacks run after the change they announce.
 * Data, a connection or room to send only add to what was ready, and
 * leave a kevent already queued as it is; an error or a change of state
 * decides again.
 * Sending on an AF_UNIX socket is decided by the protocol's poll, which
 * for a stream socket reads the state alone.  A datagram socket can
 * send only while its peer's queue has room, which its poll reads
 * under locks the notifier may hold, asking the peer to relay the
 * wakeup when room comes (unix_dgram_peer_wake_relay(), which tells
 * kevent too): the kevents of an AF_UNIX datagram socket are queued at
 * every notification and decided when they are reported, in process
 * context, holding a reference to the socket's file, as epoll rechecks
 * with ->poll().
 */

#include <linux/file.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/udp.h>
#include <linux/kevent_socket.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>

#include "kevent.h"
#include "sources.h"

#define KEVENT_SOCKET_EVENTS \
	(KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT | KEVENT_SOCKET_SEND)

/**
 * struct kevent_socket - the per-kevent data of KEVENT_SOCKET
 * @sock: the watched socket, not referenced; valid while the kevent is
 *	attached to its storage
 */
struct kevent_socket {
	struct socket *sock;
};

static bool kevent_socket_supported(const struct sock *sk)
{
	if (sk->sk_family == AF_UNIX)
		return sk->sk_type == SOCK_STREAM || sk->sk_type == SOCK_DGRAM;
	return sk_is_tcp(sk) || sk_is_udp(sk);
}

/* Is there data, or for UDP a datagram, waiting to be read? */
static bool kevent_socket_has_data(struct sock *sk)
{
	if (!skb_queue_empty_lockless(&sk->sk_receive_queue))
		return true;
	/* UDP moves datagrams to a second queue in batches as it reads. */
	return sk_is_udp(sk) &&
	       !skb_queue_empty_lockless(&udp_sk(sk)->reader_queue);
}

/*
 * Is there enough to read to report RECV?  As tcp_poll(), TCP waits for
 * SO_RCVLOWAT bytes, unless its receive memory or window is short; the
 * other protocols' poll report any data.
 */
static bool kevent_socket_readable(struct sock *sk, bool data)
{
	if (!data || !sk_is_tcp(sk))
		return data;
	return tcp_epollin_ready(sk, sock_rcvlowat(sk, 0, INT_MAX));
}

/* Has a listening socket a connection to accept? */
static bool kevent_socket_can_accept(struct sock *sk)
{
	/* UNIX queues the connections not yet accepted as skbs. */
	if (sk->sk_family == AF_UNIX)
		return !skb_queue_empty_lockless(&sk->sk_receive_queue);
	return !reqsk_queue_empty(&inet_csk(sk)->icsk_accept_queue);
}

/* Would a send make progress, or fail at once?  As each family's poll. */
static bool kevent_socket_can_send(struct socket *sock, struct sock *sk,
				   int state)
{
	if (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN)
		return true;
	/* A datagram may wait for room at its peer, which only poll knows. */
	if (sk->sk_family == AF_UNIX)
		return sock->ops->poll(sock->file, sock, NULL) & EPOLLOUT;
	if (sk->sk_type == SOCK_DGRAM)
		return sock_writeable(sk);

	if (!((1 << state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)))
		return false;
	/*
	 * As tcp_poll() and sk_stream_write_space(): writable once less
	 * than half of TCP_NOTSENT_LOWAT is left unsent.
	 */
	if (__sk_stream_is_writeable(sk, 1))
		return true;
	/*
	 * TCP calls sk_write_space() only for a socket marked as out of
	 * space: mark it, as tcp_poll() does.
	 */
	set_bit(SOCK_NOSPACE, &sock->flags);
	/*
	 * Pairs with the smp_mb() of tcp_check_space(): test again, in
	 * case the space came before the mark was seen.
	 */
	smp_mb__after_atomic();
	return __sk_stream_is_writeable(sk, 1);
}

/*
 * Is @k ready?  Called in process context with the socket's file held,
 * or in any context under the storage lock, which keeps the socket from
 * being released; never at notification for an AF_UNIX datagram socket
 * (see above).  The ready bits go to ret_data[0].  A pending error
 * (left for the next socket call to report) makes @k broken with -error;
 * a socket shut down in both directions does so with -EPIPE, unless @k
 * asks for RECV and something is left to read (TCP keeps the skb of a
 * FIN queued until it is read).
 */
static int kevent_socket_state(struct kevent *k, struct socket *sock)
{
	u32 event = READ_ONCE(k->uk.event);
	struct sock *sk = sock->sk;
	int err, state, shutdown;
	u32 ready = 0;
	bool data;

	err = READ_ONCE(sk->sk_err);
	if (err)
		return -err;

	state = READ_ONCE(sk->sk_state);
	if (state == TCP_LISTEN) {
		/* RECV too: take26 reported both as readable. */
		if (kevent_socket_can_accept(sk))
			ready = event &
				(KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT);
	} else {
		data = kevent_socket_has_data(sk);
		shutdown = READ_ONCE(sk->sk_shutdown);
		if (shutdown == SHUTDOWN_MASK &&
		    !(data && (event & KEVENT_SOCKET_RECV)))
			return -EPIPE;
		if ((event & KEVENT_SOCKET_RECV) &&
		    (kevent_socket_readable(sk, data) ||
		     (shutdown & RCV_SHUTDOWN)))
			ready |= KEVENT_SOCKET_RECV;
		if ((event & KEVENT_SOCKET_SEND) &&
		    kevent_socket_can_send(sock, sk, state))
			ready |= KEVENT_SOCKET_SEND;
	}
	if (!ready)
		return 0;
	WRITE_ONCE(k->uk.ret_data[0], ready);
	return 1;
}

/**
 * __kevent_socket_notify - tell the kevents of a socket what may have changed
 * @st: the socket's storage
 * @event: the KEVENT_SOCKET_* bits whose readiness may have changed: all
 *	of them for a change of state or an error, which may take readiness
 *	away; for data, a connection or room to send, only those it adds to
 *
 * Called by kevent_socket_notify() from any context.
 */
void __kevent_socket_notify(struct kevent_storage *st, u32 event)
{
	if (!kevent_storage_asked(st, event))
		return;
	if (event == KEVENT_SOCKET_EVENTS)
		__kevent_storage_notify(st, event, NULL);
	else
		__kevent_storage_notify_more(st, event);
}
EXPORT_SYMBOL_GPL(__kevent_socket_notify);

/**
 * __kevent_socket_release - report and detach the kevents of a socket
 * @sock: the socket, being released
 *
 * Called by kevent_socket_release() for a socket that kevents ever watched.
 */
void __kevent_socket_release(struct socket *sock)
{
	kevent_storage_release(sock->wq.kevent, -EBADF);
	WRITE_ONCE(sock->wq.kevent, NULL);
}

static int kevent_socket_validate(const struct ukevent *uk)
{
	if (!uk->event || (uk->event & ~KEVENT_SOCKET_EVENTS))
		return -EINVAL;
	return 0;
}

static int kevent_socket_enqueue(struct kevent *k)
{
	struct kevent_socket *p = kevent_priv(k);
	struct kevent_storage *st;
	struct socket *sock;
	int err;

	sock = sockfd_lookup(k->uk.id.raw[0], &err);
	if (!sock)
		return err;
	err = -EOPNOTSUPP;
	if (!kevent_socket_supported(sock->sk))
		goto out;
	err = -ENOMEM;
	st = kevent_storage_get(&sock->wq.kevent);
	if (!st)
		goto out;

	p->sock = sock;
	k->confirm = sock->sk->sk_family == AF_UNIX &&
		     sock->sk->sk_type == SOCK_DGRAM;
	err = kevent_storage_attach(st, k);
	if (err)
		goto out;
	/* One broken already is reported as the entry's error. */
	err = kevent_socket_state(k, sock);
	if (err < 0)
		kevent_storage_detach(k);
out:
	sockfd_put(sock);
	return err;
}

static int kevent_socket_event(struct kevent *k, void *hint)
{
	struct kevent_socket *p = kevent_priv(k);

	/* Decided when reported, see above. */
	if (k->confirm)
		return 1;
	return kevent_socket_state(k, p->sock);
}

/* Under the storage lock: the socket is not released yet. */
static int kevent_socket_hold(struct kevent *k)
{
	struct kevent_socket *p = kevent_priv(k);

	return get_file_rcu(p->sock->file) ? 1 : -EBADF;
}

static int kevent_socket_check(struct kevent *k)
{
	struct kevent_socket *p = kevent_priv(k);
	int ret;

	ret = kevent_storage_call(k, kevent_socket_hold);
	if (ret < 0)
		return ret;
	ret = kevent_socket_state(k, p->sock);
	fput(p->sock->file);
	return ret;
}

const struct kevent_callbacks kevent_socket_callbacks = {
	.validate	= kevent_socket_validate,
	.enqueue	= kevent_socket_enqueue,
	.dequeue	= kevent_storage_detach,
	.event		= kevent_socket_event,
	.check		= kevent_socket_check,
	.priv_size	= sizeof(struct kevent_socket),
	.name		= "kevent_socket",
};
