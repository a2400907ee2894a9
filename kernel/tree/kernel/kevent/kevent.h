/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: what the files of the core share.
 */
#ifndef _KERNEL_KEVENT_KEVENT_H
#define _KERNEL_KEVENT_KEVENT_H

#include <linux/file.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/kevent.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/sched.h>
#include <linux/sched/user.h>
#include <linux/wait.h>

struct mm_struct;
struct page;
struct user_struct;

/**
 * struct kevent_direct - the ring of a KEVENT_INIT_DIRECT queue
 * @pages: the ring's pages, pinned for the queue's life
 * @nr_pages: how many
 * @vaddr: the kernel's mapping of @pages
 * @ring: the ring in that mapping
 * @tail: its trailer, after the last slot
 * @mask: ring_size - 1, a power of two less one
 * @ktail: slots written; &kevent_ring_tail.ktail is its low 32 bits
 * @khead: slots consumed, as last read from &kevent_ring_tail.uhead;
 *	64 bits, so that a slot's position never wraps and a kevent that
 *	waited any time to be reaped is never taken for unconsumed
 * @flags: the last value written to &kevent_ring_tail.flags
 * @posted: the kevents that hold a slot, in the order of their slots
 * @deferred: POSTED kevents notified again (AGAIN): each waits for its
 *	slot to be consumed to be reported again
 *
 * All but the first four under &kevent_queue.ready_lock.
 */
struct kevent_direct {
	struct page **pages;
	unsigned long nr_pages;
	void *vaddr;
	struct kevent_ring *ring;
	struct kevent_ring_tail *tail;
	u32 mask;
	u64 ktail;
	u64 khead;
	u32 flags;
	struct list_head posted;
	unsigned int deferred;
};

/*
 * States of a kevent, in &kevent.state, under &kevent_queue.ready_lock.
 * READY, TRANSIT and HELD exclude each other: a kevent is on the ready
 * list, or taken by a harvest, or held by the call that reported it.
 */
enum {
	KEVENT_STATE_READY	= 0x01,	/* on the ready list */
	KEVENT_STATE_TRANSIT	= 0x02,	/* taken by a harvest */
	KEVENT_STATE_AGAIN	= 0x04,	/* notified while in transit or held */
	KEVENT_STATE_FORCED	= 0x08,	/* made ready by KEVENT_CTL_READY */
	KEVENT_STATE_BROKEN	= 0x10,	/* the object failed or went away */
	KEVENT_STATE_RECHECK	= 0x20,	/* requeued LT; READY or TRANSIT */
	KEVENT_STATE_HELD	= 0x40,	/* reported, held until the call ends */
	KEVENT_STATE_CHECKING	= 0x80,	/* READY, its source being asked */
	KEVENT_STATE_POSTED	= 0x100,	/* in a slot of the direct ring */
};

/* The states whose kevent is on a list by its ready_entry. */
#define KEVENT_STATE_LISTED \
	(KEVENT_STATE_READY | KEVENT_STATE_HELD | KEVENT_STATE_POSTED)

/*
 * Bits of &kevent.index_state, each set or cleared by one atomic
 * operation, whose old value tells who changes &kevent_queue.count.
 */
enum {
	KEVENT_INDEX_IN		= 0x1,	/* in the queue's index */
	KEVENT_INDEX_DEAD	= 0x2,	/* the object went away: not found */
};

/* Has @k's object gone away?  Then its queue's lookups skip it. */
static inline bool kevent_dead(const struct kevent *k)
{
	return atomic_read(&k->index_state) & KEVENT_INDEX_DEAD;
}

/*
 * A harvest takes up to KEVENT_HARVEST_BATCH kevents off the ready list
 * under one hold of the ready lock, copies their reports out with one
 * user access section (and, into a ring, one store of ring_kidx), and
 * settles them under one more hold of the lock: two lock round trips per
 * batch instead of three per event.
 */
#define KEVENT_HARVEST_BATCH	16

