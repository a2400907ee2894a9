/* SPDX-License-Identifier: MIT */
/*
 * hookcost: what the kevent hooks cost a program that does not use
 * kevent.  The series hooks pipes, sockets, signals, POSIX timers and
 * the release of every file; for an object nobody watches each hook is
 * meant to be one load and one branch.  This measures the paths they
 * sit on, the same way on the kevent kernel and on the same config
 * without CONFIG_KEVENT (scripts/hookcost.sh boots both, in turn):
 *
 *   pipe      two threads pass a byte back and forth over two pipes
 *   unix      the same over an AF_UNIX stream socket pair
 *   udp       the same over two UDP sockets on loopback
 *   signal    a thread sends itself SIGUSR1, which a handler takes
 *   open      pipe2() and close() of both ends (the file release hook)
 *
 * Everything runs on CPU 0: a wake-up across CPUs costs an emulated IPI
 * and a halted vCPU's wake-up, tens of times the paths measured here.
 * Each workload runs REPS times for SECS seconds; one line per run:
 *   hookcost WORKLOAD ns-per-op OPS
 * It uses no kevent call, so it runs on either kernel.
 *
 * Build: cc -static -O2 -pthread -o hookcost bench/hooks/hookcost.c
 * See doc/benchmarks.md, "What the hooks cost when kevent is unused".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double secs = 0.5;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "hookcost: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The echoing side of a ping-pong: read a byte, write it back; 'q' ends. */
struct echo {
	int rfd, wfd;
};

static void *echo_main(void *arg)
{
	struct echo *e = arg;
	char c;

	while (read(e->rfd, &c, 1) == 1 && c != 'q')
		if (write(e->wfd, &c, 1) != 1)
			break;
	return NULL;
}

/*
 * Round trips over (to[1] -> to[0]) and (back[1] -> back[0]) for the
 * configured time; returns ns per round trip, *ops the count.
 */
static double ping_pong(int to[2], int back[2], long *ops)
{
	struct echo e = { to[0], back[1] };
	long long start, end;
	pthread_t th;
	long n = 0;
	char c = 'x';

	if (pthread_create(&th, NULL, echo_main, &e))
		die("pthread_create");
	start = now_ns();
	end = start + (long long)(secs * 1e9);
	do {
		int i;

		for (i = 0; i < 64; i++, n++)
			if (write(to[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
				die("ping-pong");
	} while (now_ns() < end);
	end = now_ns();
	c = 'q';
	if (write(to[1], &c, 1) != 1)
		die("ping-pong end");
	pthread_join(th, NULL);
	*ops = n;
	return (double)(end - start) / (double)n;
}

static double run_pipe(long *ops)
{
	int to[2], back[2];
	double r;

	if (pipe(to) || pipe(back))
		die("pipe");
	r = ping_pong(to, back, ops);
	close(to[0]);
	close(to[1]);
	close(back[0]);
	close(back[1]);
	return r;
}

static double run_unix(long *ops)
{
	int a[2], to[2], back[2];
	double r;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a))
		die("socketpair");
	/* One socket each way: the echo reads a[1], writes a[1]. */
	to[0] = a[1];
	to[1] = a[0];
	back[0] = a[0];
	back[1] = a[1];
	r = ping_pong(to, back, ops);
	close(a[0]);
	close(a[1]);
	return r;
}

static int udp_bound(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    getsockname(fd, (struct sockaddr *)sa, &len))
		die("udp socket");
	return fd;
}

static double run_udp(long *ops)
{
	struct sockaddr_in sa, sb;
	int a = udp_bound(&sa), b = udp_bound(&sb), to[2], back[2];
	double r;

	if (connect(a, (struct sockaddr *)&sb, sizeof(sb)) ||
	    connect(b, (struct sockaddr *)&sa, sizeof(sa)))
		die("udp connect");
	to[0] = b;
	to[1] = a;
	back[0] = a;
	back[1] = b;
	r = ping_pong(to, back, ops);
	close(a);
	close(b);
	return r;
}

static volatile sig_atomic_t taken;

static void on_usr1(int sig)
{
	(void)sig;
	taken++;
}

static double run_signal(long *ops)
{
	struct sigaction sa;
	long long start, end;
	long n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	taken = 0;
	start = now_ns();
	end = start + (long long)(secs * 1e9);
	do {
		int i;

		for (i = 0; i < 64; i++, n++)
			if (kill(getpid(), SIGUSR1))
				die("kill");
	} while (now_ns() < end);
	end = now_ns();
	if (taken != n) {
		fprintf(stderr, "hookcost: %ld signals sent, %ld taken\n", n,
			(long)taken);
		exit(1);
	}
	*ops = n;
	return (double)(end - start) / (double)n;
}

static double run_open(long *ops)
{
	long long start, end;
	long n = 0;
	int p[2];

	start = now_ns();
	end = start + (long long)(secs * 1e9);
	do {
		int i;

		for (i = 0; i < 64; i++, n++) {
			if (pipe(p))
				die("pipe");
			close(p[0]);
			close(p[1]);
		}
	} while (now_ns() < end);
	end = now_ns();
	*ops = n;
	return (double)(end - start) / (double)n;
}

static const struct {
	const char *name;
	double (*run)(long *ops);
} workloads[] = {
	{ "pipe", run_pipe },
	{ "unix", run_unix },
	{ "udp", run_udp },
	{ "signal", run_signal },
	{ "open", run_open },
};

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5, r;
	cpu_set_t cpu0;
	unsigned int i;
	long ops;
	double ns;

	if (argc > 2)
		secs = atof(argv[2]);
	if (reps < 1 || secs <= 0) {
		fprintf(stderr, "usage: hookcost [REPS [SECS]]\n");
		return 2;
	}
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
		die("sched_setaffinity");
	/* Interleaved: a change of the host's load hits every workload. */
	for (r = 0; r < reps; r++)
		for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
			ns = workloads[i].run(&ops);
			printf("hookcost %s %.1f %ld\n", workloads[i].name, ns,
			       ops);
			fflush(stdout);
		}
	return 0;
}
