// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the queue, its file and /dev/kevent.
 */

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kevent.h"

/* The largest ring whose size in bytes fits in an int. */
#define KEVENT_RING_SIZE_MAX \
	((INT_MAX - sizeof(struct kevent_ring)) / sizeof(struct ukevent))

#define KEVENT_INIT_FLAGS	(KEVENT_INIT_CLOEXEC | KEVENT_INIT_NONBLOCK | \
				 KEVENT_INIT_DIRECT)

static struct kevent_queue *kevent_queue_alloc(void)
{
	struct kevent_queue *q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);

	if (!q)
		return NULL;
	mutex_init(&q->mutex);
	kevent_index_init(&q->index);
	spin_lock_init(&q->ready_lock);
	INIT_LIST_HEAD(&q->ready);
	init_waitqueue_head(&q->wq);
	init_waitqueue_head(&q->poll_wq);
	init_irq_work(&q->poll_work, kevent_wake_pollers);
	q->user = get_current_user();
	return q;
}

static void kevent_queue_free(struct kevent_queue *q)
{
	kevent_direct_destroy(q);
	if (q->mm)
		mmdrop(q->mm);
	free_uid(q->user);
	kevent_index_destroy(&q->index);
	kfree(q);
}

static int kevent_release(struct inode *inode, struct file *file)
{
	struct kevent_queue *q = file->private_data;

	mutex_lock(&q->mutex);
	kevent_remove_all(q);
	kevent_cache_drain(q);
	mutex_unlock(&q->mutex);
	irq_work_sync(&q->poll_work);
	/* No kevent is attached: nothing writes a direct ring any more. */
	kevent_queue_free(q);
	return 0;
}

/*
 * Readable when a harvest would report an event: level-triggered
 * kevents whose object is no longer ready are rechecked and dropped, as
 * a harvest does.  That needs the mutex; while someone else holds it the
 * ready list's length is the answer, which may be high.  The recheck
 * never polls another file (KEVENT_CALLBACKS_NESTS): this poll may run
 * under the mutex of an epoll set that the queue watches, and a chain
 * of queues watching each other must not recurse once per queue.
 */
static __poll_t kevent_poll(struct file *file, poll_table *wait)
{
	struct kevent_queue *q = file->private_data;
	unsigned int ready;
	bool ring = false;

	poll_wait(file, &q->poll_wq, wait);
	/*
	 * kevent_wake() looks for pollers under the ready lock: either it
	 * sees this poller on poll_wq or this poller sees ready_num, and
	 * the slots of a direct ring.
	 */
	spin_lock_irq(&q->ready_lock);
	ready = q->ready_num;
	if (q->direct) {
		/* Slots not consumed, or kevents waiting for theirs. */
		kevent_direct_refresh_locked(q);
		ring = q->direct->ktail != q->direct->khead ||
		       q->direct->deferred;
	}
	spin_unlock_irq(&q->ready_lock);
	if (!ready && !ring)
		return 0;
	if (!mutex_trylock(&q->mutex))
		return EPOLLIN | EPOLLRDNORM;
	if (q->direct) {
		kevent_direct_reap(q);
		ring = q->direct->ktail != q->direct->khead;
	}
	ready = ring || kevent_count_ready(q, 1, true);
	mutex_unlock(&q->mutex);
	return ready ? EPOLLIN | EPOLLRDNORM : 0;
}

#ifdef CONFIG_PROC_FS
/*
 * Under the queue's mutex, as epoll's fdinfo holds its own, see LOCKING
 * in kevent.c.  A queue may hold millions of registrations: the walk
 * yields, and a fatal signal ends it.
 */
static void kevent_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct kevent_queue *q = file->private_data;
	unsigned int i;
	struct kevent *k;

	if (mutex_lock_killable(&q->mutex))
		return;
	seq_printf(m, "kevents:\t%d\nready:\t%u\n", atomic_read(&q->count),
		   READ_ONCE(q->ready_num));
	if (q->ring)
		seq_printf(m, "ring_size:\t%u\nkidx:\t%u\nuidx:\t%u\nused:\t%u\nover:\t%u\n",
			   q->ring_size,
			   q->direct ? (u32)READ_ONCE(q->direct->ktail) &
					       q->direct->mask :
				       READ_ONCE(q->kidx),
			   READ_ONCE(q->uidx),
			   q->direct ? kevent_direct_used(q) : READ_ONCE(q->used),
			   READ_ONCE(q->over));
	if (q->direct)
		seq_puts(m, "direct:\t1\n");
	for (i = 0; i < 1U << q->index.bits; i++)
		hlist_for_each_entry(k, &q->index.buckets[i], index_node) {
			if (kevent_dead(k))
				continue;
			seq_printf(m, "kevent:\ttype %u id %llx event %x req_flags %x user %llx ready %u\n",
				   k->uk.type, k->uk.id.raw_u64, READ_ONCE(k->uk.event),
				   READ_ONCE(k->uk.req_flags), k->uk.ptr,
				   !!(READ_ONCE(k->state) & KEVENT_STATE_READY));
			if (fatal_signal_pending(current) || seq_has_overflowed(m))
				goto out;
			cond_resched();
		}
