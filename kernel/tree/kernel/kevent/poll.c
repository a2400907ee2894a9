// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_POLL, readiness of any pollable file.
 *
 * id.raw[0] holds the descriptor, event the POLL* bits of interest.  The
 * kevent hooks into the wait queues the file's ->poll() names, as epoll
 * does, without holding a reference to the file: when the file is
 * released, kevent_release_file() reports the kevent broken and unhooks
 * it.  Wakeups may be spurious or carry no mask, so readiness is checked
 * with ->poll() before every report, and ret_data[0] holds the revents
 * then seen.  As with poll(2), POLLERR and POLLHUP are always reported.
 */

#include <linux/file.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "kevent.h"
#include "sources.h"

/**
 * struct kevent_poll_wait - a kevent's entry on one wait queue of a file
 * @wait: the entry
 * @whead: the wait queue, or NULL once it is being freed (POLLFREE)
 * @k: the kevent
 * @next: the kevent's next entry
 */
struct kevent_poll_wait {
	wait_queue_entry_t wait;
	wait_queue_head_t *whead;
	struct kevent *k;
	struct kevent_poll_wait *next;
};

/**
 * struct kevent_poll - the per-kevent data of KEVENT_POLL
 * @file: the watched file, not referenced; valid while the kevent is
 *	attached to its storage
 * @k: the kevent
 * @pt: the poll table that collects the wait queues
 * @err: -ENOMEM if an entry could not be allocated
 * @waits: the wait queue entries, one per queue the file's ->poll() named
 * @first: the entry of the first queue, which most files have alone;
 *	those of any others are allocated
 */
struct kevent_poll {
	struct file *file;
	struct kevent *k;
	poll_table pt;
	int err;
	struct kevent_poll_wait *waits;
	struct kevent_poll_wait first;
};

static __poll_t kevent_poll_interest(const struct kevent *k)
{
	return (__force __poll_t)READ_ONCE(k->uk.event) | EPOLLERR | EPOLLHUP;
}

static int kevent_poll_wake(wait_queue_entry_t *wait, unsigned int mode,
			    int sync, void *key)
{
	struct kevent_poll_wait *pw = container_of(wait, struct kevent_poll_wait,
						   wait);
	__poll_t mask = key_to_poll(key);

	if (mask & POLLFREE) {
		/*
		 * The wait queue goes away before the file, as signalfd's
		 * does with the thread that polled it: the kevent will never
		 * hear of the file again, so it is reported broken.
		 */
		list_del_init(&wait->entry);
		kevent_ready(pw->k, -ESRCH);
		/*
		 * The last access to pw: once kevent_poll_unhook() sees NULL,
		 * it may free it, and the kevent, at once.  Pairs with the
		 * acquire there.
		 */
		smp_store_release(&pw->whead, NULL);
		return 0;
	}
	if (!mask || (mask & kevent_poll_interest(pw->k)))
		kevent_ready(pw->k, 1);
	return 0;
}

/* May sleep, as epoll's: ->poll() runs in process context. */
static void kevent_poll_queue_proc(struct file *file, wait_queue_head_t *whead,
				   poll_table *pt)
{
	struct kevent_poll *p = container_of(pt, struct kevent_poll, pt);
	struct kevent_poll_wait *pw;

	if (p->err)
		return;
	pw = p->waits ? kmalloc(sizeof(*pw), GFP_KERNEL_ACCOUNT) : &p->first;
	if (!pw) {
		p->err = -ENOMEM;
		return;
	}
	init_waitqueue_func_entry(&pw->wait, kevent_poll_wake);
	pw->whead = whead;
	pw->k = p->k;
	pw->next = p->waits;
	p->waits = pw;
	add_wait_queue(whead, &pw->wait);
}

static void kevent_poll_unhook(struct kevent *k)
{
	struct kevent_poll *p = kevent_priv(k);
	struct kevent_poll_wait *pw, *next;
	wait_queue_head_t *whead;

	/* A POLLFREE wakeup frees the queue an RCU grace period later. */
	rcu_read_lock();
	for (pw = p->waits; pw; pw = next) {
		next = pw->next;
		/* Pairs with the release in kevent_poll_wake(). */
		whead = smp_load_acquire(&pw->whead);
		if (whead)
			remove_wait_queue(whead, &pw->wait);
		if (pw != &p->first)
			kfree(pw);
	}
	rcu_read_unlock();
	p->waits = NULL;
}

/**
 * __kevent_release_file - report and detach the kevents of a file
 * @file: the file, being released
 *
 * Called by kevent_release_file() for a file that kevents ever watched.
 */
void __kevent_release_file(struct file *file)
{
	kevent_storage_release(file->f_kevent, -EBADF);
}

static int kevent_poll_enqueue(struct kevent *k)
{
	struct kevent_poll *p = kevent_priv(k);
	struct fd f = fdget(k->uk.id.raw[0]);
	struct file *file = f.file;
	struct kevent_storage *st;
	__poll_t revents;
	int err = 0;

	/* No reference is kept, so none is taken where the table is ours. */
	if (!file)
		return -EBADF;
	if (!file_can_poll(file)) {
		err = -EINVAL;
		goto out;
	}
	/* A queue that watched itself would wake itself for ever. */
	if (kevent_queue_from_file(file) == k->queue) {
		err = -EINVAL;
		goto out;
	}
	st = kevent_storage_get(&file->f_kevent);
	if (!st) {
		err = -ENOMEM;
		goto out;
	}

	p->file = file;
	p->k = k;
	init_poll_funcptr(&p->pt, kevent_poll_queue_proc);
	p->err = 0;
	p->waits = NULL;
	err = kevent_storage_attach(st, k);
	if (err)
		goto out;
	revents = vfs_poll(file, &p->pt) & kevent_poll_interest(k);
	if (p->err) {
		err = p->err;
		kevent_storage_detach(k);
		goto out;
	}
	k->uk.ret_data[0] = (__force u32)revents;
	err = revents ? 1 : 0;
out:
	fdput(f);
	return err;
}

static int kevent_poll_check(struct kevent *k)
{
	struct kevent_poll *p = kevent_priv(k);
	struct file *file = NULL;
	__poll_t revents;

	/* The file is ours to poll only while it has not been released. */
	rcu_read_lock();
	if (rcu_access_pointer(k->st) && get_file_rcu(p->file))
		file = p->file;
	rcu_read_unlock();
	if (!file)
		return -EBADF;

	revents = vfs_poll(file, NULL) & kevent_poll_interest(k);
	fput(file);
	k->uk.ret_data[0] = (__force u32)revents;
	return revents ? 1 : 0;
}

const struct kevent_callbacks kevent_poll_callbacks = {
	.enqueue	= kevent_poll_enqueue,
	.dequeue	= kevent_storage_detach,
	.unhook		= kevent_poll_unhook,
	.check		= kevent_poll_check,
	.priv_size	= sizeof(struct kevent_poll),
	.flags		= KEVENT_CALLBACKS_RECHECK | KEVENT_CALLBACKS_NESTS,
	.name		= "kevent_poll",
};
