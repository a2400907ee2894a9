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
 * slows their own queue and nothing else.
 */

#include <linux/slab.h>

#include "kevent.h"

static bool kevent_key_equal(const struct ukevent *a, const struct ukevent *b)
{
	return a->type == b->type && a->id.raw_u64 == b->id.raw_u64 &&
	       a->ptr == b->ptr;
}

/*
 * The top @bits bits of @hash: the hash is kept with each registration
 * (&kevent.index_hash), so that a table that doubles moves its
 * registrations without hashing their keys again.
 */
static struct hlist_head *kevent_index_bucket(struct hlist_head *buckets,
					      unsigned int bits, u32 hash)
{
	return &buckets[hash >> (32 - bits)];
}

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
 * kevent_index_find - the registration with a key
 * @idx: the index, under its queue's mutex
 * @uk: a request, whose type, id and user data are the key
 * @hash: kevent_index_hash() of @uk
 *
 * Return: the registration in @idx with @uk's key, dead or alive, or
 * NULL.
 */
struct kevent *kevent_index_find(struct kevent_index *idx,
				 const struct ukevent *uk, u32 hash)
{
	struct kevent *k;

	hlist_for_each_entry(k, kevent_index_bucket(idx->buckets, idx->bits,
						    hash), index_node)
		if (k->index_hash == hash && kevent_key_equal(&k->uk, uk))
			return k;
	return NULL;
}

static void kevent_index_grow(struct kevent_index *idx)
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

/**
 * kevent_index_add - put a registration in an index
 * @idx: the index, under its queue's mutex
 * @k: the registration, whose key is in none of @idx's
 * @hash: kevent_index_hash() of @k's key
 */
void kevent_index_add(struct kevent_index *idx, struct kevent *k, u32 hash)
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
void kevent_index_del(struct kevent_index *idx, struct kevent *k)
{
	hlist_del_init(&k->index_node);
	idx->count--;
}
