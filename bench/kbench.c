// SPDX-License-Identifier: MIT
/*
 * kbench: measure kevent against epoll, io_uring and poll(2).
 *
 *   kbench [-t SECS] [-r REPS] WORKLOAD [OPTIONS]
 *
 * WORKLOAD is harvest, scale, churn, wake, timer, httpd or httpc (see
 * each file of bench/), or smoke: every workload, small and short, as a
 * TAP test for make check.  Each measured run lasts SECS seconds
 * (default 1); REPS repetitions run the mechanisms in turn each time, so
 * that a change of the machine's load hits them all alike.
 * doc/benchmarks.md tells how scripts/bench.sh runs it.
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kbench.h"

struct opts opt = { .secs = 1.0, .reps = 1 };

static int tap_count;

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	if (opt.smoke)
		printf("not ok %d - ", tap_count + 1);
	else
		fputs("FAIL kbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(opt.smoke ? stdout : stderr, fmt, ap);
	va_end(ap);
	fputc('\n', opt.smoke ? stdout : stderr);
	fflush(stdout);
	exit(1);
}

/* A mechanism did not deliver what it should have: say so loudly. */
void fail(const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	die("COUNT MISMATCH: %s", msg);
}

void result(const char *fmt, ...)
{
	va_list ap;

	fputs("BENCH ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * Before a counted phase: the work the last one left to others (RCU
 * callbacks that free epitems, io_uring's ring exit in a kworker, the
 * frees of 10,000 registrations) runs now, while the guest idles,
 * rather than inside the next phase's count.
 */
void settle(void)
{
	usleep(200 * 1000);
}

/* The result of a counted phase, printed after its MARK_END. */
void counted(const char *fmt, ...)
{
	va_list ap;

	fputs("COUNT ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void tap_ok(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory (%zu x %zu)", n, size);
	return p;
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Allow @n descriptors: root may raise the hard limit to fs.nr_open. */
int try_nofile(long n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= (rlim_t)n)
		return 0;
	rl.rlim_cur = n;
	if (rl.rlim_max < (rlim_t)n)
		rl.rlim_max = n;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

void raise_nofile(long n)
{
	if (try_nofile(n))
		die("cannot allow %ld descriptors: %s (raise fs.nr_open and "
		    "ulimit -n)", n, strerror(errno));
}

/* Parse "ring,epoll-lt,...": set use[m] for each one named. */
int parse_mechs(const char *list, int *use)
{
	char buf[256], *tok, *save;
	int m;

	memset(use, 0, M_NR * sizeof(int));
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (m = 0; m < M_NR; m++)
			if (!strcmp(tok, mech_name[m]))
				break;
		if (m == M_NR)
			return -1;
		use[m] = 1;
	}
	return 0;
}

typedef int (*workload_fn)(int argc, char **argv);

static int call(workload_fn fn, const char *args)
{
	char buf[256], *argv[32], *tok, *save;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", args);
	for (tok = strtok_r(buf, " ", &save); tok && argc < 31;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	optind = 0;	/* glibc: start getopt() afresh */
	return fn(argc, argv);
}

/* One server per back end, the small client against it. */
static void smoke_http(void)
{
	static const char *const be[] = { "ring", "epoll", "uring" };
	char args[128];
	int status, devnull;
	pid_t pid;

	for (int i = 0; i < 3; i++) {
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			devnull = open("/dev/null", O_WRONLY);
			dup2(devnull, 1);
			snprintf(args, sizeof(args), "httpd -b %s -p %d -n 400",
				 be[i], 18080 + i);
			exit(call(wl_httpd, args));
		}
		snprintf(args, sizeof(args), "httpc -p %d -c 20 -n 400",
			 18080 + i);
		call(wl_httpc, args);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			fail("httpd %s: ended with status %#x", be[i], status);
		tap_ok("http %s: 400 requests on 20 keep-alive connections, "
		       "every response checked", be[i]);
	}
}

/*
 * Every workload, small: make check runs this so that the bench cannot
 * rot.  Sizes are a fraction of the real run's, the counting the same.
 */
static int smoke(void)
{
	/* harvest 7 x 2, scale 5 x 2, churn 6, wake 6, timer 4 x 2, http 3 */
	printf("1..%d\n", 14 + 10 + 6 + 6 + 8 + 3);
	fflush(stdout);
	opt.smoke = 1;
	opt.reps = 1;
	opt.secs = 0.05;
	call(wl_harvest, "harvest -n 200 -a 20 -k pipe");
	call(wl_harvest, "harvest -n 200 -a 20 -k unix");
	call(wl_scale, "scale -i 10,1000 -a 20");
	call(wl_churn, "churn -n 128");
	call(wl_wake, "wake -s 30");
	call(wl_timer, "timer -s 10");
	smoke_http();
	return 0;
}

static const struct {
	const char *name;
	workload_fn fn;
} workloads[] = {
	{ "harvest", wl_harvest },
	{ "scale", wl_scale },
	{ "churn", wl_churn },
	{ "wake", wl_wake },
	{ "timer", wl_timer },
	{ "httpd", wl_httpd },
	{ "httpc", wl_httpc },
};

int main(int argc, char **argv)
{
	int ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt(argc, argv, "+t:r:")) != -1) {
		switch (ch) {
		case 't': opt.secs = atof(optarg); break;
		case 'r': opt.reps = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	if (kevent_probe(NULL) == -1)
		die("kevent_probe: %s: this kernel has no kevent",
		    strerror(errno));
	if (!strcmp(argv[optind], "smoke"))
		return smoke();
	for (unsigned int i = 0; i < sizeof(workloads) / sizeof(workloads[0]);
	     i++) {
		if (!strcmp(argv[optind], workloads[i].name)) {
			argv += optind;
			argc -= optind;
			optind = 0;
			return workloads[i].fn(argc, argv);
		}
	}
usage:
	fprintf(stderr, "usage: kbench [-t SECS] [-r REPS] smoke|harvest|"
		"scale|churn|wake|timer|httpd|httpc [OPTIONS]\n");
	return 2;
}
