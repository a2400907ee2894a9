// SPDX-License-Identifier: GPL-2.0
/*
 * Races between object death, failed ADDs, POLLFREE and the queue's own
 * REMOVE and close: regression tests for the kernel review's findings
 * C2, C3 and C4.  The use-after-free these findings describe shows only
 * on the debug (KASAN) kernel; on any kernel each round must pass
 * functionally, with every registration accounted for exactly once.
 * Each race runs for a bounded time; the rounds done are printed.
 *
 * Usage: races [GROUP...]   (default: every group)
 *
 * Conformance: checks the documented semantics under races; the
 * use-after-free it hunts is this tree's (KASAN shows it).
 */
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"

#define RECV		KEVENT_SOCKET_RECV
#define SEND		KEVENT_SOCKET_SEND
#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)

/* How long each race runs, at most, and how many rounds. */
#define RACE_MS		2500
#define MIN_ROUNDS	10

static int entry_err(const struct ukevent *uk, int err)
{
	return uk->ret_flags == BROKEN_DONE && (int)uk->ret_data[1] == -err;
}

/* "kevents:" of the queue's fdinfo: how many registrations it holds. */
static int fdinfo_count(int q)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", q);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "kevents:");
	return p ? atoi(p + 8) : -1;
}

static void barrier_init(pthread_barrier_t *b)
{
	if (pthread_barrier_init(b, NULL, 2))
		bail_out("pthread_barrier_init");
}

/*
 * C2: the pipe of 64 registrations dies (last close, free_pipe_info())
 * while another thread REMOVEs them, or closes the queue.
 */
#define C2_REGS		64
#define C2_ANCHORS	64

struct c2 {
	pthread_barrier_t start, end;
	int mode;		/* 0 REMOVE, 1 close of the queue, -1 stop */
	int q;
	struct ukevent rm[C2_REGS];
	int rm_ret;
};

static void *c2_thread(void *arg)
{
	struct c2 *c = arg;

	for (;;) {
		pthread_barrier_wait(&c->start);
		if (c->mode < 0)
			break;
		if (c->mode == 0)
			c->rm_ret = sys_kevent_ctl(c->q, KEVENT_CTL_REMOVE,
						   C2_REGS, c->rm);
		else
			close(c->q);
		pthread_barrier_wait(&c->end);
	}
	return NULL;
}

static void c2_add(int q, int fd)
{
	struct ukevent add[C2_REGS];
	int i;

	for (i = 0; i < C2_REGS; i++)
		add[i] = fd_ukevent(KEVENT_PIPE, fd, RECV, 0, (__u64)i);
	if (sys_kevent_ctl(q, KEVENT_CTL_ADD, C2_REGS, add) != 0)
		bail_out("C2: ADD of 64 registrations: %s", strerror(errno));
}

