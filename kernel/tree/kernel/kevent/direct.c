// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the direct ring, which notifications fill as events happen.
 *
 * A queue made with KEVENT_INIT_DIRECT pins the pages of its ring for
 * its whole life and maps them into the kernel, so that a notification,
 * in whatever context it runs, writes its report into the next slot at
 * once, under the ready lock, and a consumer that finds events there
 * takes them with no system call.  The consumer hands slots back by
 * storing its count of consumed slots, uhead, in the ring's trailer.
 * The kernel reads nothing else that userspace writes in the ring, and
 * believes uhead only between the slots it knows consumed and those it
 * wrote: a consumer that scribbles over its ring confuses itself alone.
 *
 * A kevent holds at most one slot (KEVENT_STATE_POSTED, on the posted
 * list in the order of the slots).  Notified again before the slot is
 * consumed, it is marked AGAIN, and queued once the slot is found
 * consumed.  So the ring never holds two reports of one registration,
 * and a ring with as many slots as registrations never fills.  When it
 * is full, a notification queues its kevent on the ready list, as if
 * the queue had no direct ring, for the next kevent_wait() to write.
 *
 * The kernel writes only through its own mapping, never at the ring's
 * address, so munmap(), mremap() and execve() leave it writing pages
 * that the process may no longer see, and nothing worse.  The pages
 * are unpinned when the queue is released, once every kevent has left
 * its object: no notification can be writing then.
 */

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kevent.h"

/*
 * The pinned pages count against the address space's RLIMIT_MEMLOCK,
 * as the pins of RDMA and VFIO do, unless the caller may lock memory at
 * will.
 */
