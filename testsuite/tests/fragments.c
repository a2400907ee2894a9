// SPDX-License-Identifier: GPL-2.0
/*
 * The fragments of kevent(7) "Writing an event loop", run as the page
 * shows them: the Makefile writes each named fragment of the page into
 * fragments/NAME.c (scripts/man-fragments.sh), and this program
 * includes those files, so that a change of the page's text is a
 * change of what runs here.  The program supplies only what the page
 * leaves to the caller: handle(), serve(), add_objects() and
 * do_use_fd().
 *
 * The loops never return, so each runs in a child process, which
 * handle() ends with its verdict as exit status; the threaded server
 * runs in a child too, which the parent stops with SIGTERM as a user
 * would, and so does the example for suggested usage, which has no
 * stop: the parent checks what its clients saw, then kills it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"
#include "harness.h"

void handle(const struct ukevent *ev);
int serve(const struct ukevent *ev);
int add_objects(void);
int do_use_fd(int fd);

#include "fragments/loop.c"
#include "fragments/ring-loop.c"
#include "fragments/gen.c"
#include "fragments/threads.c"
#include "fragments/stop.c"
#include "fragments/suggested-usage.c"

/* What handle() checks, in the child that runs a loop. */
enum { PIPE_LOOP = 1, RING_LOOP };
enum { WROTE_BEFORE = 3, WROTE_AFTER = 5, RING_EVENTS = 3 * 64 + 5 };
static int mode, loop_rfd, loop_read;
static const struct ukevent *ring_first;
static unsigned int ring_seen;

/* Exit statuses of the child: 0 is what the page promises. */
enum { BAD_EVENT = 10, BAD_ERROR, BAD_COUNT, BAD_SLOT, BAD_KIDX };

static void handle_pipe(const struct ukevent *ev)
{
	char buf[16];
	ssize_t len;

	if (ev->type != KEVENT_PIPE || ev->ptr != 1 ||
	    (int)ev->id.raw[0] != loop_rfd)
		_exit(BAD_EVENT);
	if (ev->ret_flags & KEVENT_RET_BROKEN) {
		/* Only once the pipe is empty and its writer gone. */
		if ((int)ev->ret_data[1] != -EPIPE)
			_exit(BAD_ERROR);
		_exit(loop_read == WROTE_BEFORE + WROTE_AFTER ? 0 : BAD_COUNT);
	}
	while ((len = read(loop_rfd, buf, sizeof(buf))) > 0)
		loop_read += (int)len;
}

/*
 * The ring loop hands over slot after slot: each call of the loop finds
 * one event (one registration), so the k-th is slot k % 64 and the
 * kernel has written k + 1 events by then.
 */
static void handle_ring(const struct ukevent *ev)
{
	const struct kevent_ring *ring;

	if (!ring_first)
		ring_first = ev;
	ring = (const void *)((const char *)ring_first -
			      offsetof(struct kevent_ring, event));
	if (ev->type != KEVENT_PIPE || ev->ptr != 1)
		_exit(BAD_EVENT);
	if (ev != ring_first + ring_seen % 64)
		_exit(BAD_SLOT);
	if (__atomic_load_n(&ring->ring_kidx, __ATOMIC_ACQUIRE) !=
	    (ring_seen + 1) % 64)
		_exit(BAD_KIDX);
	if (++ring_seen == RING_EVENTS)
		_exit(0);
}

void handle(const struct ukevent *ev)
{
	if (mode == PIPE_LOOP)
		handle_pipe(ev);
	else
		handle_ring(ev);
}

static const char *verdict(int status)
{
	if (status == -1)
		return "hung: killed";
	if (WIFSIGNALED(status))
		return strsignal(WTERMSIG(status));
	switch (WEXITSTATUS(status)) {
	case 0:		return "as the page says";
	case BAD_EVENT:	return "an event that is not the registration";
	case BAD_ERROR:	return "broken, but not with -EPIPE";
	case BAD_COUNT:	return "broken before every byte was read";
	case BAD_SLOT:	return "an event outside the slot the loop expects";
	case BAD_KIDX:	return "ring_kidx is not one past the slot";
	default:	return "the fragment exited with EXIT_FAILURE";
	}
}

