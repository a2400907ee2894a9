// SPDX-License-Identifier: MIT
/*
 * Workload 4: a small keep-alive HTTP/1.1 server, one thread, with five
 * back ends built from the same code: kevent (KEVENT_SOCKET) three ways,
 * its ring (kevent_wait() + kevent_commit()), kevent_get_events() and
 * its direct ring (KEVENT_INIT_DIRECT); epoll; and io_uring multishot
 * poll.
 * Each back end is used as its users would: kevent and io_uring gather
 * the registrations of newly accepted connections and hand them to the
 * kernel in one call before the next wait (kevent_ctl() with every new
 * entry, one io_uring_enter() for the SQEs); epoll makes one epoll_ctl()
 * per connection, which is all it has.  Connections are edge-triggered
 * everywhere (KEVENT_REQ_ET, EPOLLET, multishot poll): each event is
 * read until EAGAIN.  The listening socket is level-triggered where the
 * mechanism has the choice.
 *
 *   kbench httpd -b ring|getev|direct|epoll|uring [-p PORT] [-n NREQ]
 *
 * serves until SIGTERM or SIGINT (or NREQ requests), then prints
 * "httpd: served=N accepted=N stalls=N" and exits 0.
 *
 *   kbench [-r REPS] httpc [-p PORT] [-c CONNS] [-n REQS] [-C SERVER]
 *
 * is a small keep-alive client that checks every response, for the
 * smoke run of make check, where wrk is not installed, and, with -C,
 * for the counted bench (see wl_httpc()).
 */
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>

#include "kbench.h"

#define MAX_CONN	70000
#define RING_SIZE	4096
#define REQ_MAX		2048
#define LISTEN_TOKEN	0xffffffffULL

static const char response[] =
	"HTTP/1.1 200 OK\r\n"
	"Content-Type: text/plain\r\n"
	"Content-Length: 13\r\n"
	"\r\n"
	"Hello, world\n";

struct conn {
	uint32_t gen;
	int open;
	size_t len;
	char buf[REQ_MAX];
};

static struct conn *conns;
static int listen_fd;
static volatile sig_atomic_t stop;
static unsigned long served, accepted, stalls;

/* A back end: watch a descriptor, forget it, wait for tokens. */
struct backend {
	const char *name;
	void (*init)(void);
	void (*watch)(int fd, uint64_t token, int listener);
	void (*unwatch)(int fd, uint64_t token);
	int (*wait)(uint64_t *tokens, int max);
};

/*
 * kevent: the registrations are the same for its three ways of taking
 * events, the ring (kevent_wait() + kevent_commit()), kevent_get_events()
 * and the direct ring.
 */
static int kq;
static struct kevent_ring *kring;
static unsigned int kuidx, kover;
static struct ukevent kpend[1024];
static int nkpend;

static void kq_init(struct kevent_ring *ring, unsigned int flags)
{
	kring = ring;
	kq = kevent_init(ring, ring ? RING_SIZE : 0,
			 KEVENT_INIT_CLOEXEC | flags);
	if (kq < 0)
		die("kevent_init: %s", strerror(errno));
}

static void ring_init(void)
{
	kq_init(xcalloc(1, sizeof(*kring) + RING_SIZE * sizeof(struct ukevent)),
		0);
}

static void getev_init(void)
{
	kq_init(NULL, 0);
}

static void direct_init(void)
{
	struct kevent_ring *ring;

	if (posix_memalign((void **)&ring, 64,
			   KEVENT_DIRECT_RING_BYTES(RING_SIZE)))
		die("posix_memalign: out of memory");
	kq_init(ring, KEVENT_INIT_DIRECT);
}

static void kq_flush(void)
{
	int ret;

	if (!nkpend)
		return;
	ret = kevent_ctl(kq, KEVENT_CTL_ADD, nkpend, kpend);
	if (ret != 0)
		die("httpd: KEVENT_CTL_ADD of %d: %d back (%s)", nkpend, ret,
		    ret < 0 ? strerror(errno) :
		    strerror(-(int)kpend[0].ret_data[1]));
	nkpend = 0;
}

static void kq_watch(int fd, uint64_t token, int listener)
{
	struct ukevent *uk;

	if (nkpend == (int)(sizeof(kpend) / sizeof(kpend[0])))
		kq_flush();
	uk = &kpend[nkpend++];
	memset(uk, 0, sizeof(*uk));
	uk->type = KEVENT_SOCKET;
	uk->id.raw[0] = fd;
	uk->event = listener ? KEVENT_SOCKET_ACCEPT : KEVENT_SOCKET_RECV;
	uk->req_flags = KEVENT_REQ_ALWAYS_QUEUE |
			(listener ? 0 : KEVENT_REQ_ET);
	uk->ptr = token;
}

