/* SPDX-License-Identifier: MIT */
/*
 * evserver.c: a small HTTP/1.0 server on KEVENT_SOCKET.
 *
 * The listening socket is watched for KEVENT_SOCKET_ACCEPT
 * (level-triggered, so no connection is left behind), each client for
 * KEVENT_SOCKET_RECV until its request is in, then, if the answer did
 * not fit at once, for KEVENT_SOCKET_SEND.  Client registrations are
 * one-shot: a client is never reported twice for one readiness, and is
 * added again only while there is more to do.  Every answer is the
 * same short page.  The server exits with EXIT_SUCCESS after serving
 * NREQ requests (0: never), and with EXIT_FAILURE on any error of its
 * own or an unexpected event.
 *
 * Illustrates kevent_socket(7).
 *
 * Build, from the top of the kevent tree:
 *     cc -Wall -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *         -o evserver examples/evserver.c
 * or, once "make install" has installed <kevent.h>:
 *     cc -Wall -D_GNU_SOURCE -o evserver evserver.c
 * Usage: ./evserver PORT NREQ
 *        wget -q -O - http://127.0.0.1:PORT/
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <kevent.h>

#define MAX_FD      4096
#define MAX_EVENTS  64

static const char reply[] =
    "HTTP/1.0 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 18\r\n"
    "\r\n"
    "Hello from kevent\n";

/* What the server knows of a client, by descriptor. */
static struct client {
    char req[1024];     /* the request so far */
    size_t len;         /* bytes in req */
    size_t sent;        /* bytes of reply sent */
} clients[MAX_FD];

static int kq;          /* the kevent queue */

/* Watch socket fd for event; 0, or -1 if it could not be added.
   With ALWAYS_QUEUE, a socket that is ready at once is queued like
   any other, instead of being handed back by kevent_ctl(): an entry
   that comes back is one that failed. */
static int
watch(int fd, unsigned int event, unsigned int req_flags)
{
    struct ukevent uk;
    int ret;

    memset(&uk, 0, sizeof(uk));
    uk.type = KEVENT_SOCKET;
    uk.id.raw[0] = fd;
    uk.event = event;
    uk.req_flags = req_flags | KEVENT_REQ_ALWAYS_QUEUE;
    uk.ptr = fd;
    ret = kevent_ctl(kq, KEVENT_CTL_ADD, 1, &uk);
    if (ret != 0) {
        fprintf(stderr, "evserver: add fd %d: %s\n", fd,
                ret == -1 ? strerror(errno)
                : strerror(-(int) uk.ret_data[1]));
        return -1;
    }
    return 0;
}

/* Send what is left of the reply: 1 when all is sent, 0 when the
   socket is full, -1 on error. */
static int
send_reply(int fd)
{
    struct client *c = &clients[fd];
    ssize_t n;

    while (c->sent < sizeof(reply) - 1) {
        n = send(fd, reply + c->sent, sizeof(reply) - 1 - c->sent,
                 MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN ? 0 : -1;
        c->sent += n;
    }
    return 1;
}

/* A client is ready: read its request or send its reply.  Return 1
   when a request was served, 0 if the client goes on, -1 if it was
   dropped. */
static int
serve(int fd, unsigned int ready)
{
    struct client *c = &clients[fd];
    ssize_t n;
    int done;

    if (ready & KEVENT_SOCKET_RECV) {
        n = recv(fd, c->req + c->len, sizeof(c->req) - 1 - c->len,
                 MSG_DONTWAIT);
        if (n <= 0 && !(n < 0 && errno == EAGAIN))
            goto drop;
        if (n > 0)
            c->len += n;
        c->req[c->len] = '\0';
        if (!strstr(c->req, "\r\n\r\n")) {
            if (c->len == sizeof(c->req) - 1)
                goto drop;
            if (watch(fd, KEVENT_SOCKET_RECV, KEVENT_REQ_ONESHOT))
                goto drop;
            return 0;
        }
    }
    done = send_reply(fd);
    if (done < 0)
        goto drop;
    if (!done) {
        if (watch(fd, KEVENT_SOCKET_SEND, KEVENT_REQ_ONESHOT))
            goto drop;
        return 0;
    }
    close(fd);
    return 1;
drop:
    close(fd);
    return -1;
}

/* Accept every waiting connection and watch it for its request. */
static int
accept_all(int lfd)
{
    int fd;

    for (;;) {
        fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return errno == EAGAIN ? 0 : -1;
        if (fd >= MAX_FD) {
            close(fd);
            continue;
        }
        memset(&clients[fd], 0, sizeof(clients[fd]));
        if (watch(fd, KEVENT_SOCKET_RECV, KEVENT_REQ_ONESHOT))
            close(fd);
    }
}

int
main(int argc, char *argv[])
{
    int lfd, one = 1, n, i, fd, err;
    long served = 0, nreq;
    struct sockaddr_in addr = { .sin_family = AF_INET };
    struct ukevent ev[MAX_EVENTS];

    if (argc != 3) {
        fprintf(stderr, "Usage: %s PORT NREQ\n", argv[0]);
        exit(EXIT_FAILURE);
    }
    addr.sin_port = htons(atoi(argv[1]));
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    nreq = atol(argv[2]);

    if (kevent_probe(NULL) == -1) {
        perror("kevent_probe");
        exit(EXIT_FAILURE);
    }
    kq = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                 0);
    if (kq == -1 || lfd == -1 ||
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
                   sizeof(one)) == -1 ||
        bind(lfd, (struct sockaddr *) &addr, sizeof(addr)) == -1 ||
        listen(lfd, 128) == -1) {
        perror("evserver");
        exit(EXIT_FAILURE);
    }
    /* Level-triggered: reported while connections wait. */
    if (watch(lfd, KEVENT_SOCKET_ACCEPT, 0) == -1)
        exit(EXIT_FAILURE);

    while (nreq == 0 || served < nreq) {
        n = kevent_get_events(kq, 1, MAX_EVENTS, NULL, ev, 0);
        if (n == -1) {
            perror("evserver: kevent_get_events");
            exit(EXIT_FAILURE);
        }
        for (i = 0; i < n; i++) {
            fd = (int) ev[i].ptr;
            if (ev[i].ret_flags & KEVENT_RET_BROKEN) {
                /* Reported once, and removed.  -EBADF: the socket
                   is closed already; else it is still open (a
                   reset, for example): close it. */
                err = -(int) ev[i].ret_data[1];
                fprintf(stderr, "evserver: fd %d: %s\n", fd,
                        strerror(err));
                if (fd == lfd)
                    exit(EXIT_FAILURE);
                if (err != EBADF)
                    close(fd);
            } else if (fd == lfd) {
                if (accept_all(lfd) == -1) {
                    perror("evserver: accept");
                    exit(EXIT_FAILURE);
                }
            } else if (serve(fd, ev[i].ret_data[0]) > 0) {
                served++;
            }
        }
    }
    printf("evserver: served %ld requests\n", served);
    exit(EXIT_SUCCESS);
}
