// SPDX-License-Identifier: GPL-2.0
/*
 * A small HTTP/1.0 server on KEVENT_SOCKET: the listening socket is
 * watched for KEVENT_SOCKET_ACCEPT (level-triggered, so no connection is
 * left behind), each client for KEVENT_SOCKET_RECV until its request is
 * in, then, if the answer did not fit at once, for KEVENT_SOCKET_SEND.
 * Client registrations are one-shot: a client is never reported twice
 * for one readiness, and is added again only while there is more to do.
 * Every answer is the same short page.  The server exits with
 * EXIT_SUCCESS after serving NREQ requests (0: never), and with
 * EXIT_FAILURE on any error of its own or an unexpected event.
 *
 * Illustrates kevent_socket(7).
 *
 * Build: cc -static -O2 -Wall -I include/uapi -o evserver examples/evserver.c
 * Usage: ./evserver PORT NREQ
 *        wget -q -O - http://127.0.0.1:PORT/
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kevent.h>

#define MAX_FD		4096
#define MAX_EVENTS	64

static const char reply[] =
	"HTTP/1.0 200 OK\r\n"
	"Content-Type: text/plain\r\n"
	"Content-Length: 18\r\n"
	"\r\n"
	"Hello from kevent\n";

/* What the server knows of a client, by descriptor. */
static struct client {
	char req[1024];		/* the request so far */
	size_t len;		/* bytes in req */
	size_t sent;		/* bytes of reply sent */
} clients[MAX_FD];

static int kq;			/* the kevent queue */

static int kevent_init(struct kevent_ring *ring, unsigned int ring_size,
		       unsigned int flags)
{
	return syscall(__NR_kevent_init, ring, ring_size, flags);
}

static int kevent_ctl(int fd, unsigned int cmd, unsigned int num,
		      struct ukevent *arg)
{
	return syscall(__NR_kevent_ctl, fd, cmd, num, arg);
}

static int kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr,
			     void *timeout, struct ukevent *buf,
			     unsigned int flags)
{
	return syscall(__NR_kevent_get_events, fd, min_nr, max_nr, timeout,
		       buf, flags);
}

/*
 * Watch socket fd for event; 0, or -1 if it could not be added.  With
 * ALWAYS_QUEUE, a socket that is ready at once is queued like any other,
 * instead of being handed back by kevent_ctl().
 */
static int watch(int fd, unsigned int event, unsigned int req_flags)
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
			ret < 0 ? strerror(errno) : strerror(-(int)uk.ret_data[1]));
		return -1;
	}
	return 0;
}

/* Send what is left of the reply; 1 when all is sent, 0 if not, -1. */
static int send_reply(int fd)
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

/*
 * A client is ready: read its request or send its reply.  Return 1 when
 * a request was served, 0 if the client goes on, -1 if it was dropped.
 */
static int serve(int fd, unsigned int ready)
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
static int accept_all(int lfd)
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

int main(int argc, char *argv[])
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct ukevent ev[MAX_EVENTS];
	long served = 0, nreq;
	int lfd, one = 1, n, i, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s PORT NREQ\n", argv[0]);
		return EXIT_FAILURE;
	}
	addr.sin_port = htons(atoi(argv[1]));
	addr.sin_addr.s_addr = htonl(INADDR_ANY);
	nreq = atol(argv[2]);

	kq = kevent_init(NULL, 0, 0);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (kq < 0 || lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 128)) {
		perror("evserver");
		return EXIT_FAILURE;
	}
	/* Level-triggered: reported while connections wait to be accepted. */
	if (watch(lfd, KEVENT_SOCKET_ACCEPT, 0))
		return EXIT_FAILURE;

	while (!nreq || served < nreq) {
		n = kevent_get_events(kq, 1, MAX_EVENTS, NULL, ev, 0);
		if (n < 0) {
			perror("evserver: kevent_get_events");
			return EXIT_FAILURE;
		}
		for (i = 0; i < n; i++) {
			fd = (int)ev[i].ptr;
			if (ev[i].ret_flags & KEVENT_RET_BROKEN) {
				/* A client reset its connection: drop it. */
				fprintf(stderr, "evserver: fd %d: %s\n", fd,
					strerror(-(int)ev[i].ret_data[1]));
				if (fd == lfd)
					return EXIT_FAILURE;
				close(fd);
			} else if (fd == lfd) {
				if (accept_all(lfd)) {
					perror("evserver: accept");
					return EXIT_FAILURE;
				}
			} else if (serve(fd, ev[i].ret_data[0]) > 0) {
				served++;
			}
		}
	}
	printf("evserver: served %ld requests\n", served);
	return EXIT_SUCCESS;
}