static void kq_unwatch(int fd, uint64_t token)
{
	struct ukevent uk;

	kq_flush();
	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_SOCKET;
	uk.id.raw[0] = fd;
	uk.ptr = token;
	/* ENOENT: reported broken, and removed, already. */
	if (kevent_ctl(kq, KEVENT_CTL_REMOVE, 1, &uk) != 1)
		die("httpd: KEVENT_CTL_REMOVE: %s", strerror(errno));
}

static int ring_wait(uint64_t *tokens, int max)
{
	unsigned int slot, over;
	int n, i, k = 0;

	kq_flush();
	n = kevent_wait(kq, max < RING_SIZE ? max : RING_SIZE, kuidx, NULL, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < n; i++) {
		struct ukevent *uk = &kring->event[(kuidx + i) % RING_SIZE];

		/* A broken connection is closed, and read until then. */
		tokens[k++] = uk->ptr;
	}
	over = kover + (kuidx + n >= RING_SIZE);
	slot = (kuidx + n) % RING_SIZE;
	if (n && kevent_commit(kq, slot, over) != n)
		die("httpd: kevent_commit: %s", strerror(errno));
	kuidx = slot;
	kover = over;
	return k;
}

static int getev_wait(uint64_t *tokens, int max)
{
	static struct ukevent ev[1024];
	int n, i;

	kq_flush();
	n = kevent_get_events(kq, 1, max < 1024 ? max : 1024, NULL, ev, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < n; i++)
		tokens[i] = ev[i].ptr;
	return n;
}

/*
 * The kernel writes the reports into the ring as the sockets notify;
 * the server enters it only to sleep on an empty ring, or for the
 * reports that only kevent_wait() writes (a broken connection's).
 */
static int direct_wait(uint64_t *tokens, int max)
{
	struct kevent_ring_tail *t = kevent_ring_tail(kring, RING_SIZE);
	static struct ukevent ev[1024];
	unsigned int n, i;

	kq_flush();
	if (__atomic_load_n(&t->ktail, __ATOMIC_ACQUIRE) == t->uhead ||
	    (__atomic_load_n(&t->flags, __ATOMIC_RELAXED) &
	     KEVENT_RING_F_PENDING)) {
		if (kevent_wait(kq, RING_SIZE, t->uhead, NULL, 0) < 0)
			return errno == EINTR ? 0 : -1;
	}
	n = kevent_ring_take(kring, RING_SIZE, ev, max < 1024 ? max : 1024);
	for (i = 0; i < n; i++)
		tokens[i] = ev[i].ptr;
	return n;
}

/* epoll */
static int epfd;
static struct epoll_event epev[1024];

static void epoll_init(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1: %s", strerror(errno));
}

static void epoll_watch(int fd, uint64_t token, int listener)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (listener ? 0 : EPOLLET),
		.data.u64 = token,
	};

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		die("httpd: epoll_ctl: %s", strerror(errno));
}

static void epoll_unwatch(int fd, uint64_t token)
{
	/* close() takes it out: the descriptor is not shared. */
	(void)fd;
	(void)token;
}

static int epoll_wait_tokens(uint64_t *tokens, int max)
{
	int n, i;

	n = epoll_wait(epfd, epev, max < 1024 ? max : 1024, -1);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < n; i++)
		tokens[i] = epev[i].data.u64;
	return n;
}

/* io_uring */
static struct io_uring uring;

#define URING_IGNORE	(LISTEN_TOKEN - 1)

static void uring_init(void)
{
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
		  IORING_SETUP_CQSIZE;
	p.cq_entries = 4 * RING_SIZE;
	ret = io_uring_queue_init_params(1024, &uring, &p);
	if (ret)
		die("io_uring_queue_init_params: %s", strerror(-ret));
}

static struct io_uring_sqe *uring_sqe(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&uring);

	if (!sqe) {
		io_uring_submit(&uring);
		sqe = io_uring_get_sqe(&uring);
		if (!sqe)
			die("io_uring: no SQE");
	}
	return sqe;
}

static void uring_watch(int fd, uint64_t token, int listener)
{
	struct io_uring_sqe *sqe = uring_sqe();

	(void)listener;
	io_uring_prep_poll_multishot(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, token);
}

static void uring_unwatch(int fd, uint64_t token)
{
	struct io_uring_sqe *sqe = uring_sqe();

	/* The poll holds the file: it must go, at the next submit. */
	(void)fd;
	io_uring_prep_poll_remove(sqe, token);
	io_uring_sqe_set_data64(sqe, URING_IGNORE);
}

