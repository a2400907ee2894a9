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
 * Lifetimes: a kevent attached to the storage may read sock->sk under the
 * storage lock, because the release detaches every kevent under that lock
 * before sock->sk can go.  struct socket lives in the socket's inode,
 * which is freed an RCU grace period after the release, and the storage
 * is freed with kfree_rcu(): the callbacks, which read sk->sk_wq under
 * RCU, and kevent_storage_detach() can still take the lock of a storage
 * whose socket is being released.
 *
 * Readiness is read from the socket's state without sleeping or taking a
 * lock, since it is decided in the callbacks, from softirq too, under the
 * storage lock with interrupts off.  The notification path hands
 * kevent_socket_state() to kevent_storage_ready(), which calls it under
 * that lock; ->check, which the core calls without it, takes the lock to
 * keep sock->sk alive.
 */

#include <linux/net.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <linux/kevent_socket.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "kevent.h"
#include "sources.h"

#define KEVENT_SOCKET_EVENTS \
	(KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT | KEVENT_SOCKET_SEND)

/**
 * struct kevent_socket - the per-kevent data of KEVENT_SOCKET
 * @sock: the watched socket, not referenced; valid while the kevent is
 *	attached to its storage, and @sock->sk only under the storage lock
 */
struct kevent_socket {
	struct socket *sock;
};

/* socket_wq.kevent: a storage that lives an RCU grace period longer. */
struct kevent_socket_storage {
	struct kevent_storage st;
	struct rcu_head rcu;
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
	if (sk->sk_family == AF_UNIX) {
		if (sk->sk_type == SOCK_STREAM && state != TCP_ESTABLISHED)
			return false;
		return (refcount_read(&sk->sk_wmem_alloc) << 2) <=
		       READ_ONCE(sk->sk_sndbuf);
	}
	if (sk->sk_type == SOCK_DGRAM)
		return sock_writeable(sk);

	if (!((1 << state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)))
		return false;
	if (sk_stream_is_writeable(sk))
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
	return sk_stream_is_writeable(sk);
}

/*
 * Is @k ready?  Called under the storage lock, which keeps sock->sk
 * alive; nothing here sleeps or takes a lock.  The ready bits go to
 * ret_data[0].  A pending error (left for the next socket call to
 * report) makes @k broken with -error; a socket shut down in both
 * directions does so with -EPIPE, unless @k asks for RECV and something
 * is left to read (TCP keeps the skb of a FIN queued until it is read).
 */
static int kevent_socket_state(struct kevent *k)
{
	struct kevent_socket *p = kevent_priv(k);
	u32 event = READ_ONCE(k->uk.event);
	struct socket *sock = p->sock;
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
		    (data || (shutdown & RCV_SHUTDOWN)))
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
 * __kevent_socket_notify - report the readiness of a socket's kevents
 * @st: the socket's storage
 * @event: the KEVENT_SOCKET_* bits whose readiness may have changed
 *
 * Called by kevent_socket_notify() from any context.
 */
void __kevent_socket_notify(struct kevent_storage *st, u32 event)
{
	kevent_storage_ready(st, event, kevent_socket_state);
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
	struct kevent_socket_storage *sst;

	sst = container_of(sock->wq.kevent, struct kevent_socket_storage, st);
	kevent_storage_fini(&sst->st);
	WRITE_ONCE(sock->wq.kevent, NULL);
	kfree_rcu(sst, rcu);
}

static struct kevent_storage *kevent_socket_storage(struct socket *sock)
{
	struct kevent_socket_storage *sst;
	struct kevent_storage *st;

	st = READ_ONCE(sock->wq.kevent);
	if (st)
		return st;

	sst = kmalloc(sizeof(*sst), GFP_KERNEL_ACCOUNT);
	if (!sst)
		return NULL;
	kevent_storage_init(&sst->st);
	/*
	 * The full barrier of cmpxchg() orders the store before the first
	 * readiness check; see kevent_socket_notify().
	 */
	st = cmpxchg(&sock->wq.kevent, NULL, &sst->st);
	if (st) {
		kfree(sst);
		return st;
	}
	return &sst->st;
}

static int kevent_socket_enqueue(struct kevent *k)
{
	struct kevent_socket *p = kevent_priv(k);
	struct kevent_storage *st;
	struct socket *sock;
	int err;

	if (!k->uk.event || (k->uk.event & ~KEVENT_SOCKET_EVENTS))
		return -EINVAL;
	sock = sockfd_lookup(k->uk.id.raw[0], &err);
	if (!sock)
		return err;
	err = -EOPNOTSUPP;
	if (!kevent_socket_supported(sock->sk))
		goto out;
	err = -ENOMEM;
	st = kevent_socket_storage(sock);
	if (!st)
		goto out;

	p->sock = sock;
	kevent_storage_attach(st, k);
	/*
	 * The socket is held here, so its state may be read unlocked; one
	 * broken already is reported as the entry's error.
	 */
	err = kevent_socket_state(k);
	if (err < 0)
		kevent_storage_detach(k);
out:
	sockfd_put(sock);
	return err;
}

/* The core calls this without the storage lock, which keeps sk alive. */
static int kevent_socket_check(struct kevent *k)
{
	struct kevent_storage *st;
	unsigned long flags;
	int ret = -EBADF;

	rcu_read_lock();
	st = rcu_dereference(k->st);
	if (st) {
		spin_lock_irqsave(&st->lock, flags);
		/* The socket may have been released meanwhile. */
		if (rcu_access_pointer(k->st) == st)
			ret = kevent_socket_state(k);
		spin_unlock_irqrestore(&st->lock, flags);
	}
	rcu_read_unlock();
	return ret;
}

const struct kevent_callbacks kevent_socket_callbacks = {
	.enqueue	= kevent_socket_enqueue,
	.dequeue	= kevent_storage_detach,
	.check		= kevent_socket_check,
	.priv_size	= sizeof(struct kevent_socket),
};