static void test_c2(void)
{
	int q = anchored_queue(), p[2], i, n, rounds, bad = 0, bad_enoent = 0;
	long long removed_total = 0, reported_total = 0, start;
	struct ukevent buf[2 * C2_REGS];
	static struct c2 c;
	pthread_t th;

	diag("C2: a pipe's death races REMOVE, and close of the queue, of its "
	     "64 registrations");
	/* Anchors: the queue never holds fewer entries than a REMOVE asks. */
	for (i = 0; i < C2_ANCHORS; i++)
		if (add1(q, timer_ms(100000, 0, 1000 + i)))
			bail_out("C2: anchor: %s", strerror(errno));
	barrier_init(&c.start);
	barrier_init(&c.end);
	if (pthread_create(&th, NULL, c2_thread, &c))
		bail_out("pthread_create");

	start = now_ns();
	for (rounds = 0; rounds < 5000 && ms_since(start) < RACE_MS;
	     rounds++) {
		int removed[C2_REGS] = { 0 }, enoent[C2_REGS] = { 0 };
		int reported[C2_REGS] = { 0 };

		if (pipe(p))
			bail_out("pipe");
		c2_add(q, p[0]);
		for (i = 0; i < C2_REGS; i++)
			c.rm[i] = fd_ukevent(KEVENT_PIPE, p[0], RECV, 0,
					(__u64)(C2_REGS - 1 - i));
		c.q = q;
		c.mode = 0;
		pthread_barrier_wait(&c.start);
		close(p[0]);
		close(p[1]);
		pthread_barrier_wait(&c.end);

		if (c.rm_ret != C2_REGS) {
			bad++;
			continue;
		}
		for (i = 0; i < C2_REGS; i++) {
			__u64 ptr = c.rm[i].ptr;

			if (ptr >= C2_REGS)
				bad++;
			else if (c.rm[i].ret_flags == KEVENT_RET_DONE)
				removed[ptr]++;
			else if (entry_err(&c.rm[i], ENOENT))
				enoent[ptr]++;
			else
				bad++;
		}
		n = harvest(q, buf, 2 * C2_REGS);
		for (i = 0; i < n; i++) {
			if (buf[i].ptr < C2_REGS && entry_err(&buf[i], EBADF))
				reported[buf[i].ptr]++;
			else
				bad++;
		}
		for (i = 0; i < C2_REGS; i++) {
			if (removed[i] + reported[i] != 1)
				bad++;
			if (enoent[i] != reported[i])
				bad_enoent++;
			removed_total += removed[i];
			reported_total += reported[i];
		}
	}
	diag("C2: REMOVE race: %d rounds, %lld registrations removed, %lld "
	     "reported BROKEN first", rounds, removed_total, reported_total);
	ok(rounds >= MIN_ROUNDS, "C2: REMOVE race: %d rounds in %d ms",
	   rounds, RACE_MS);
	is_int(bad, 0, "C2: REMOVE race: each registration is either removed "
	       "or reported BROKEN (EBADF), exactly once");
	is_int(bad_enoent, 0, "C2: REMOVE race: one reported dead was not in "
	       "the index any more (ENOENT)");
	is_int(fdinfo_count(q), 1 + C2_ANCHORS,
	       "C2: REMOVE race: nothing is left in the queue but its anchors");
	close(q);

	start = now_ns();
	for (rounds = 0; rounds < 5000 && ms_since(start) < RACE_MS;
	     rounds++) {
		q = new_queue(0);
		if (pipe(p))
			bail_out("pipe");
		c2_add(q, p[0]);
		c.q = q;
		c.mode = 1;
		pthread_barrier_wait(&c.start);
		close(p[0]);
		close(p[1]);
		pthread_barrier_wait(&c.end);
	}
	diag("C2: close race: %d rounds", rounds);
	ok(rounds >= MIN_ROUNDS, "C2: close race: %d rounds of a pipe's death "
	   "against close of its queue", rounds);

	c.mode = -1;
	pthread_barrier_wait(&c.start);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&c.start);
	pthread_barrier_destroy(&c.end);
}

/* C3: an ADD that fails races a notification of its object. */
struct c3 {
	int fd;
	volatile int stop;
};

static void *c3_resize(void *arg)
{
	struct c3 *c = arg;
	unsigned int i = 0;

	while (!c->stop)
		fcntl(c->fd, F_SETPIPE_SZ, (i++ & 1) ? 4096 : 8192);
	return NULL;
}

static void *c3_send(void *arg)
{
	struct c3 *c = arg;

	while (!c->stop)
		send(c->fd, "x", 1, MSG_DONTWAIT);
	return NULL;
}

static void test_c3_pipe(void)
{
	int q = anchored_queue(), p[2], rounds, bad = 0, stale = 0;
	struct ukevent uk, buf[8];
	struct c3 c = { 0 };
	long long start;
	pthread_t th;

	diag("C3: ADD of SEND on a pipe without readers (broken at ADD) races "
	     "F_SETPIPE_SZ, which notifies the pipe");
	if (pipe(p))
		bail_out("pipe");
	close(p[0]);
	c.fd = p[1];
	if (pthread_create(&th, NULL, c3_resize, &c))
		bail_out("pthread_create");
	start = now_ns();
	for (rounds = 0; rounds < 50000 && ms_since(start) < RACE_MS;
	     rounds++) {
		uk = fd_ukevent(KEVENT_PIPE, p[1], SEND, 0, (__u64)rounds);
		if (ctl1(q, KEVENT_CTL_ADD, &uk) != 1 ||
		    !entry_err(&uk, EPIPE))
			bad++;
		stale += harvest(q, buf, 8);
	}
	c.stop = 1;
	pthread_join(th, NULL);
	diag("C3: pipe: %d ADDs", rounds);
	ok(rounds >= MIN_ROUNDS, "C3: pipe: %d ADDs in %d ms", rounds,
	   RACE_MS);
	is_int(bad, 0, "C3: pipe: every ADD comes back BROKEN with EPIPE "
	       "[kevent_pipe.7 EPIPE closed-end]");
	is_int(stale, 0, "C3: pipe: and nothing stays queued "
	       "[kevent_pipe.7 EPIPE closed-end]");
	is_int(fdinfo_count(q), 1, "C3: pipe: nothing stays registered");
	close(p[1]);
	close(q);
}

/* A UDP port on 127.0.0.1 that nobody listens on. */
static int closed_udp_port(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)a, sizeof(*a)) ||
	    getsockname(s, (struct sockaddr *)a, &len))
		return -1;
	close(s);
	return 0;
}

#define C3_MAX	20000
/*
 * ADDs per socket: the registered ones pile up between two errors, and
 * one object takes at most fs.kevent.max_object_kevents (1024).
 */