static int uring_wait(uint64_t *tokens, int max)
{
	struct io_uring_cqe *cqe;
	unsigned int head;
	int ret, n = 0, k = 0;

	ret = io_uring_submit_and_wait(&uring, 1);
	if (ret < 0)
		return ret == -EINTR ? 0 : -1;
	io_uring_for_each_cqe(&uring, head, cqe) {
		if (n == max)
			break;
		n++;
		/* A POLL_REMOVE, or the poll it ended. */
		if (cqe->user_data == URING_IGNORE || cqe->res == -ECANCELED)
			continue;
		if (cqe->res < 0)
			die("httpd: io_uring completion %llu: %s",
			    (unsigned long long)cqe->user_data,
			    strerror(-cqe->res));
		tokens[k++] = cqe->user_data;
		if (!(cqe->flags & IORING_CQE_F_MORE)) {
			/* The multishot poll ended (CQ overflow): again. */
			uint64_t t = cqe->user_data;

			uring_watch(t == LISTEN_TOKEN ? listen_fd :
				    (int)(t & 0xffffffff), t, t == LISTEN_TOKEN);
		}
	}
	io_uring_cq_advance(&uring, n);
	return k;
}

static const struct backend backends[] = {
	{ "ring", ring_init, kq_watch, kq_unwatch, ring_wait },
	{ "getev", getev_init, kq_watch, kq_unwatch, getev_wait },
	{ "direct", direct_init, kq_watch, kq_unwatch, direct_wait },
	{ "epoll", epoll_init, epoll_watch, epoll_unwatch, epoll_wait_tokens },
	{ "uring", uring_init, uring_watch, uring_unwatch, uring_wait },
};

static const struct backend *be;

static void close_conn(int fd)
{
	struct conn *c = &conns[fd];

	be->unwatch(fd, ((uint64_t)c->gen << 32) | (uint32_t)fd);
	c->open = 0;
	close(fd);
}

/* Send all of buf, waiting for room if need be (counted in stalls). */
static int send_all(int fd, const char *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN) {
			stalls++;
			if (poll(&pfd, 1, 5000) <= 0)
				return -1;
			continue;
		}
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

static char out[64 * sizeof(response)];

/* Read what the client sent, answer every complete request. */
static void serve(int fd)
{
	struct conn *c = &conns[fd];
	size_t olen, used;
	ssize_t n;
	char *end;

	for (;;) {
		n = recv(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_conn(fd);
			return;
		}
		c->len += n;
		c->buf[c->len] = '\0';
		olen = 0;
		used = 0;
		while ((end = strstr(c->buf + used, "\r\n\r\n"))) {
			used = end + 4 - c->buf;
			if (olen + sizeof(response) > sizeof(out)) {
				if (send_all(fd, out, olen)) {
					close_conn(fd);
					return;
				}
				olen = 0;
			}
			memcpy(out + olen, response, sizeof(response) - 1);
			olen += sizeof(response) - 1;
			served++;
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
		if (c->len == sizeof(c->buf) - 1) {
			close_conn(fd);
			return;
		}
		if (olen && send_all(fd, out, olen)) {
			close_conn(fd);
			return;
		}
	}
}

static void accept_all(int lfd)
{
	int fd, one = 1;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != ECONNABORTED)
				die("httpd: accept: %s", strerror(errno));
			return;
		}
		if (fd >= MAX_CONN)
			die("httpd: descriptor %d: too many connections", fd);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		accepted++;
		conns[fd].gen++;
		conns[fd].open = 1;
		conns[fd].len = 0;
		be->watch(fd, ((uint64_t)conns[fd].gen << 32) | (uint32_t)fd, 0);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int wl_httpd(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct sigaction sa = { .sa_handler = on_signal };
	int port = 8080, lfd, one = 1, ch, n, i, fd;
	unsigned long nreq = 0;
	uint64_t tokens[1024];
	const char *name = "ring";

	while ((ch = getopt(argc, argv, "b:p:n:")) != -1) {
		switch (ch) {
		case 'b': name = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': nreq = strtoul(optarg, NULL, 0); break;
		default: die("usage: httpd -b ring|getev|direct|epoll|uring "
			     "[-p PORT] [-n NREQ]");
		}
	}
	for (i = 0; i < (int)(sizeof(backends) / sizeof(backends[0])); i++)
		if (!strcmp(backends[i].name, name))
			be = &backends[i];
	if (!be)
		die("httpd: no back end %s", name);
	/* As many as it can have: accept() fails beyond. */
	try_nofile(MAX_CONN);
	conns = xcalloc(MAX_CONN, sizeof(*conns));
	/* No SA_RESTART: the wait returns with EINTR. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	addr.sin_port = htons(port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 4096))
		die("httpd: listen on %d: %s", port, strerror(errno));
	listen_fd = lfd;
	be->init();
	be->watch(lfd, LISTEN_TOKEN, 1);
	printf("httpd: %s listening on %d\n", be->name, port);
	fflush(stdout);

	while (!stop && (!nreq || served < nreq)) {
		n = be->wait(tokens, 1024);
		if (n < 0)
			die("httpd: %s wait: %s", be->name, strerror(errno));
		for (i = 0; i < n; i++) {
			if (tokens[i] == LISTEN_TOKEN) {
				accept_all(lfd);
				continue;
			}
			if (tokens[i] == URING_IGNORE)
				continue;
			fd = (int)(tokens[i] & 0xffffffff);
			/* A report about a connection closed since. */
			if (fd < 0 || fd >= MAX_CONN || !conns[fd].open ||
			    conns[fd].gen != (uint32_t)(tokens[i] >> 32))
				continue;
			serve(fd);
		}
	}
	printf("httpd: served=%lu accepted=%lu stalls=%lu\n", served,
	       accepted, stalls);
	fflush(stdout);
	return 0;
}

