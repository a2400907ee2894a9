/* SPDX-License-Identifier: MIT */
/*
 * ring_threads.c: two threads consuming one kevent ring.
 *
 * Creates a queue with a ring of SIZE slots (default 4) and two
 * periodic timers (2 and 3 ms), and starts two threads that each call
 * kevent_wait() on the queue and consume what is in the ring.  The
 * threads share the consumer index under a mutex: the thread that
 * holds it reads ring_kidx with an acquire load, copies out every
 * slot written since the committed index (whichever thread's call
 * wrote them), commits them, and handles its copies after it has let
 * the mutex go.  A thread sleeping in kevent_wait() is woken by the
 * other thread's commit, and, at the end, by KEVENT_CTL_READY with no
 * entries.  The program stops after NR events (default 1000) and
 * exits with EXIT_SUCCESS only if every event was one of its timers
 * and every commit freed exactly the slots it named.
 *
 * Illustrates kevent_wait(2) ("Consuming the ring") and
 * kevent_commit(2).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -pthread -Iinclude -Iinclude/uapi \
 *         -o ring_threads examples/ring_threads.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -pthread -o ring_threads ring_threads.c
 * Usage: ./ring_threads [NR [SIZE]]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kevent.h>

#define NTHREADS  2

static int fd;                  /* the queue */
static struct kevent_ring *ring;
static unsigned int size, nr;

/* The consumer side of the ring, shared by the threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int uidx;       /* committed index: first slot not
                                   committed */
static unsigned int over;       /* times uidx wrapped: ring_over */
static long long written;       /* what kevent_wait() calls returned */
static long long consumed;      /* slots consumed and committed */
static int done, bad;

/* Copy out and commit every slot written since uidx; return how many.
   Called with the lock held. */
static unsigned int
consume(struct ukevent *out)
{
    unsigned int kidx, n, i;

    /* Acquire: pairs with the kernel's barrier between writing the
       slots and storing ring_kidx, possibly in the other thread's
       call, which may not have returned yet. */
    kidx = __atomic_load_n(&ring->ring_kidx, __ATOMIC_ACQUIRE);
    n = (kidx + size - uidx) % size;

    /* ring_kidx == uidx: empty, or full.  The return values tell:
       the ring holds at least what the calls reported and nobody
       has consumed yet.  (A call that has not reported yet is
       counted later; its events may be taken before that.) */
    if (n == 0 && written - consumed >= size)
        n = size;
    if (n == 0)
        return 0;

    for (i = 0; i < n; i++)
        out[i] = ring->event[(uidx + i) % size];

    /* Free the slots: over is the wrap count of the new index. */
    if (uidx + n >= size)
        over++;
    if (kevent_commit(fd, (uidx + n) % size, over) != (int) n) {
        perror("kevent_commit");        /* all commits are ours */
        exit(EXIT_FAILURE);
    }
    uidx = (uidx + n) % size;
    consumed += n;
    return n;
}

static void *
consumer(void *arg)
{
    int ret;
    long id = (long) arg, events = 0, empty = 0;
    unsigned int n, i, old_uidx;
    struct __kernel_timespec timeout = { .tv_sec = 2 };
    struct ukevent *got;

    got = malloc(size * sizeof(*got));
    if (got == NULL) {
        perror("malloc");
        exit(EXIT_FAILURE);
    }

    for (;;) {
        pthread_mutex_lock(&lock);
        old_uidx = uidx;        /* the committed index, not ring_kidx */
        pthread_mutex_unlock(&lock);
        if (__atomic_load_n(&done, __ATOMIC_RELAXED))
            break;

        /* Sleeps only while the kernel's committed index is still
           old_uidx: a commit by the other thread ends the sleep. */
        ret = kevent_wait(fd, size, old_uidx, &timeout, 0);
        if (ret == -1) {
            perror("kevent_wait");
            exit(EXIT_FAILURE);
        }

        pthread_mutex_lock(&lock);
        written += ret;
        n = consume(got);
        if (consumed >= nr && !done) {
            __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
            /* Wake the other thread, wherever it sleeps. */
            if (kevent_ctl(fd, KEVENT_CTL_READY, 0, NULL) == -1) {
                perror("kevent_ctl");
                exit(EXIT_FAILURE);
            }
        }
        pthread_mutex_unlock(&lock);

        /* Handle the copies without the lock. */
        if (n == 0)
            empty++;
        for (i = 0; i < n; i++) {
            if (got[i].type != KEVENT_TIMER ||
                got[i].ret_flags != KEVENT_RET_DONE ||
                (got[i].ptr != 2 && got[i].ptr != 3))
                __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
        }
        events += n;
    }
    printf("thread %ld: %ld events, %ld wakeups without one\n", id,
           events, empty);
    free(got);
    return NULL;
}

int
main(int argc, char *argv[])
{
    long i;
    pthread_t thr[NTHREADS];
    struct ukevent uk[2];

    nr = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
    size = argc > 2 ? strtoul(argv[2], NULL, 0) : 4;
    if (argc > 3 || nr == 0 || size == 0 || size > 4096) {
        fprintf(stderr, "Usage: %s [NR [SIZE]]\n", argv[0]);
        exit(EXIT_FAILURE);
    }

    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    ring = malloc(sizeof(*ring) + size * sizeof(struct ukevent));
    if (ring == NULL) {
        perror("malloc");
        exit(EXIT_FAILURE);
    }
    fd = kevent_init(ring, size, KEVENT_INIT_CLOEXEC);
    if (fd == -1) {
        perror("kevent_init");
        exit(EXIT_FAILURE);
    }

    memset(uk, 0, sizeof(uk));
    for (i = 0; i < 2; i++) {
        uk[i].id.raw[1] = (2 + i) * 1000000;    /* 2, 3 ms */
        uk[i].type = KEVENT_TIMER;
        uk[i].event = KEVENT_TIMER_FIRED;
        uk[i].ptr = 2 + i;
    }
    if (kevent_ctl(fd, KEVENT_CTL_ADD, 2, uk) != 0) {
        fprintf(stderr, "kevent_ctl: an entry failed\n");
        exit(EXIT_FAILURE);
    }

    for (i = 0; i < NTHREADS; i++) {
        errno = pthread_create(&thr[i], NULL, consumer, (void *) i);
        if (errno != 0) {
            perror("pthread_create");
            exit(EXIT_FAILURE);
        }
    }
    for (i = 0; i < NTHREADS; i++)
        pthread_join(thr[i], NULL);

    printf("%lld events through a ring of %u slots, %u wraps: %s\n",
           consumed, size, over, bad ? "WRONG" : "as expected");
    if (ring->ring_over != over)
        bad = 1;                /* wrap count is wrong */
    close(fd);
    free(ring);
    exit(bad ? EXIT_FAILURE : EXIT_SUCCESS);
}