#define C3_PER_SOCKET	512

static void test_c3_udp(void)
{
	static unsigned char state[C3_MAX + 1];	/* 1 broken at ADD, 2 added */
	static unsigned short reports[C3_MAX + 1];
	int q = anchored_queue(), s, rounds, i, n, bad_add = 0, bad = 0;
	int at_add = 0, added = 0, odd = 0;
	struct ukevent uk, buf[16];
	struct sockaddr_in a;
	struct c3 c = { 0 };
	long long start;
	pthread_t th;

	diag("C3: ADD on a UDP socket races the ICMP errors (sk_err, "
	     "sk_error_report) of its sends to a closed port");
	s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (s < 0 || closed_udp_port(&a) ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)))
		bail_out("C3: UDP socket: %s", strerror(errno));
	c.fd = s;
	if (pthread_create(&th, NULL, c3_send, &c))
		bail_out("pthread_create");

	start = now_ns();
	for (rounds = 1; rounds <= C3_MAX && ms_since(start) < RACE_MS;
	     rounds++) {
		/*
		 * A new socket under the same number, which the sender
		 * keeps using: the old one's registrations are reported
		 * BROKEN by its close, as at the end.
		 */
		if (rounds % C3_PER_SOCKET == 0) {
			int s2 = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

			if (s2 < 0 ||
			    connect(s2, (struct sockaddr *)&a, sizeof(a)) ||
			    dup2(s2, s) != s)
				bail_out("C3: a new UDP socket: %s",
					 strerror(errno));
			close(s2);
		}
		uk = fd_ukevent(KEVENT_SOCKET, s, RECV, 0, (__u64)rounds);
		n = ctl1(q, KEVENT_CTL_ADD, &uk);
		if (n == 0) {
			state[rounds] = 2;
			added++;
		} else if (n == 1 && entry_err(&uk, ECONNREFUSED)) {
			state[rounds] = 1;
			at_add++;
		} else {
			bad_add++;
		}
		n = harvest(q, buf, 16);
		for (i = 0; i < n; i++) {
			if (buf[i].ptr >= 1 && buf[i].ptr <= C3_MAX &&
			    (buf[i].ret_flags & KEVENT_RET_BROKEN))
				reports[buf[i].ptr]++;
			else
				odd++;
		}
	}
	c.stop = 1;
	pthread_join(th, NULL);
	/* The registrations left are reported BROKEN at the close. */
	close(s);
	while ((n = harvest(q, buf, 16)) > 0)
		for (i = 0; i < n; i++) {
			if (buf[i].ptr >= 1 && buf[i].ptr <= C3_MAX &&
			    (buf[i].ret_flags & KEVENT_RET_BROKEN))
				reports[buf[i].ptr]++;
			else
				odd++;
		}
	for (i = 1; i < rounds; i++)
		if (reports[i] != (state[i] == 2 ? 1 : 0))
			bad++;
	diag("C3: UDP: %d ADDs: %d broken at ADD, %d registered", rounds - 1,
	     at_add, added);
	ok(rounds - 1 >= MIN_ROUNDS, "C3: UDP: %d ADDs in %d ms", rounds - 1,
	   RACE_MS);
	is_int(bad_add, 0, "C3: UDP: each ADD is registered, or comes back "
	       "BROKEN with ECONNREFUSED");
	is_int(bad + odd, 0, "C3: UDP: one registered is reported BROKEN "
	       "once; one broken at ADD never");
	is_int(fdinfo_count(q), 1, "C3: UDP: nothing stays registered");
	close(q);
}

/*
 * C4: POLLFREE.  A child hooks a signalfd through KEVENT_POLL: the wait
 * queue is its sighand's, freed when the parent reaps it.
 */
struct c4 {
	pthread_barrier_t start, end;
	pid_t pid;
	int stop;
};

static void *c4_reaper(void *arg)
{
	struct c4 *c = arg;
	int st;

	for (;;) {
		pthread_barrier_wait(&c->start);
		if (c->stop)
			break;
		waitpid(c->pid, &st, 0);
		pthread_barrier_wait(&c->end);
	}
	return NULL;
}

/* A child that registers the signalfd on q and exits; a zombie after. */
static pid_t c4_child(int q, int sfd, __u64 ptr)
{
	siginfo_t si;
	pid_t pid = fork();

	if (pid < 0)
		bail_out("fork");
	if (!pid)
		_exit(add1(q, poll_ukevent(sfd, POLLIN, 0, ptr)) ? 1 : 0);
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT))
		bail_out("waitid: %s", strerror(errno));
	if (si.si_code != CLD_EXITED || si.si_status != 0)
		bail_out("C4: the child could not register the signalfd");
	return pid;
}