/* The minimal loop, on a pipe written before and after it is watched. */
static void test_loop(void)
{
	int p[2], status;
	pid_t pid;

	must(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2");
	must(write(p[1], "abc", WROTE_BEFORE) == WROTE_BEFORE, "write");
	pid = fork();
	must(pid >= 0, "fork");
	if (pid == 0) {
		mode = PIPE_LOOP;
		loop_rfd = p[0];
		close(p[1]);
		loop(p[0]);
		_exit(BAD_EVENT);
	}
	close(p[0]);
	msleep(50);
	must(write(p[1], "defgh", WROTE_AFTER) == WROTE_AFTER, "write");
	close(p[1]);
	status = wait_child(pid, 20000);
	ok(status == 0,
	   "the minimal loop: data written before ADD and after is read, then the writer's close ends it broken with -EPIPE (%s) [kevent.7 minimal-loop]",
	   verdict(status));
}

/* The minimal ring loop, over three wraps of its 64 slots. */
static void test_ring_loop(void)
{
	int p[2], status;
	pid_t pid;

	must(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2");
	must(write(p[1], "x", 1) == 1, "write");	/* stays: always ready */
	pid = fork();
	must(pid >= 0, "fork");
	if (pid == 0) {
		mode = RING_LOOP;
		ring_loop(p[0]);
		_exit(BAD_EVENT);
	}
	status = wait_child(pid, 30000);
	ok(status == 0,
	   "the minimal ring loop: %d events in turn through the 64 slots, every commit accepted (%s) [kevent.7 minimal-ring-loop]",
	   RING_EVENTS, verdict(status));
	close(p[0]);
	close(p[1]);
}

/*
 * The generation of the page's three functions: a socket closed while
 * watched, its number taken at once by the next one, its late report
 * ignored, the new socket's event not.
 */
static int watch_socket(int q, int fd)
{
	struct ukevent uk = poll_ukevent(fd, KEVENT_SOCKET_RECV,
					 KEVENT_REQ_ALWAYS_QUEUE, ptr_of(fd));

	uk.type = KEVENT_SOCKET;
	return add1(q, uk);
}

static void test_gen(void)
{
	int q, a[2], b[2], n, stale, fresh;
	struct ukevent ev;

	q = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
	must(q >= 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				  SOCK_CLOEXEC, 0, a) == 0, "setup");
	must(watch_socket(q, a[0]) == 0, "ADD");
	close_fd(a[0]);
	must(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0, b) == 0, "socketpair");
	must(watch_socket(q, b[0]) == 0, "ADD");
	n = wait1(q, &ev, 2000);
	stale = n == 1 && (ev.ret_flags & KEVENT_RET_BROKEN) &&
		(int)ev.ret_data[1] == -EBADF && fd_of(&ev) == -1;
	must(write(b[1], "x", 1) == 1, "write");
	n = wait1(q, &ev, 2000);
	fresh = n == 1 && fd_of(&ev) == b[0];
	ok(b[0] == a[0] && stale && fresh,
	   "close_fd(), then a new socket gets the number at once (%d, was %d): the old one's -EBADF report is ignored (%d), the new one's event is not (%d) [kevent.7 generation-first]",
	   b[0], a[0], stale, fresh);
	close_fd(b[0]);
	close(b[1]);
	close(a[1]);
	close(q);
}

/*
 * The threaded server: a listener and its connections, ONESHOT |
 * ALWAYS_QUEUE, served by the page's four consumers, stopped by the
 * page's SIGTERM recipe.  What the server saw is shared with the parent.
 */
enum { CLIENTS = 40, MSG = 5, OPEN_AT_STOP = CLIENTS / 2 };
struct tally {
	atomic_int accepted, empty_accepts, bytes, empty_reads, closed;
	atomic_int leftovers, leftover_close_failed, listen_fd;
	atomic_int open[MAX_FD];	/* the program's own list */
};
static struct tally *tally;

static int add_socket(int fd, __u32 event)
{
	struct ukevent uk = { 0 };

	uk.type = KEVENT_SOCKET;
	uk.id.raw[0] = fd;
	uk.event = event;
	uk.req_flags = KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE;
	uk.ptr = ptr_of(fd);
	return kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk);
}

