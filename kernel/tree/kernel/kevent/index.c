// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: the index of a queue's registrations by their key.
 *
 * The key of a registration is (type, id, user data).  The index is a
 * chained hash table that doubles when it holds twice as many
 * registrations as buckets, so that an ADD, a REMOVE or a MODIFY
 * compares its key with about two others whatever the size of the
 * queue, where a search tree takes a descent of log2(n) levels and a
 * rebalancing.  It keeps the size that the queue's largest count gave
 * it, eight bytes a bucket, until the queue is released; when a larger
 * table cannot be allocated, the chains grow longer instead.
 *
 * The queue's owner chooses every key, so one who makes keys collide
 * slows their own queue and nothing else.  Lookups, insertions and
 * removals, which every request makes, are inline (kevent.h).
 */

#include <linux/slab.h>

#include "kevent.h"

/**
 * kevent_index_init - an empty index
 * @idx: the index, in its queue
 */
void kevent_index_init(struct kevent_index *idx)
{
	unsigned int i;

	idx->bits = KEVENT_INDEX_MIN_BITS;
	idx->buckets = idx->first;
	idx->count = 0;
	for (i = 0; i < ARRAY_SIZE(idx->first); i++)
		INIT_HLIST_HEAD(&idx->first[i]);
}

/**
 * kevent_index_destroy - free an index's table
 * @idx: the index, empty
 */
void kevent_index_destroy(struct kevent_index *idx)
{
	if (idx->buckets != idx->first)
		kvfree(idx->buckets);
}

/**
 * kevent_index_grow - double an index's table
 * @idx: the index, under its queue's mutex
 *
 * For kevent_index_add().  If no larger table can be allocated, the
 * chains grow longer instead.
 */
void kevent_index_grow(struct kevent_index *idx)
{
	unsigned int bits = idx->bits + 1, i;
	struct hlist_head *buckets;
	struct hlist_node *next;
	struct kevent *k;

	buckets = kvmalloc_array(1UL << bits, sizeof(*buckets),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!buckets)
		return;
	for (i = 0; i < 1U << bits; i++)
		INIT_HLIST_HEAD(&buckets[i]);
	for (i = 0; i < 1U << idx->bits; i++)
		hlist_for_each_entry_safe(k, next, &idx->buckets[i], index_node)
			hlist_add_head(&k->index_node,
				       kevent_index_bucket(buckets, bits,
							   k->index_hash));
	kevent_index_destroy(idx);
	idx->buckets = buckets;
	idx->bits = bits;
}
