/* SPDX-License-Identifier: MIT */
/*
 * direct_ring.c: the events of many pipes, taken from a ring that the
 * kernel fills as they happen.
 *
 * Creates a queue with KEVENT_INIT_DIRECT and a ring of 64 slots in
 * pages of its own (mmap(), KEVENT_DIRECT_RING_BYTES()), and adds an
 * edge-triggered KEVENT_PIPE registration for the read end of each of
 * 96 pipes.  Each of ROUNDS rounds (default 1000) writes one byte into
 * K of the pipes, K from 1 to 96, and then consumes the ring with the
 * loop of kevent_wait(2): it reads the slots up to ktail, reads each
 * reported pipe until EAGAIN, stores uhead, and calls kevent_wait()
 * only when the ring is empty or KEVENT_RING_F_PENDING is set.  Each
 * write() puts the report of its pipe into the ring itself; in a round
 * of more than 64 pipes, the reports that find the ring full wait in
 * the kernel, and kevent_wait() writes them once there is room.
 *
 * It exits with EXIT_SUCCESS only if every round reported each pipe
 * it wrote exactly once and no other, and every byte written was
 * read.
 *
 * Illustrates kevent_wait(2) ("The kernel-filled ring") and
 * KEVENT_INIT_DIRECT(2const).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o direct_ring examples/direct_ring.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o direct_ring direct_ring.c
 * Usage: ./direct_ring [ROUNDS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <kevent.h>

#define RING_SIZE  64           /* slots: a power of two */
#define NPIPES     96           /* more than the slots, so that some
                                   rounds fill the ring */

static int kfd;                 /* the queue */
static struct kevent_ring *ring;
static struct kevent_ring_tail *t;
static __u32 head;              /* slots consumed: what uhead holds */
static int rfd[NPIPES], wfd[NPIPES];
static unsigned int written[NPIPES];   /* round of the last write */
static unsigned int reported[NPIPES];  /* round of the last report */
static unsigned long long bytes_in, bytes_out, events, waits;

/* One report: check it, and read its pipe until EAGAIN. */
static void
handle(const struct ukevent *ev, unsigned int round)
{
    unsigned int i = ev->ptr;
    char buf[16];
    ssize_t len;
    long got = 0;

    if (ev->type != KEVENT_PIPE || ev->ret_flags != KEVENT_RET_DONE ||
        ev->ptr >= NPIPES || ev->id.raw[0] != (__u32) rfd[i]) {
        fprintf(stderr, "round %u: a report that is not ours\n", round);
        exit(EXIT_FAILURE);
    }
    if (written[i] != round || reported[i] == round) {
        fprintf(stderr, "round %u: pipe %u reported %s\n", round, i,
                written[i] != round ? "but not written" : "twice");
        exit(EXIT_FAILURE);
    }
    reported[i] = round;

    while ((len = read(rfd[i], buf, sizeof(buf))) > 0)
        got += len;
    if (len == -1 && errno != EAGAIN) {
        perror("read");
        exit(EXIT_FAILURE);
    }
    if (got != 1) {
        fprintf(stderr, "round %u: pipe %u held %ld bytes, not 1\n",
                round, i, got);
        exit(EXIT_FAILURE);
    }
    bytes_out += got;
    events++;
}

/* The loop of kevent_wait(2), "The kernel-filled ring", until the
   round has had all its reports: no system call while the ring holds
   events. */
static void
consume(unsigned int round, unsigned long long want)
{
    struct __kernel_timespec timeout = { .tv_sec = 5 };
    __u32 tail;

    for (;;) {
        /* Acquire: the slots below tail are written. */
        tail = __atomic_load_n(&t->ktail, __ATOMIC_ACQUIRE);
        while (head != tail)
            handle(&ring->event[head++ & (RING_SIZE - 1)], round);
        /* Release: the reads of the slots are over before the
           kernel may write them again. */
        __atomic_store_n(&t->uhead, head, __ATOMIC_RELEASE);
        if (events == want)
            return;

        if (__atomic_load_n(&t->ktail, __ATOMIC_ACQUIRE) == head ||
            (__atomic_load_n(&t->flags, __ATOMIC_RELAXED) &
             KEVENT_RING_F_PENDING)) {
            /* The page's loop waits without a timeout; this one
               fails rather than wait for a report that was lost. */
            waits++;
            if (kevent_wait(kfd, RING_SIZE, head, &timeout, 0) == -1) {
                perror("kevent_wait");
                exit(EXIT_FAILURE);
            }
            if (__atomic_load_n(&t->ktail, __ATOMIC_ACQUIRE) == head) {
                fprintf(stderr, "round %u: %llu reports missing\n",
                        round, want - events);
                exit(EXIT_FAILURE);
            }
        }
    }
}