/*
 * @nreq requests on the @nconn connections, one on each at a time, each
 * response read and checked.
 */
static void exchange(const int *fd, int nconn, int nreq)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	char buf[sizeof(response) + 16];
	int i, done = 0;

	while (done < nreq) {
		int batch = nreq - done < nconn ? nreq - done : nconn;

		for (i = 0; i < batch; i++)
			if (write(fd[i], req, sizeof(req) - 1) !=
			    sizeof(req) - 1)
				fail("httpc: write: %s", strerror(errno));
		for (i = 0; i < batch; i++) {
			size_t got = 0;
			ssize_t n;

			while (got < sizeof(response) - 1) {
				n = read(fd[i], buf + got,
					 sizeof(response) - 1 - got);
				if (n <= 0)
					fail("httpc: response %d: %s", done + i,
					     n ? strerror(errno) : "closed");
				got += n;
			}
			if (memcmp(buf, response, sizeof(response) - 1))
				fail("httpc: response %d is not the page",
				     done + i);
		}
		done += batch;
	}
}

/*
 * The small client: C connections, REQS requests, for the smoke run of
 * make check, where wrk is not installed, and for the counted bench
 * (-C SERVER): one request on each connection first, so that the server
 * has accepted and registered every one, then -r repetitions of REQS
 * requests between markers, each followed by its COUNT line, the server
 * named SERVER there.  No response may be left over at the end.
 */
int wl_httpc(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	int port = 8080, nconn = 10, nreq = 100, ch, i, tries, rep;
	const char *server = NULL;
	char byte;
	int *fd;

	while ((ch = getopt(argc, argv, "p:c:n:C:")) != -1) {
		switch (ch) {
		case 'p': port = atoi(optarg); break;
		case 'c': nconn = atoi(optarg); break;
		case 'n': nreq = atoi(optarg); break;
		case 'C': server = optarg; break;
		default: die("usage: httpc [-p PORT] [-c CONNS] [-n REQS] "
			     "[-C SERVER]");
		}
	}
	addr.sin_port = htons(port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = xcalloc(nconn, sizeof(int));
	for (i = 0; i < nconn; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		for (tries = 0; tries < 100; tries++) {
			if (!connect(fd[i], (struct sockaddr *)&addr,
				     sizeof(addr)))
				break;
			usleep(50000);
		}
		if (tries == 100)
			fail("httpc: connect to %d: %s", port, strerror(errno));
	}
	if (!server) {
		exchange(fd, nconn, nreq);
	} else {
		/*
		 * One vCPU runs both: the server, woken by the first request
		 * of a round, would take the CPU then or a few requests
		 * later, as the scheduler's clock has it.  A real-time client
		 * is never preempted: it writes the whole round, and the
		 * server finds every request of it in one wait, run after
		 * run.
		 */
		struct sched_param sp = { .sched_priority = 1 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			die("httpc: SCHED_FIFO: %s", strerror(errno));
		exchange(fd, nconn, nconn);
		for (rep = 1; rep <= opt.reps; rep++) {
			settle();
			MARK(MARK_BEGIN);
			exchange(fd, nconn, nreq);
			MARK(MARK_END);
			counted("wl=http conns=%d mech=%s rep=%d events=%d",
				nconn, server, rep, nreq);
		}
	}
	for (i = 0; i < nconn; i++) {
		/* Nothing, or the end of a server that served them all. */
		if (recv(fd[i], &byte, 1, MSG_DONTWAIT) > 0)
			fail("httpc: connection %d: a response more than the "
			     "requests", i);
		close(fd[i]);
	}
	free(fd);
	if (!opt.smoke)
		printf("httpc: %d responses checked\n",
		       server ? nconn + opt.reps * nreq : nreq);
	return 0;
}