int add_objects(void)
{
	return add_socket(tally->listen_fd, KEVENT_SOCKET_ACCEPT);
}

static int serve_listener(int l)
{
	int c, n = 0;

	while ((c = accept4(l, NULL, NULL,
			    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		n++;
		if (c >= MAX_FD) {
			close(c);
			continue;
		}
		/* Listed first: another thread may serve and close it at once. */
		tally->open[c] = 1;
		if (add_socket(c, KEVENT_SOCKET_RECV) != 0) {
			tally->open[c] = 0;
			close(c);
			continue;
		}
		atomic_fetch_add(&tally->accepted, 1);
	}
	if (!n)
		atomic_fetch_add(&tally->empty_accepts, 1);
	return 0;
}

int serve(const struct ukevent *ev)
{
	int fd = fd_of(ev), got = 0;
	char buf[64];
	ssize_t len;

	if (fd == -1)
		return -1;
	if (fd == tally->listen_fd)
		return serve_listener(fd);
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		got += (int)len;
	atomic_fetch_add(&tally->bytes, got);
	if (len == 0 || (ev->ret_flags & KEVENT_RET_BROKEN)) {
		tally->open[fd] = 0;
		close_fd(fd);
		atomic_fetch_add(&tally->closed, 1);
		return -1;
	}
	if (!got)
		atomic_fetch_add(&tally->empty_reads, 1);
	return 0;
}

/* The child: the page's run(), then the objects of its list. */
static void server(void)
{
	int fd;

	run();
	for (fd = 0; fd < MAX_FD; fd++) {
		if (!tally->open[fd])
			continue;
		atomic_fetch_add(&tally->leftovers, 1);
		if (close(fd) != 0)
			atomic_fetch_add(&tally->leftover_close_failed, 1);
	}
	_exit(0);
}

/* The shared tally and a nonblocking listener at /tmp/NAME-PID. */
static int server_setup(struct sockaddr_un *sa, const char *name,
			int backlog)
{
	int l;

	tally = mmap(NULL, sizeof(*tally), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	must(tally != MAP_FAILED, "mmap");
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/tmp/%s-%d", name,
		 (int)getpid());
	unlink(sa->sun_path);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	must(l >= 0 && bind(l, (struct sockaddr *)sa, sizeof(*sa)) == 0 &&
	     listen(l, backlog) == 0, "listener: %s", strerror(errno));
	return l;
}

static int client(const struct sockaddr_un *sa)
{
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	must(c >= 0 && connect(c, (const struct sockaddr *)sa,
			       sizeof(*sa)) == 0, "connect: %s", strerror(errno));
	return c;
}

static void test_threads(void)
{
	int clients[CLIENTS], l, i, status;
	struct sockaddr_un sa;
	long long end;
	pid_t pid;

	l = server_setup(&sa, "fragments", CLIENTS);
	tally->listen_fd = l;

	/* Clients that connect before the listener is watched: ready at ADD. */
	for (i = 0; i < 4; i++) {
		clients[i] = client(&sa);
	}
	pid = fork();
	must(pid >= 0, "fork");
	if (pid == 0)
		server();
	close(l);
	for (i = 4; i < CLIENTS; i++) {
		clients[i] = client(&sa);
		if (i % 8 == 0)
			msleep(2);
	}
	for (i = 0; i < CLIENTS; i++) {
		must(write(clients[i], "hello", MSG) == MSG, "write");
		if (i >= OPEN_AT_STOP)
			close(clients[i]);
	}
	end = now_ns() + 30000000000LL;
	while ((atomic_load(&tally->bytes) < CLIENTS * MSG ||
		atomic_load(&tally->closed) < CLIENTS - OPEN_AT_STOP) &&
	       now_ns() < end)
		msleep(5);
	ok(atomic_load(&tally->accepted) == CLIENTS &&
	   atomic_load(&tally->empty_accepts) == 0,
	   "4 threads share a ONESHOT|ALWAYS_QUEUE listener: %d of %d connections accepted, %d reports found nothing to accept [kevent.7 threaded-listener]",
	   atomic_load(&tally->accepted), CLIENTS,
	   atomic_load(&tally->empty_accepts));
	ok(atomic_load(&tally->bytes) == CLIENTS * MSG &&
	   atomic_load(&tally->empty_reads) == 0 &&
	   atomic_load(&tally->closed) == CLIENTS - OPEN_AT_STOP,
	   "the connections, added again by the thread that served them: %d of %d bytes, %d empty reports, %d of %d ends closed [kevent.7 threads-oneshot]",
	   atomic_load(&tally->bytes), CLIENTS * MSG,
	   atomic_load(&tally->empty_reads), atomic_load(&tally->closed),
	   CLIENTS - OPEN_AT_STOP);

	kill(pid, SIGTERM);
	status = wait_child(pid, 20000);
	ok(status == 0,
	   "SIGTERM, blocked before the threads, is taken by sigwait(); the stop byte ends every thread, and run() returns (%s) [kevent.7 stop-on-signal] [kevent.7 stop-threads]",
	   status == 0 ? "exit 0" : status == -1 ? "hung: killed" :
	   WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit status");
	ok(status == 0 && atomic_load(&tally->leftovers) == OPEN_AT_STOP &&
	   atomic_load(&tally->leftover_close_failed) == 0,
	   "after the queue, the %d connections still open are closed from the program's list, each close succeeds (%d failed) [kevent.7 close-after-queue]",
	   atomic_load(&tally->leftovers),
	   atomic_load(&tally->leftover_close_failed));
	for (i = 0; i < OPEN_AT_STOP; i++)
		close(clients[i]);
	unlink(sa.sun_path);
	munmap(tally, sizeof(*tally));
}

/*
 * The example for suggested usage, single-threaded: clients that write
 * and shut down their sending side; the server must read all and close
 * each connection, which the client sees as the end of its stream.
 */
enum { SU_CLIENTS = 20 };

int do_use_fd(int fd)
{
	char buf[64];
	ssize_t len;

	while ((len = read(fd, buf, sizeof(buf))) > 0)
		atomic_fetch_add(&tally->bytes, (int)len);
	if (len == 0) {
		atomic_fetch_add(&tally->closed, 1);
		return -1;
	}
	return 0;
}

static int server_closed(int c, long long end)
{
	struct pollfd pfd = { .fd = c, .events = POLLIN };
	char b;

	while (now_ns() < end)
		if (poll(&pfd, 1, 100) == 1)
			return read(c, &b, 1) == 0;
	return 0;
}

static void test_suggested_usage(void)
{
	int clients[SU_CLIENTS], l, i, eofs = 0, alive, status;
	struct sockaddr_un sa;
	long long end;
	pid_t pid;

	l = server_setup(&sa, "suggested", SU_CLIENTS);
	pid = fork();
	must(pid >= 0, "fork");
	if (pid == 0) {
		suggested_usage(l);
		_exit(BAD_EVENT);
	}
	close(l);
	for (i = 0; i < SU_CLIENTS; i++) {
		clients[i] = client(&sa);
		must(write(clients[i], "hello", MSG) == MSG, "write");
		shutdown(clients[i], SHUT_WR);
	}
	end = now_ns() + 30000000000LL;
	for (i = 0; i < SU_CLIENTS; i++) {
		eofs += server_closed(clients[i], end);
		close(clients[i]);
	}
	alive = waitpid(pid, &status, WNOHANG) == 0;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ok(alive && eofs == SU_CLIENTS &&
	   atomic_load(&tally->bytes) == SU_CLIENTS * MSG &&
	   atomic_load(&tally->closed) == SU_CLIENTS,
	   "the example for suggested usage: %d of %d connections served (%d of %d bytes) and closed by the server (%d seen by the clients), still running (%d) [kevent.7 suggested-usage]",
	   atomic_load(&tally->closed), SU_CLIENTS,
	   atomic_load(&tally->bytes), SU_CLIENTS * MSG, eofs, alive);
	unlink(sa.sun_path);
	munmap(tally, sizeof(*tally));
}

int main(void)
{
	plan(8);
	tap_watchdog(120);
	kevent_require();

	test_loop();		/* 1 */
	test_ring_loop();	/* 1 */
	test_gen();		/* 1 */
	test_threads();		/* 4 */
	test_suggested_usage();	/* 1 */
	return tap_done();
}