static int kevent_direct_charge(struct mm_struct *mm, unsigned long nr)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(nr, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(nr, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Only anonymous and shared memory (shmem, memfd) may hold the ring:
 * the kernel dirties it from any context, with no writeback that a page
 * of a regular file would need to follow.  Both kinds are swap-backed.
 */
static int kevent_direct_check_pages(struct page **pages, unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++)
		if (!PageSwapBacked(pages[i]))
			return -EFAULT;
	return 0;
}

/**
 * kevent_direct_create - pin and map the ring of a new direct queue
 * @q: the queue, with @ring, @ring_size and @mm set
 *
 * Return: 0, -EINVAL if the ring's size is not a power of two or the
 * ring is misaligned, -EFAULT if it is not writable anonymous or shared
 * memory of the caller, or -ENOMEM beyond RLIMIT_MEMLOCK or out of
 * memory.
 */
int kevent_direct_create(struct kevent_queue *q)
{
	unsigned long start = (unsigned long)q->ring;
	struct kevent_direct *d;
	unsigned long first, nr;
	size_t bytes;
	long pinned;
	int ret;

	bytes = size_add(struct_size(q->ring, event, q->ring_size),
			 sizeof(struct kevent_ring_tail));
	if (!is_power_of_2(q->ring_size) ||
	    !IS_ALIGNED(start, __alignof__(struct kevent_ring)) ||
	    bytes > INT_MAX)
		return -EINVAL;
	first = start & PAGE_MASK;
	nr = (PAGE_ALIGN(start + bytes) - first) >> PAGE_SHIFT;

	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return -ENOMEM;
	ret = -ENOMEM;
	d->pages = kvmalloc_array(nr, sizeof(*d->pages), GFP_KERNEL_ACCOUNT);
	if (!d->pages)
		goto free;
	ret = kevent_direct_charge(q->mm, nr);
	if (ret)
		goto free;
	pinned = pin_user_pages_fast(first, nr, FOLL_WRITE | FOLL_LONGTERM,
				     d->pages);
	if (pinned != nr) {
		if (pinned > 0)
			unpin_user_pages(d->pages, pinned);
		ret = pinned == -ENOMEM ? -ENOMEM : -EFAULT;
		goto uncharge;
	}
	ret = kevent_direct_check_pages(d->pages, nr);
	if (ret)
		goto unpin;
	d->nr_pages = nr;
	d->vaddr = vmap(d->pages, nr, VM_MAP, PAGE_KERNEL);
	if (!d->vaddr) {
		ret = -ENOMEM;
		goto unpin;
	}
	d->ring = d->vaddr + offset_in_page(start);
	d->tail = (struct kevent_ring_tail *)&d->ring->event[q->ring_size];
	d->mask = q->ring_size - 1;
	INIT_LIST_HEAD(&d->posted);
	WRITE_ONCE(d->ring->ring_kidx, 0);
	WRITE_ONCE(d->ring->ring_over, 0);
	memset(d->tail, 0, sizeof(*d->tail));
	q->direct = d;
	return 0;

unpin:
	unpin_user_pages(d->pages, nr);
uncharge:
	atomic64_sub(nr, &q->mm->pinned_vm);
free:
	kvfree(d->pages);
	kfree(d);
	return ret;
}

/**
 * kevent_direct_destroy - unpin the ring of a queue being released
 * @q: the queue, whose kevents have all left their objects
 */
void kevent_direct_destroy(struct kevent_queue *q)
{
	struct kevent_direct *d = q->direct;

	if (!d)
		return;
	vunmap(d->vaddr);
	unpin_user_pages_dirty_lock(d->pages, d->nr_pages, true);
	atomic64_sub(d->nr_pages, &q->mm->pinned_vm);
	kvfree(d->pages);
	kfree(d);
	q->direct = NULL;
}

/**
 * kevent_direct_refresh_locked - learn how far the consumer has consumed
 * @q: a direct queue, its ready lock held
 *
 * Reads uhead once.  A value behind the last one read, or past the
 * slots written, frees nothing.
 */
void kevent_direct_refresh_locked(struct kevent_queue *q)
{
	struct kevent_direct *d = q->direct;
	u32 uhead, freed, uidx;

	lockdep_assert_held(&q->ready_lock);

	/* Pairs with the consumer's release: it has read the slots freed. */
	uhead = smp_load_acquire(&d->tail->uhead);
	freed = uhead - (u32)d->khead;
	if (!freed || freed > d->ktail - d->khead)
		return;
	d->khead += freed;
	uidx = q->uidx + freed;
	if (uidx > d->mask) {
		q->over++;
		WRITE_ONCE(d->ring->ring_over, q->over);
	}
	WRITE_ONCE(q->uidx, uidx & d->mask);
}

/**
 * kevent_direct_used - slots written and not known consumed
 * @q: a direct queue
 *
 * What &kevent_queue.used and &kevent_queue.kidx hold for another ring
 * is derived from the free-running counts here: the notification that
 * writes a slot updates nothing else.
 *
 * Return: their number, up to the ring's size.
 */
unsigned int kevent_direct_used(const struct kevent_queue *q)
{
	const struct kevent_direct *d = q->direct;

	return READ_ONCE(d->ktail) - READ_ONCE(d->khead);
}

/**
 * kevent_direct_room_locked - has the ring a free slot?
 * @q: a direct queue, its ready lock held
 *
 * Return: true if a slot is free; uhead is read only when the ring
 * looks full.
 */
bool kevent_direct_room_locked(struct kevent_queue *q)
{
	struct kevent_direct *d = q->direct;

	if (d->ktail - d->khead > d->mask)
		kevent_direct_refresh_locked(q);
	return d->ktail - d->khead <= d->mask;
}

/**
 * kevent_direct_consumed_locked - has the slot of a posted kevent been
 *	consumed?
 * @q: a direct queue, its ready lock held
 * @k: a kevent of @q in KEVENT_STATE_POSTED
 *
 * Return: true if it has; uhead is read only if not known so already.
 */
bool kevent_direct_consumed_locked(struct kevent_queue *q, struct kevent *k)
{
	struct kevent_direct *d = q->direct;

	if (d->khead <= k->ring_pos)
		kevent_direct_refresh_locked(q);
	return d->khead > k->ring_pos;
}

/**
 * kevent_direct_slot_locked - the slot the next report goes into
 * @q: a direct queue, its ready lock held, with room in its ring
 *
 * A report may be filled in place, userspace seeing it or not: it reads
 * the slot only once kevent_direct_publish_locked() has moved ktail.
 *
 * Return: the kernel's view of the slot.
 */
struct ukevent *kevent_direct_slot_locked(struct kevent_queue *q)
{
	struct kevent_direct *d = q->direct;

	return &d->ring->event[d->ktail & d->mask];
}

/**
 * kevent_direct_publish_locked - hand the next slot to the consumer
 * @q: a direct queue, its ready lock held
 * @k: the kevent whose report the slot holds, in no slot
 *
 * @k holds the slot until it is consumed.
 */
void kevent_direct_publish_locked(struct kevent_queue *q, struct kevent *k)
{
	struct kevent_direct *d = q->direct;

	lockdep_assert_held(&q->ready_lock);

	k->ring_pos = d->ktail++;
	k->state |= KEVENT_STATE_POSTED;
	list_add_tail(&k->ready_entry, &d->posted);
	if (k->state & KEVENT_STATE_AGAIN)
		d->deferred++;
	/* Pairs with the consumer's acquire: the slot before the tail. */
	smp_store_release(&d->tail->ktail, (u32)d->ktail);
	WRITE_ONCE(d->ring->ring_kidx, d->ktail & d->mask);
}

/**
 * kevent_direct_forget_locked - a posted kevent gives up its slot
 * @q: a direct queue, its ready lock held
 * @k: the kevent, in KEVENT_STATE_POSTED
 *
 * Its slot was consumed, or it is being removed; a pending AGAIN is
 * dropped with it.
 */
void kevent_direct_forget_locked(struct kevent_queue *q, struct kevent *k)
{
	lockdep_assert_held(&q->ready_lock);

	kevent_direct_undefer_locked(q, k);
	list_del_init(&k->ready_entry);
	k->state &= ~KEVENT_STATE_POSTED;
}

/**
 * kevent_direct_undefer_locked - drop the pending event of a kevent
 * @q: a direct queue, its ready lock held
 * @k: the kevent
 *
 * Its AGAIN, if it has one, no longer waits for its slot.
 */
void kevent_direct_undefer_locked(struct kevent_queue *q, struct kevent *k)
{
	lockdep_assert_held(&q->ready_lock);

	if ((k->state & KEVENT_STATE_POSTED) &&
	    (k->state & KEVENT_STATE_AGAIN))
		q->direct->deferred--;
	k->state &= ~KEVENT_STATE_AGAIN;
}

/**
 * kevent_direct_defer_locked - a posted kevent is notified again
 * @q: a direct queue, its ready lock held
 * @k: the kevent, in KEVENT_STATE_POSTED, its slot not consumed
 */
void kevent_direct_defer_locked(struct kevent_queue *q, struct kevent *k)
{
	lockdep_assert_held(&q->ready_lock);

	if (!(k->state & KEVENT_STATE_AGAIN)) {
		k->state |= KEVENT_STATE_AGAIN;
		q->direct->deferred++;
	}
	kevent_direct_flags_locked(q);
}

/**
 * kevent_direct_flags_locked - publish whether kevent_wait() has more
 * @q: a direct queue, its ready lock held
 *
 * KEVENT_RING_F_PENDING: kevents wait on the ready list, or for their
 * slot to be consumed, and only kevent_wait() writes them into the ring.
 */
void kevent_direct_flags_locked(struct kevent_queue *q)
{
	struct kevent_direct *d = q->direct;
	u32 flags = q->ready_num || d->deferred ? KEVENT_RING_F_PENDING : 0;

	lockdep_assert_held(&q->ready_lock);

	if (flags != d->flags) {
		d->flags = flags;
		WRITE_ONCE(d->tail->flags, flags);
	}
}

/**
 * kevent_direct_consume_locked - consume slots for the consumer
 * @q: a direct queue, its ready lock held, refreshed
 * @n: how many slots, no more than are written and not consumed
 *
 * For kevent_commit(): moves uhead forward as the consumer would have.
 */
void kevent_direct_consume_locked(struct kevent_queue *q, unsigned int n)
{
	struct kevent_direct *d = q->direct;

	/* As the consumer's own store: the refresh's acquire pairs with it. */
	smp_store_release(&d->tail->uhead, (u32)d->khead + n);
	kevent_direct_refresh_locked(q);
}