struct kevent_batch {
	unsigned int n;
	struct kevent *k[KEVENT_HARVEST_BATCH];
	/* out[i] was filled when k[i] was taken: no check is due */
	bool filled[KEVENT_HARVEST_BATCH];
	/* the place of the first kevent not filled, n if none */
	unsigned int first_check;
	/*
	 * Bit i: k[i] was settled when taken, its batch's end owes it
	 * nothing.  Only kevents before first_check settle, so that none
	 * moves when the batch drops those whose check failed.
	 */
	unsigned long settled;
	struct ukevent out[KEVENT_HARVEST_BATCH];
};

/* The index starts with 4 buckets in the queue and stops doubling at 1M. */
#define KEVENT_INDEX_MIN_BITS	2
#define KEVENT_INDEX_MAX_BITS	20

/**
 * struct kevent_index - a queue's registrations by key (index.c)
 * @buckets: 1 << @bits chains, linked by &kevent.index_node
 * @bits: log2 of the number of buckets
 * @count: registrations in @buckets
 * @first: the buckets until the queue holds more than 8 registrations
 */
struct kevent_index {
	struct hlist_head *buckets;
	unsigned int bits;
	unsigned int count;
	struct hlist_head first[1 << KEVENT_INDEX_MIN_BITS];
};

/*
 * Registrations freed by a queue are kept, up to this many, for its
 * next ADDs: a removal and an addition then cost no allocator call.
 */
#define KEVENT_CACHE_MAX	1024

/**
 * struct kevent_queue - a kevent queue, the private data of its file
 * @mutex: serializes kevent_ctl(), harvests, commits and fdinfo;
 *	protects @index and the ring state
 * @index: registrations by (type, id, user)
 * @count: registrations in @index whose object has not gone away
 * @ready_lock: protects @ready, @ready_num, @kick_seq, the lists of held
 *	kevents and &kevent.state; taken with interrupts disabled
 * @ready: ready kevents, linked by &kevent.ready_entry
 * @ready_num: number of kevents on @ready
 * @kick_seq: bumped to end every wait
 * @wq: threads sleeping in kevent_get_events() and kevent_wait()
 * @poll_wq: poll(), select() and epoll on the queue's file
 * @poll_work: wakes @poll_wq
 * @user: the user whose registration limit the queue's kevents count in
 * @mm: the address space of @ring; NULL without a ring
 * @ring: the ring, in @mm, or NULL
 * @direct: the kernel's view of @ring with KEVENT_INIT_DIRECT, or NULL;
 *	the ring state below is then under @ready_lock, not @mutex, and
 *	@kidx and @used are derived from it instead, see
 *	kevent_direct_used()
 * @ring_size: slots in @ring
 * @kidx: next slot the kernel writes
 * @uidx: first slot not committed
 * @used: slots written and not committed
 * @over: times @uidx wrapped to 0
 * @cache: freed registrations of each type, linked by
 *	&kevent.next_cached, under @mutex
 * @cached: how many, at most KEVENT_CACHE_MAX
 * @calls: the calls that numbered themselves so far (&kevent_sink.call),
 *	under @mutex
 * @batch: the batch of the harvest under way, under @mutex.  Not on the
 *	harvest's stack: that kilobyte would be zeroed at every call where
 *	the kernel initializes its stack variables (INIT_STACK_ALL_ZERO,
 *	the default of compilers that can)
 */
struct kevent_queue {
	/* serializes changes; protects index and the ring state */
	struct mutex mutex;
	struct kevent_index index;
	atomic_t count;

	/* protects ready, ready_num, kick_seq and each kevent's state */
	spinlock_t ready_lock;
	struct list_head ready;
	unsigned int ready_num;
	unsigned int kick_seq;
	wait_queue_head_t wq;
	wait_queue_head_t poll_wq;
	struct irq_work poll_work;

	struct user_struct *user;
	struct mm_struct *mm;
	struct kevent_ring __user *ring;
	struct kevent_direct *direct;
	unsigned int ring_size;
	unsigned int kidx;
	unsigned int uidx;
	unsigned int used;
	unsigned int over;

	struct kevent *cache[KEVENT_MAX];
	unsigned int cached;

	u64 calls;
	struct kevent_batch batch;
};

