// SPDX-License-Identifier: GPL-2.0
/*
 * SIGUSR1 through a kevent queue, with and without KEVENT_SIGNAL_NOMASK:
 * installs a handler for SIGUSR1, adds a KEVENT_SIGNAL registration for
 * it, and sends itself the signal NR times (default 3), first without
 * NOMASK, then with it.  Without NOMASK each signal is both handled and
 * reported; with NOMASK it is only reported: the handler does not run and
 * the signal is never pending.  It exits with EXIT_SUCCESS only if that
 * is what it saw.
 *
 * Illustrates kevent_signal(7).
 *
 * Build: cc -static -Wall -I include/uapi -o signal examples/signal.c
 * Usage: ./signal [NR]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kevent.h>
#include <linux/time_types.h>

static volatile sig_atomic_t handled;

static void on_sigusr1(int sig)
{
	(void)sig;
	handled++;
}

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
			     const struct __kernel_timespec *timeout,
			     struct ukevent *buf, unsigned int flags)
{
	return syscall(__NR_kevent_get_events, fd, min_nr, max_nr, timeout,
		       buf, flags);
}

/*
 * Send SIGUSR1 nr times, watched by a registration with or without
 * NOMASK; return 0 if each send was reported and handled as expected.
 */
static int run(int fd, int nomask, int nr)
{
	struct __kernel_timespec zero = { 0, 0 };
	struct ukevent uk;
	sigset_t pending;
	int i, n, bad = 0;

	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_SIGNAL;
	uk.id.raw[0] = SIGUSR1;
	if (nomask)
		uk.id.raw_u64 |= KEVENT_SIGNAL_NOMASK;
	uk.event = KEVENT_SIGNAL_DELIVERY;
	uk.req_flags = KEVENT_REQ_ET;
	uk.ptr = nomask;
	if (kevent_ctl(fd, KEVENT_CTL_ADD, 1, &uk) != 0) {
		fprintf(stderr, "kevent_ctl: %s\n", strerror(errno));
		return 1;
	}

	handled = 0;
	for (i = 0; i < nr; i++) {
		kill(getpid(), SIGUSR1);
		sigpending(&pending);
		n = kevent_get_events(fd, 0, 1, &zero, &uk, 0);
		printf("%s: kill #%d: handler ran %d times, %s, %d event%s",
		       nomask ? "NOMASK" : "plain ", i + 1, (int)handled,
		       sigismember(&pending, SIGUSR1) ? "pending" :
		       "not pending", n, n == 1 ? "" : "s");
		if (n == 1)
			printf(" (signal %u, si_code %d, %u send)",
			       uk.id.raw[0], (int)uk.ret_data[0],
			       uk.ret_data[1]);
		printf("\n");
		if (n != 1 || uk.ptr != (__u64)nomask || uk.ret_data[1] != 1 ||
		    (int)uk.ret_data[0] != SI_USER ||
		    handled != (nomask ? 0 : i + 1) ||
		    sigismember(&pending, SIGUSR1))
			bad = 1;
	}

	/* The last report names the registration as well as the request. */
	kevent_ctl(fd, KEVENT_CTL_REMOVE, 1, &uk);
	return bad;
}

int main(int argc, char *argv[])
{
	int nr = argc > 1 ? atoi(argv[1]) : 3;
	struct sigaction sa;
	int fd, bad;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigaction(SIGUSR1, &sa, NULL);

	fd = kevent_init(NULL, 0, 0);
	if (fd < 0) {
		fprintf(stderr, "kevent_init: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	bad = run(fd, 0, nr);
	bad |= run(fd, 1, nr);
	close(fd);
	printf("%s\n", bad ? "unexpected results" : "all as expected");
	return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
