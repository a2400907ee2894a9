/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rand.h - a small seeded random number generator for the stress and
 * fuzz tests (splitmix64): the same seed gives the same sequence in
 * 32-bit and 64-bit programs, and each thread keeps its own state.
 *
 *	struct rng r; rng_seed(&r, seed, stream);
 *	rng_next(&r)		64 random bits
 *	rng_below(&r, n)	0 .. n - 1 (0 if n is 0)
 *	rng_chance(&r, pct)	true with probability pct %
 *	rng_pick(&r, array)	one element of a static array
 *	seed_from_args(argc, argv, i)	argv[i] if given, else the clock
 */
#ifndef KEVENT_TESTSUITE_RAND_H
#define KEVENT_TESTSUITE_RAND_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Stream n of seed: threads and processes of one run differ. */
static inline void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	r->s = seed ^ (stream * 0xd1b54a32d192ed03ULL);
	rng_next(r);
}

static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rng_next(r) % n) : 0;
}

static inline int rng_chance(struct rng *r, unsigned int pct)
{
	return rng_below(r, 100) < pct;
}

#define rng_pick(r, a) ((a)[rng_below((r), sizeof(a) / sizeof((a)[0]))])

/* The seed: argv[i] (decimal or 0x hex) if present, else time and pid. */
static inline uint64_t seed_from_args(int argc, char **argv, int i)
{
	struct timespec t;

	if (argc > i)
		return strtoull(argv[i], NULL, 0);
	clock_gettime(CLOCK_REALTIME, &t);
	return ((uint64_t)t.tv_sec << 32) ^ (uint64_t)t.tv_nsec ^
	       ((uint64_t)getpid() << 16);
}

#endif /* KEVENT_TESTSUITE_RAND_H */