/**
 * struct kevent_sink - where the harvests of one system call go
 * @buf: the caller's array, unless @to_ring
 * @to_ring: the ring is the destination, not @buf
 * @want: the most events the call asks for
 * @min: the call returns once it has taken this many
 * @max: the most events to take, @want or fewer where the ring is full
 * @done: events taken so far
 * @fault: a copy failed; the event stays at the head of the ready list
 * @held: kevents reported by this call that would be ready again; they
 *	are requeued when the call ends, so that no call reports one twice
 * @call: the number of this call among the queue's (&kevent_queue.calls),
 *	the &kevent.reported_by of the edge-triggered kevents it reports
 *	held by no list (kevent_complete_batch()); 0 until the first
 *
 * A call declares its sink with an initializer that sets what the call
 * asks for and makes @held an empty list; the rest starts at zero.
 */
struct kevent_sink {
	struct ukevent __user *buf;
	bool to_ring;
	unsigned int want;
	unsigned int min;
	unsigned int max;
	unsigned int done;
	bool fault;
	struct list_head held;
	u64 call;
};

/* queue.c */
int kevent_queue_create(struct kevent_ring __user *ring,
			unsigned int ring_size, unsigned int flags);
extern const struct file_operations kevent_fops;

/**
 * kevent_queue_from_file - the queue behind a file
 * @file: the file
 *
 * Return: the queue, or NULL if @file is not a kevent queue.
 */
static inline struct kevent_queue *kevent_queue_from_file(struct file *file)
{
	return file->f_op == &kevent_fops ? file->private_data : NULL;
}

/**
 * kevent_fdget - the queue behind a file descriptor
 * @fd: the descriptor, from userspace
 * @f: where to keep the reference, for fdput() once done
 *
 * Inline, as the ring's owner test below: out of line, the two calls and
 * the zeroing of @f on the caller's stack, which the compiler could not
 * see written, counted 22 to 28 instructions of each system call on a
 * queue.
 *
 * Return: the queue, ERR_PTR(-EBADF) if @fd is not open, or
 * ERR_PTR(-EINVAL) if it is not a kevent queue; on error nothing is held.
 */
static __always_inline struct kevent_queue *kevent_fdget(int fd,
							 struct fd *f)
{
	struct kevent_queue *q;

	*f = fdget(fd);
	if (!f->file)
		return ERR_PTR(-EBADF);
	q = kevent_queue_from_file(f->file);
	if (!q) {
		fdput(*f);
		return ERR_PTR(-EINVAL);
	}
	return q;
}

/* abi.c */
long kevent_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/*
 * sources.c: the table of sources and the slab cache of each, read
 * inline at every ADD and free
 */
extern const struct kevent_callbacks *const kevent_sources[KEVENT_MAX];
extern struct kmem_cache *kevent_caches[KEVENT_MAX];

/**
 * kevent_callbacks_of - the event source of a type
 * @type: ukevent.type, from userspace
 *
 * Return: the source's callbacks, or NULL if @type has none.
 */
static __always_inline const struct kevent_callbacks *
kevent_callbacks_of(u32 type)
{
	if (type >= KEVENT_MAX)
		return NULL;
	return kevent_sources[array_index_nospec(type, KEVENT_MAX)];
}

/**
 * kevent_cache_of - the slab cache of a source's registrations
 * @type: a type that kevent_callbacks_of() has a source for
 *
 * Return: the cache, whose objects are a &struct kevent followed by the
 * source's &kevent_callbacks.priv_size bytes.
 */
static __always_inline struct kmem_cache *kevent_cache_of(u32 type)
{
	return kevent_caches[array_index_nospec(type, KEVENT_MAX)];
}

/* index.c */

/**
 * kevent_index_hash - the hash of a request's key in a queue's index
 * @uk: the request, whose type, id and user data are the key
 *
 * An ADD hashes its key once, for its lookup and its insertion.
 *
 * Return: 32 bits of hash, of which the index uses the top ones.
 */
static __always_inline u32 kevent_index_hash(const struct ukevent *uk)
{
	u64 h = (uk->id.raw_u64 ^ uk->type) * GOLDEN_RATIO_64;

	/* The user data is often the id again: mix it in after. */
	return hash_64(h ^ uk->ptr, 32);
}

