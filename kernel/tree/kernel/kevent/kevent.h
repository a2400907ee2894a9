/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: what the files of the core share.
 */
#ifndef _KERNEL_KEVENT_KEVENT_H
#define _KERNEL_KEVENT_KEVENT_H

#include <linux/file.h>
#include <linux/irq_work.h>
#include <linux/kevent.h>
#include <linux/mutex.h>
#include <linux/wait.h>

/*
 * States of a kevent, in &kevent.state, under &kevent_queue.ready_lock.
 */
enum {
	KEVENT_STATE_READY	= 0x01,	/* on the ready list */
	KEVENT_STATE_TRANSIT	= 0x02,	/* taken by a harvest */
	KEVENT_STATE_AGAIN	= 0x04,	/* notified while in transit */
	KEVENT_STATE_FORCED	= 0x08,	/* made ready by KEVENT_CTL_READY */
	KEVENT_STATE_BROKEN	= 0x10,	/* the object is gone or failed */
	KEVENT_STATE_RECHECK	= 0x20,	/* requeued level-triggered */
};

/**
 * struct kevent_queue - a kevent queue, the private data of its file
 * @mutex: serializes kevent_ctl(), harvests and commits; protects @index,
 *	@count and the ring state
 * @index_lock: also held to change @index and @count, so that fdinfo can
 *	read them without the mutex, which a splice of fdinfo into a pipe
 *	would take under the pipe's mutex, the reverse of KEVENT_PIPE's order
 * @index: registrations by (type, id, user), linked by &kevent.index_node
 * @count: number of registrations in @index
 * @ready_lock: protects @ready, @ready_num, @kick_seq and &kevent.state;
 *	taken with interrupts disabled
 * @ready: ready kevents, linked by &kevent.ready_entry
 * @ready_num: number of kevents on @ready
 * @kick_seq: bumped by KEVENT_CTL_READY with no entries, to end every wait
 * @wq: threads sleeping in kevent_get_events() and kevent_wait()
 * @poll_wq: poll(), select() and epoll on the queue's file
 * @poll_work: wakes @poll_wq
 * @ring: the caller's ring, or NULL
 * @ring_size: slots in @ring
 * @kidx: next slot the kernel writes
 * @uidx: first slot not committed
 * @used: slots written and not committed
 * @over: times @uidx wrapped to 0
 */
struct kevent_queue {
	/* serializes changes; protects index, count and the ring state */
	struct mutex mutex;
	/* protects index and count for readers without the mutex */
	spinlock_t index_lock;
	struct rb_root index;
	unsigned int count;

	/* protects ready, ready_num, kick_seq and each kevent's state */
	spinlock_t ready_lock;
	struct list_head ready;
	unsigned int ready_num;
	unsigned int kick_seq;
	wait_queue_head_t wq;
	wait_queue_head_t poll_wq;
	struct irq_work poll_work;

	struct kevent_ring __user *ring;
	unsigned int ring_size;
	unsigned int kidx;
	unsigned int uidx;
	unsigned int used;
	unsigned int over;
};

/**
 * struct kevent_sink - where a harvest copies ready events
 * @buf: the caller's array, unless @to_ring
 * @to_ring: the ring is the destination, not @buf
 * @max: the most events to take
 * @done: events taken so far
 */
struct kevent_sink {
	struct ukevent __user *buf;
	bool to_ring;
	unsigned int max;
	unsigned int done;
};

struct kevent_queue *kevent_queue_get(struct file *file);
struct kevent_queue *kevent_fdget(int fd, struct fd *f);
const struct kevent_callbacks *kevent_callbacks_of(u32 type);

struct kevent *kevent_alloc(struct kevent_queue *q,
			    const struct kevent_callbacks *cb,
			    const struct ukevent *uk);
int kevent_insert(struct kevent_queue *q, struct kevent *new);
void kevent_unindex(struct kevent_queue *q, struct kevent *k);
void kevent_remove(struct kevent_queue *q, struct kevent *k);
void kevent_remove_all(struct kevent_queue *q);

void kevent_report(struct kevent *k, struct ukevent *out);
void kevent_force_ready(struct kevent *k);
void kevent_kick(struct kevent_queue *q);
void kevent_wake_pollers(struct irq_work *work);
int kevent_harvest(struct kevent_queue *q, struct kevent_sink *sink);

int kevent_ring_put(struct kevent_queue *q, const struct ukevent *out);

long kevent_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* _KERNEL_KEVENT_KEVENT_H */
