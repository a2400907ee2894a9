/* SPDX-License-Identifier: MIT */
/* chain.c: bench.c's pattern on raw kevent.  N socket pairs, one
 * level-triggered KEVENT_SOCKET (or KEVENT_POLL with -p) RECV
 * registration per pair; each round removes and adds them all again
 * (one REMOVE and one ADD call, new ptr), then passes a byte along the
 * chain W times, harvesting with zero-timeout kevent_get_events().
 * Prints the microseconds of each round's chain.
 *   chain [-p] N W ROUNDS
 *
 * Build: cc -static -O2 -D_GNU_SOURCE -Iinclude -Iinclude/uapi \
 *            -o chain testsuite/peers/repro/chain.c
 * The reproducer of the KEVENT_SOCKET stalls of doc/libevent.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <kevent.h>

int main(int argc, char **argv)
{
	int poll_type = argc > 1 && !strcmp(argv[1], "-p");
	int a = poll_type ? 2 : 1;
	int n = atoi(argv[a]), w = atoi(argv[a + 1]), rounds = atoi(argv[a + 2]);
	struct rlimit rl = { 2 * n + 50, 2 * n + 50 };
	int *fds = calloc(2 * n, sizeof(int)), q, i, r, got, writes, fired;
	struct ukevent *uk = calloc(n, sizeof(*uk)), ev[64];
	struct __kernel_timespec zero = { 0, 0 };
	struct timeval t0, t1;
	char c;

	if (kevent_probe(NULL) || setrlimit(RLIMIT_NOFILE, &rl)) { perror("setup"); return 1; }
	q = kevent_init(NULL, 0, 0);
	for (i = 0; i < n; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds + 2 * i)) { perror("socketpair"); return 1; }
	for (r = 0; r < rounds; r++) {
		if (r) {
			for (i = 0; i < n; i++) uk[i].ptr = (unsigned long long)(r - 1) << 32 | i;
			kevent_ctl(q, KEVENT_CTL_REMOVE, n, uk);
		}
		memset(uk, 0, n * sizeof(*uk));
		for (i = 0; i < n; i++) {
			uk[i].id.raw[0] = fds[2 * i];
			uk[i].type = poll_type ? KEVENT_POLL : KEVENT_SOCKET;
			uk[i].event = poll_type ? KEVENT_POLL_POLLIN : KEVENT_SOCKET_RECV;
			uk[i].req_flags = KEVENT_REQ_ALWAYS_QUEUE;
			uk[i].ptr = (unsigned long long)r << 32 | i;
		}
		if (kevent_ctl(q, KEVENT_CTL_ADD, n, uk) != 0) { fprintf(stderr, "add failed\n"); return 1; }
		gettimeofday(&t0, NULL);
		send(fds[1], "e", 1, 0);
		writes = w; fired = 1; got = 0;
		while (got < fired) {
			int k = kevent_get_events(q, 1, 64, &zero, ev, 0);
			for (i = 0; i < k; i++) {
				int idx = (int)(ev[i].ptr & 0xffffffff);
				if (recv(fds[2 * idx], &c, 1, MSG_DONTWAIT) == 1) got++;
				if (writes) { int nx = (idx + 1) % n; send(fds[2 * nx + 1], "e", 1, 0); writes--; fired++; }
			}
		}
		gettimeofday(&t1, NULL);
		printf("round %d: %ld us\n", r, (t1.tv_sec - t0.tv_sec) * 1000000L + t1.tv_usec - t0.tv_usec);
		fflush(stdout);
	}
	return 0;
}