void kevent_index_init(struct kevent_index *idx);
void kevent_index_destroy(struct kevent_index *idx);
void kevent_index_grow(struct kevent_index *idx);

/*
 * The top @bits bits of @hash: the hash is kept with each registration
 * (&kevent.index_hash), so that a table that doubles moves its
 * registrations without hashing their keys again.
 */
static inline struct hlist_head *
kevent_index_bucket(struct hlist_head *buckets, unsigned int bits, u32 hash)
{
	return &buckets[hash >> (32 - bits)];
}

/**
 * kevent_index_find - the registration with a key
 * @idx: the index, under its queue's mutex
 * @uk: a request, whose type, id and user data are the key
 * @hash: kevent_index_hash() of @uk
 *
 * Inline, always: every ADD, REMOVE and MODIFY looks its key up.
 *
 * Return: the registration in @idx with @uk's key, dead or alive, or
 * NULL.
 */
static __always_inline struct kevent *
kevent_index_find(struct kevent_index *idx, const struct ukevent *uk, u32 hash)
{
	struct kevent *k;

	hlist_for_each_entry(k, kevent_index_bucket(idx->buckets, idx->bits,
						    hash), index_node)
		if (k->index_hash == hash && k->uk.type == uk->type &&
		    k->uk.id.raw_u64 == uk->id.raw_u64 && k->uk.ptr == uk->ptr)
			return k;
	return NULL;
}

/**
 * kevent_index_add - put a registration in an index
 * @idx: the index, under its queue's mutex
 * @k: the registration, whose key is in none of @idx's
 * @hash: kevent_index_hash() of @k's key
 */
static __always_inline void kevent_index_add(struct kevent_index *idx,
					     struct kevent *k, u32 hash)
{
	if (idx->count >= 2U << idx->bits && idx->bits < KEVENT_INDEX_MAX_BITS)
		kevent_index_grow(idx);
	k->index_hash = hash;
	hlist_add_head(&k->index_node,
		       kevent_index_bucket(idx->buckets, idx->bits, hash));
	idx->count++;
}

/**
 * kevent_index_del - take a registration out of its index
 * @idx: the index, under its queue's mutex
 * @k: the registration, in @idx
 */
static __always_inline void kevent_index_del(struct kevent_index *idx,
					     struct kevent *k)
{
	/* Hashed, as kevent_unindex() checked: hlist_del_init() tests it. */
	__hlist_del(&k->index_node);
	INIT_HLIST_NODE(&k->index_node);
	idx->count--;
}

/*
 * limit.c: fs.kevent.max_user_kevents and fs.kevent.max_object_kevents.
 * What reads them is inline, always: every ADD and REMOVE does, and a
 * kernel optimised for size would call them.
 */
extern long kevent_max_user_kevents;
extern unsigned int kevent_max_object_kevents;

/**
 * kevent_charge - count one more registration of a user
 * @user: the user
 *
 * Return: 0, or -ENOSPC if @user has reached fs.kevent.max_user_kevents.
 */
static __always_inline int kevent_charge(struct user_struct *user)
{
	if (atomic_long_inc_return(&user->kevent_registrations) >
	    READ_ONCE(kevent_max_user_kevents)) {
		atomic_long_dec(&user->kevent_registrations);
		return -ENOSPC;
	}
	return 0;
}

/**
 * kevent_uncharge - count one registration of a user less
 * @user: the user
 */
static __always_inline void kevent_uncharge(struct user_struct *user)
{
	atomic_long_dec(&user->kevent_registrations);
}

/**
 * kevent_lookup - the registration a request names
 * @q: the queue, its mutex held
 * @uk: the request, whose type, id and user data are the key
 *
 * Inline, always: every REMOVE, MODIFY and READY looks its key up.
 *
 * Return: the live registration with @uk's key, or NULL.
 */
static __always_inline struct kevent *kevent_lookup(struct kevent_queue *q,
						    const struct ukevent *uk)
{
	struct kevent *k = kevent_index_find(&q->index, uk,
					     kevent_index_hash(uk));

	return k && !kevent_dead(k) ? k : NULL;
}

