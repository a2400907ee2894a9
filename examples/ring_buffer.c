/* SPDX-License-Identifier: MIT */
/*
 * ring_buffer.c: consume events from a kevent ring with kevent_wait()
 * and kevent_commit().
 *
 * Creates a queue with a ring of SIZE slots (default 4) and two
 * periodic timers (5 and 7 ms).  The consumer loop lets kevent_wait()
 * move ready events into the ring, reads the slots from its own index
 * up to ring_kidx, and frees them with kevent_commit(), passing the
 * wrap count of the new index.  It stops after NR events (default
 * 100), having wrapped the ring many times, and exits with
 * EXIT_SUCCESS only if every index, event and wrap count was as
 * expected.
 *
 * Illustrates kevent_commit(2), kevent_wait(2) and kevent(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o ring_buffer examples/ring_buffer.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o ring_buffer ring_buffer.c
 * Usage: ./ring_buffer [NR [SIZE]]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kevent.h>

int
main(int argc, char *argv[])
{
    int fd, n;
    unsigned int nr = 100, size = 4, uidx = 0, over = 0, total = 0;
    unsigned int i, slot, new_uidx;
    struct __kernel_timespec timeout = { .tv_sec = 2 };
    struct kevent_ring *ring;
    struct ukevent uk[2], *e;

    if (argc > 1)
        nr = strtoul(argv[1], NULL, 0);
    if (argc > 2)
        size = strtoul(argv[2], NULL, 0);
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
        uk[i].id.raw[1] = (5 + 2 * i) * 1000000;    /* 5, 7 ms */
        uk[i].type = KEVENT_TIMER;
        uk[i].event = KEVENT_TIMER_FIRED;
        uk[i].ptr = 5 + 2 * i;
    }
    if (kevent_ctl(fd, KEVENT_CTL_ADD, 2, uk) != 0) {
        fprintf(stderr, "kevent_ctl: an entry failed\n");
        exit(EXIT_FAILURE);
    }

    while (total < nr) {
        /* uidx is the committed index: the call sleeps only while
           the kernel's committed index is still uidx. */
        n = kevent_wait(fd, size, uidx, &timeout, 0);
        if (n == -1) {
            perror("kevent_wait");
            exit(EXIT_FAILURE);
        }
        if (n == 0) {
            fprintf(stderr, "kevent_wait: no event in 2 s\n");
            exit(EXIT_FAILURE);
        }

        /* The only consumer: the n events are in the n slots from
           uidx on, and ring_kidx is just past them. */
        new_uidx = (uidx + n) % size;
        printf("kevent_wait: %d events in slots %u..%u, ring_kidx %u\n",
               n, uidx, (uidx + n - 1) % size, ring->ring_kidx);
        if (ring->ring_kidx != new_uidx)
            exit(EXIT_FAILURE);         /* kernel index is wrong */
        for (i = 0; i < (unsigned int) n; i++) {
            slot = (uidx + i) % size;
            e = &ring->event[slot];
            printf("  slot %u: timer %llu ms, %u expiries, at %u ms\n",
                   slot, (unsigned long long) e->ptr, e->ret_data[1],
                   e->ret_data[0]);
            if (e->type != KEVENT_TIMER ||
                e->ret_flags != KEVENT_RET_DONE ||
                (e->ptr != 5 && e->ptr != 7))
                exit(EXIT_FAILURE);     /* not our timer */
        }

        /* Free the slots; over counts the wraps of the committed
           index, including this commit's. */
        if (uidx + n >= size)
            over++;
        if (kevent_commit(fd, new_uidx, over) != n) {
            perror("kevent_commit");
            exit(EXIT_FAILURE);
        }
        if (ring->ring_over != over)
            exit(EXIT_FAILURE);         /* wrap count is wrong */
        uidx = new_uidx;
        total += n;
    }

    printf("%u events through a ring of %u slots, %u wraps\n", total,
           size, over);
    if (close(fd) == -1) {
        perror("close");
        exit(EXIT_FAILURE);
    }
    free(ring);
    exit(EXIT_SUCCESS);
}