/* A small PRNG, so that every run writes the same pipes. */
static unsigned int
next(void)
{
    static unsigned int x = 2463534242U;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

int
main(int argc, char *argv[])
{
    int p[2];
    unsigned int rounds, round, k, i, j, tmp, full = 0;
    unsigned int order[NPIPES];
    size_t bytes = KEVENT_DIRECT_RING_BYTES(RING_SIZE);
    struct __kernel_timespec zero = { 0 };
    struct ukevent uk;

    rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
    if (argc > 2 || rounds == 0) {
        fprintf(stderr, "Usage: %s [ROUNDS]\n", argv[0]);
        exit(EXIT_FAILURE);
    }

    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    /* Pages of its own: the kernel pins every page the ring spans. */
    ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ring == MAP_FAILED) {
        perror("mmap");
        exit(EXIT_FAILURE);
    }
    kfd = kevent_init(ring, RING_SIZE,
                      KEVENT_INIT_DIRECT | KEVENT_INIT_CLOEXEC);
    if (kfd == -1) {
        perror("kevent_init");
        exit(EXIT_FAILURE);
    }
    t = kevent_ring_tail(ring, RING_SIZE);

    for (i = 0; i < NPIPES; i++) {
        if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == -1) {
            perror("pipe2");
            exit(EXIT_FAILURE);
        }
        rfd[i] = p[0];
        wfd[i] = p[1];
        order[i] = i;

        /* Edge-triggered: one report per write into an empty pipe,
           which the write itself puts into the ring.  With
           ALWAYS_QUEUE, an entry handed back is an error. */
        memset(&uk, 0, sizeof(uk));
        uk.type = KEVENT_PIPE;
        uk.id.raw[0] = rfd[i];
        uk.event = KEVENT_SOCKET_RECV;
        uk.req_flags = KEVENT_REQ_ET | KEVENT_REQ_ALWAYS_QUEUE;
        uk.ptr = i;
        if (kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) != 0) {
            fprintf(stderr, "kevent_ctl: pipe %u not added\n", i);
            exit(EXIT_FAILURE);
        }
    }

    for (round = 1; round <= rounds; round++) {
        /* K distinct pipes: the first K of a shuffled order. */
        k = 1 + next() % NPIPES;
        for (i = 0; i < k; i++) {
            j = i + next() % (NPIPES - i);
            tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
            written[order[i]] = round;
            if (write(wfd[order[i]], "x", 1) != 1) {
                perror("write");
                exit(EXIT_FAILURE);
            }
            bytes_in++;
        }
        if (k > RING_SIZE)
            full++;
        consume(round, bytes_in);
    }

    /* Nothing may be left: a last call writes whatever still waits in
       the kernel, and the ring must stay empty. */
    if (kevent_wait(kfd, RING_SIZE, head, &zero, 0) != 0 ||
        __atomic_load_n(&t->ktail, __ATOMIC_ACQUIRE) != head ||
        (__atomic_load_n(&t->flags, __ATOMIC_RELAXED) &
         KEVENT_RING_F_PENDING)) {
        fprintf(stderr, "a report is left after the last round\n");
        exit(EXIT_FAILURE);
    }

    if (bytes_out != bytes_in) {
        fprintf(stderr, "%llu bytes written, %llu read\n", bytes_in,
                bytes_out);
        exit(EXIT_FAILURE);
    }
    printf("%llu events, %u rounds (%u fill the ring), "
           "%llu kevent_wait calls\n", events, rounds, full, waits);
    close(kfd);
    munmap(ring, bytes);
    exit(EXIT_SUCCESS);
}