/* kevent.c: the life of a registration */
int kevent_register(struct kevent_queue *q, const struct kevent_callbacks *cb,
		    const struct ukevent *uk, const void *priv, size_t size,
		    struct kevent **kp);
void kevent_modify(struct kevent_queue *q, struct kevent *k,
		   const struct ukevent *uk);
void kevent_object_gone(struct kevent *k, int err);
void kevent_force_ready(struct kevent *k);
void kevent_kick(struct kevent_queue *q);
void kevent_wake_pollers(struct irq_work *work);
void kevent_report(struct kevent *k, struct ukevent *out);
void kevent_harvest(struct kevent_queue *q, struct kevent_sink *sink);
void __kevent_sink_finish(struct kevent_queue *q, struct kevent_sink *sink);
unsigned int kevent_count_ready(struct kevent_queue *q, unsigned int want,
				bool nested);
void kevent_remove(struct kevent_queue *q, struct kevent *k);
void kevent_remove_all(struct kevent_queue *q);
void kevent_cache_drain(struct kevent_queue *q);
void kevent_direct_reap(struct kevent_queue *q);

/**
 * kevent_sink_finish - the system call of @sink ends
 * @q: the queue
 * @sink: the sink
 *
 * The kevents it held go back on the ready list, to be rechecked unless
 * notified meanwhile, or for an edge-triggered one only if notified
 * meanwhile; the wakeup is passed on if events are left.
 *
 * Inline: most calls hold nothing and leave nothing ready, and an
 * out-of-line call would save and restore its registers to find that.
 */
static inline void kevent_sink_finish(struct kevent_queue *q,
				      struct kevent_sink *sink)
{
	/*
	 * Only this call adds to its held list, so one seen empty stays
	 * empty; an event queued meanwhile woke a waiter itself.
	 */
	if (!list_empty(&sink->held) || READ_ONCE(q->ready_num))
		__kevent_sink_finish(q, sink);
}

/* ctl.c */
long kevent_ctl(struct kevent_queue *q, unsigned int cmd, unsigned int num,
		struct ukevent __user *arg);

/* wait.c */
long kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr,
		       const struct __kernel_timespec __user *timeout,
		       struct ukevent __user *buf, unsigned int flags,
		       const u64 *expires);
long kevent_wait(int fd, unsigned int num, unsigned int old_uidx,
		 const struct __kernel_timespec __user *timeout,
		 unsigned int flags, const u64 *expires);

/* ring.c */

/**
 * kevent_ring_owned - may the caller use a queue's ring?
 * @q: the queue
 *
 * The ring is an address in the memory of the process that created the
 * queue: in any other address space (a child after fork(), a process
 * that received the descriptor, the creator after execve()) the same
 * address means something else, and the kernel must not write there.
 *
 * Return: true if @q has no ring or the caller is in its address space.
 */
static inline bool kevent_ring_owned(const struct kevent_queue *q)
{
	return !q->ring || q->mm == current->mm;
}

unsigned int kevent_ring_put(struct kevent_queue *q, const struct ukevent *out,
			     unsigned int n);
long kevent_commit(struct kevent_queue *q, unsigned int new_uidx,
		   unsigned int over);

/* direct.c: the ring that notifications fill */
int kevent_direct_create(struct kevent_queue *q);
void kevent_direct_destroy(struct kevent_queue *q);
void kevent_direct_refresh_locked(struct kevent_queue *q);
unsigned int kevent_direct_used(const struct kevent_queue *q);
bool kevent_direct_room_locked(struct kevent_queue *q);
bool kevent_direct_consumed_locked(struct kevent_queue *q, struct kevent *k);
struct ukevent *kevent_direct_slot_locked(struct kevent_queue *q);
void kevent_direct_publish_locked(struct kevent_queue *q, struct kevent *k);
void kevent_direct_forget_locked(struct kevent_queue *q, struct kevent *k);
void kevent_direct_undefer_locked(struct kevent_queue *q, struct kevent *k);
void kevent_direct_defer_locked(struct kevent_queue *q, struct kevent *k);
void kevent_direct_flags_locked(struct kevent_queue *q);
void kevent_direct_consume_locked(struct kevent_queue *q, unsigned int n);

#endif /* _KERNEL_KEVENT_KEVENT_H */