static void test_c4(void)
{
	int q = anchored_queue(), sfd, st = -1, n, rounds, bad = 0;
	long long removed = 0, reported = 0, start;
	struct ukevent uk, buf[4];
	static struct c4 c;
	sigset_t set;
	pthread_t th;
	pid_t pid;

	diag("C4: POLLFREE of a signalfd watched through KEVENT_POLL, alone "
	     "and racing REMOVE and close of the queue");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0)
		bail_out("signalfd: %s", strerror(errno));

	/* Alone: reported BROKEN with -ESRCH, and removed after delivery. */
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (!pid)
		_exit(add1(q, poll_ukevent(sfd, POLLIN, 0, 90)) ? 1 : 0);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "C4: a child registers the signalfd (its sighand's wait queue) "
	   "and exits");
	memset(&uk, 0, sizeof(uk));
	n = wait1(q, &uk, 2000);
	ok(n == 1 && uk.ptr == 90 && entry_err(&uk, ESRCH),
	   "C4: once it is reaped (POLLFREE) the registration is reported "
	   "BROKEN with -ESRCH (n %d, flags %#x, data %d)", n, uk.ret_flags,
	   (int)uk.ret_data[1]);
	is_int(harvest(q, buf, 4), 0, "C4: once");
	is_int(fdinfo_count(q), 1, "C4: and it is removed after delivery");

	barrier_init(&c.start);
	barrier_init(&c.end);
	if (pthread_create(&th, NULL, c4_reaper, &c))
		bail_out("pthread_create");

	/* Racing REMOVE. */
	start = now_ns();
	for (rounds = 0; rounds < 1000 && ms_since(start) < RACE_MS;
	     rounds++) {
		int hits = 0, i;

		c.pid = c4_child(q, sfd, 91);
		uk = poll_ukevent(sfd, POLLIN, 0, 91);
		pthread_barrier_wait(&c.start);
		n = ctl1(q, KEVENT_CTL_REMOVE, &uk);
		pthread_barrier_wait(&c.end);
		n = harvest(q, buf, 4);
		for (i = 0; i < n; i++) {
			if (buf[i].ptr == 91 && entry_err(&buf[i], ESRCH))
				hits++;
			else
				bad++;
		}
		if (uk.ret_flags == KEVENT_RET_DONE && hits == 0)
			removed++;
		else if (entry_err(&uk, ENOENT) && hits == 1)
			reported++;
		else
			bad++;
	}
	diag("C4: REMOVE race: %d rounds, %lld removed, %lld reported BROKEN "
	     "first", rounds, removed, reported);
	ok(rounds >= MIN_ROUNDS, "C4: REMOVE race: %d rounds", rounds);
	is_int(bad, 0, "C4: REMOVE race: each registration is removed, or "
	       "reported BROKEN with -ESRCH (then REMOVE gives ENOENT), once");

	/* Racing close of the queue. */
	close(q);
	start = now_ns();
	for (rounds = 0; rounds < 1000 && ms_since(start) < RACE_MS;
	     rounds++) {
		q = new_queue(0);
		c.pid = c4_child(q, sfd, 92);
		pthread_barrier_wait(&c.start);
		close(q);
		pthread_barrier_wait(&c.end);
	}
	diag("C4: close race: %d rounds", rounds);
	ok(rounds >= MIN_ROUNDS, "C4: close race: %d rounds", rounds);

	c.stop = 1;
	pthread_barrier_wait(&c.start);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&c.start);
	pthread_barrier_destroy(&c.end);
	close(sfd);
}

struct group {
	const char *name;
	unsigned int points;
	void (*fn)(void);
};

static const struct group groups[] = {
	{ "c2", 5, test_c2 },
	{ "c3pipe", 4, test_c3_pipe },
	{ "c3udp", 4, test_c3_udp },
	{ "c4", 7, test_c4 },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

int main(int argc, char **argv)
{
	unsigned int i, total = 0;
	int j, want[NGROUPS] = { 0 }, any = 0;

	for (j = 1; j < argc; j++) {
		for (i = 0; i < NGROUPS; i++)
			if (!strcmp(argv[j], groups[i].name))
				break;
		if (i == NGROUPS) {
			printf("Bail out! unknown group %s\n", argv[j]);
			return 1;
		}
		want[i] = any = 1;
	}
	for (i = 0; i < NGROUPS; i++) {
		if (!any)
			want[i] = 1;
		if (want[i])
			total += groups[i].points;
	}
	plan(total);
	tap_watchdog(50);
	kevent_require();
	signal(SIGPIPE, SIG_IGN);
	diag("%ld CPUs online: the races need two to mean much",
	     sysconf(_SC_NPROCESSORS_ONLN));
	for (i = 0; i < NGROUPS; i++)
		if (want[i])
			groups[i].fn();
	return tap_done();
}
