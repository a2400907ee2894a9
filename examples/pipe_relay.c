/* SPDX-License-Identifier: MIT */
/*
 * pipe_relay.c: a relay through a chain of pipes, driven by
 * KEVENT_PIPE readiness.
 *
 * A source writes NBYTES (default 1 MiB) of a known pattern into the
 * first of NPIPES pipes, each stage of the relay moves what it reads
 * from one pipe into the next, and a sink reads the last pipe and
 * checks every byte.  All the descriptors are nonblocking, in one
 * thread, and every pipe holds only one page, so that writers fill
 * them often.
 *
 * Each read end has an edge-triggered KEVENT_SOCKET_RECV registration:
 * its stage then reads until read() would block.  A stage whose write
 * end is full adds a one-shot KEVENT_SOCKET_SEND registration and
 * waits for it.  When a stage has read everything, it closes its
 * write end; the next stage's RECV registration is then reported
 * broken with EPIPE once that pipe is empty, and the end of the data
 * moves on.
 *
 * It exits with EXIT_SUCCESS only if the sink received every byte in
 * order and each pipe's RECV registration was reported broken with
 * EPIPE once.
 *
 * Illustrates kevent_pipe(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o pipe_relay examples/pipe_relay.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o pipe_relay pipe_relay.c
 * Usage: ./pipe_relay [NBYTES]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <kevent.h>

#define NPIPES  4
#define NSTAGES (NPIPES + 1)    /* source, NPIPES - 1 relays, sink */
#define CHUNK   3000            /* not a page: writes merge and split */

/* Stage s reads pipe s - 1 (the source makes its data instead) and
   writes pipe s (the sink checks its data instead). */
struct stage {
    int in, out;        /* descriptors, -1 for none or closed */
    char buf[CHUNK];
    size_t len, off;    /* bytes in buf, bytes of them written */
    int eof;            /* the input has ended */
    int armed;          /* a SEND registration is pending */
    int broken;         /* RECV reported broken with EPIPE */
};

static struct stage st[NSTAGES];
static unsigned long long made, checked, nbytes;
static int queue, errors;

static unsigned char
pattern(unsigned long long i)
{
    return (unsigned char) (i * 7 + i / 251);
}

/* Add a registration; 1 if it was ready at once (and not kept). */
static int
watch(int fd, __u32 event, __u32 req_flags, int s)
{
    struct ukevent uk;
    int n;

    memset(&uk, 0, sizeof(uk));
    uk.type = KEVENT_PIPE;
    uk.id.raw[0] = fd;
    uk.event = event;
    uk.req_flags = req_flags;
    uk.ptr = s;
    n = kevent_ctl(queue, KEVENT_CTL_ADD, 1, &uk);
    if (n == -1) {
        perror("kevent_ctl");
        exit(EXIT_FAILURE);
    }
    /* Entries that fail, or are ready at once, come back. */
    if (uk.ret_flags & KEVENT_RET_BROKEN) {
        fprintf(stderr, "stage %d: ADD: %s\n", s,
                strerror(-(int) uk.ret_data[1]));
        exit(EXIT_FAILURE);
    }
    return n;
}

/* Fill the stage's buffer from its input; 0 if it would block. */
static int
refill(struct stage *t)
{
    ssize_t n;

    if (t->in < 0) {            /* the source */
        for (t->len = 0; t->len < CHUNK && made < nbytes; t->len++)
            t->buf[t->len] = pattern(made++);
        t->off = 0;
        t->eof = !t->len;
        return 1;
    }
    n = read(t->in, t->buf, CHUNK);
    if (n < 0 && errno == EAGAIN)
        return 0;
    if (n < 0) {
        perror("read");
        exit(EXIT_FAILURE);
    }
    t->len = n;
    t->off = 0;
    t->eof = !n;
    return 1;
}

/* Move data through stage s until it must wait for an event. */
static void
pump(int s)
{
    struct stage *t = &st[s];
    ssize_t n;

    for (;;) {
        if (t->off == t->len) {
            if (t->eof || !refill(t))
                return;
            if (t->eof) {
                if (t->out >= 0)
                    close(t->out);  /* the next stage's EOF */
                t->out = -1;
                return;
            }
        }
        if (t->out < 0) {       /* the sink */
            for (; t->off < t->len; t->off++, checked++) {
                if ((unsigned char) t->buf[t->off] != pattern(checked))
                    errors++;
            }
            continue;
        }
        if (t->armed)
            return;
        n = write(t->out, t->buf + t->off, t->len - t->off);
        if (n < 0 && errno == EAGAIN) {
            /* Full: wait for room, once. */
            t->armed = !watch(t->out, KEVENT_SOCKET_SEND,
                              KEVENT_REQ_ONESHOT, s);
            if (t->armed)
                return;
            continue;
        }
        if (n < 0) {
            perror("write");
            exit(EXIT_FAILURE);
        }
        t->off += n;
    }
}

/* The sink has seen the end, and every pipe reported it. */
static int
finished(void)
{
    int s;

    for (s = 1; s < NSTAGES; s++) {
        if (!st[s].broken)
            return 0;
    }
    return st[NPIPES].eof;
}

int
main(int argc, char *argv[])
{
    int p[2], s, i, n;
    unsigned long recv = 0, send = 0;
    struct __kernel_timespec timeout = { .tv_sec = 5 };
    struct ukevent ev[16];

    nbytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 1 << 20;
    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    queue = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
    if (queue == -1) {
        perror("kevent_init");
        exit(EXIT_FAILURE);
    }
    st[0].in = -1;
    st[NPIPES].out = -1;
    for (s = 0; s < NPIPES; s++) {
        if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == -1 ||
            fcntl(p[1], F_SETPIPE_SZ, 4096) == -1) {    /* one page */
            perror("pipe2");
            exit(EXIT_FAILURE);
        }
        st[s].out = p[1];
        st[s + 1].in = p[0];
        watch(p[0], KEVENT_SOCKET_RECV, KEVENT_REQ_ET, s + 1);
    }

    pump(0);
    while (!finished()) {
        n = kevent_get_events(queue, 1, 16, &timeout, ev, 0);
        if (n == -1) {
            perror("kevent_get_events");
            exit(EXIT_FAILURE);
        }
        if (n == 0) {
            fprintf(stderr, "kevent_get_events: no event in 5 s\n");
            exit(EXIT_FAILURE);
        }
        for (i = 0; i < n; i++) {
            s = ev[i].ptr;
            if (ev[i].event == KEVENT_SOCKET_SEND) {
                st[s].armed = 0;
                send++;
            } else if (ev[i].ret_flags & KEVENT_RET_BROKEN) {
                /* No writer left, and the pipe is empty. */
                if ((int) ev[i].ret_data[1] == -EPIPE)
                    st[s].broken++;
            } else {
                recv++;
            }
            pump(s);
        }
    }

    printf("%llu bytes relayed through %d pipes: %lu RECV and "
           "%lu SEND events, %d bytes wrong\n",
           checked, NPIPES, recv, send, errors);
    for (s = 1; s < NSTAGES; s++) {
        if (st[s].broken != 1) {
            printf("pipe %d: RECV reported broken %d times\n", s - 1,
                   st[s].broken);
            errors++;
        }
    }
    exit(checked == nbytes && !errors ? EXIT_SUCCESS : EXIT_FAILURE);
}