out:
	mutex_unlock(&q->mutex);
}
#endif

static int kevent_dev_open(struct inode *inode, struct file *file)
{
	struct kevent_queue *q = kevent_queue_alloc();

	if (!q)
		return -ENOMEM;
	file->private_data = q;
	return 0;
}

const struct file_operations kevent_fops = {
	.owner		= THIS_MODULE,
	.open		= kevent_dev_open,
	.release	= kevent_release,
	.poll		= kevent_poll,
	.unlocked_ioctl	= kevent_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
#ifdef CONFIG_PROC_FS
	.show_fdinfo	= kevent_show_fdinfo,
#endif
};

static struct miscdevice kevent_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "kevent",
	.fops	= &kevent_fops,
	.mode	= 0666,
};

/**
 * kevent_queue_create - a new queue and its file descriptor
 * @ring: the ring in the caller's memory, or NULL
 * @ring_size: its number of slots, 0 without a ring
 * @flags: KEVENT_INIT_CLOEXEC, KEVENT_INIT_NONBLOCK, KEVENT_INIT_DIRECT
 *
 * Return: the descriptor, or -EINVAL, -EFAULT, -ENOMEM, -EMFILE or
 * -ENFILE as kevent_init(2) says.
 */
int kevent_queue_create(struct kevent_ring __user *ring,
			unsigned int ring_size, unsigned int flags)
{
	struct kevent_queue *q;
	int fd;

	if (flags & ~KEVENT_INIT_FLAGS)
		return -EINVAL;
	if (!ring != !ring_size || ring_size > KEVENT_RING_SIZE_MAX ||
	    (flags & KEVENT_INIT_DIRECT && !ring))
		return -EINVAL;
	if (ring && !(flags & KEVENT_INIT_DIRECT)) {
		if (!access_ok(ring, struct_size(ring, event, ring_size)))
			return -EFAULT;
		if (put_user(0, &ring->ring_kidx) ||
		    put_user(0, &ring->ring_over))
			return -EFAULT;
	}

	q = kevent_queue_alloc();
	if (!q)
		return -ENOMEM;
	if (ring) {
		mmgrab(current->mm);
		q->mm = current->mm;
	}
	q->ring = ring;
	q->ring_size = ring_size;
	if (flags & KEVENT_INIT_DIRECT) {
		fd = kevent_direct_create(q);
		if (fd) {
			kevent_queue_free(q);
			return fd;
		}
	}

	fd = anon_inode_getfd("[kevent]", &kevent_fops, q,
			      O_RDWR |
			      (flags & KEVENT_INIT_CLOEXEC ? O_CLOEXEC : 0) |
			      (flags & KEVENT_INIT_NONBLOCK ? O_NONBLOCK : 0));
	if (fd < 0)
		kevent_queue_free(q);
	return fd;
}

static int __init kevent_init_dev(void)
{
	/* The ABI is the same for 32-bit and 64-bit processes. */
	BUILD_BUG_ON(sizeof(struct kevent_id) != 8);
	BUILD_BUG_ON(__alignof__(struct kevent_id) != 8);
	BUILD_BUG_ON(sizeof(struct ukevent) != 40);
	BUILD_BUG_ON(offsetof(struct ukevent, id) != 0);
	BUILD_BUG_ON(offsetof(struct ukevent, type) != 8);
	BUILD_BUG_ON(offsetof(struct ukevent, event) != 12);
	BUILD_BUG_ON(offsetof(struct ukevent, req_flags) != 16);
	BUILD_BUG_ON(offsetof(struct ukevent, ret_flags) != 20);
	BUILD_BUG_ON(offsetof(struct ukevent, ret_data) != 24);
	BUILD_BUG_ON(offsetof(struct ukevent, user) != 32);
	BUILD_BUG_ON(offsetof(struct ukevent, ptr) != 32);
	BUILD_BUG_ON(sizeof(struct kevent_ring) != 8);
	BUILD_BUG_ON(offsetof(struct kevent_ring, ring_over) != 4);
	BUILD_BUG_ON(offsetof(struct kevent_ring, event) != 8);

	return misc_register(&kevent_miscdev);
}
device_initcall(kevent_init_dev);
