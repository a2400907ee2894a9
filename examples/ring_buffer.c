// SPDX-License-Identifier: GPL-2.0
/*
 * Consuming events from a kevent ring with kevent_init(), kevent_wait()
 * and kevent_commit().  Creates a queue with a ring of SIZE slots
 * (default 4) and two periodic timers (5 and 7 ms).  The consumer loop
 * lets kevent_wait() move ready events into the ring, reads the slots
 * from its own index up to ring_kidx and frees them with
 * kevent_commit(), passing the wrap count of the new index.  It stops
 * after NR events (default 100), having wrapped the ring many times,
 * and exits with EXIT_SUCCESS only if every index, event and wrap
 * count was as expected.
 *
 * Illustrates kevent_wait(2), kevent_commit(2) and kevent(7).
 *
 * Build: cc -static -Wall -I include/uapi -o ring_buffer examples/ring_buffer.c
 * Usage: ./ring_buffer [NR [SIZE]]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kevent.h>
#include <linux/time_types.h>

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

static int kevent_wait(int fd, unsigned int num, unsigned int old_uidx,
		       const struct __kernel_timespec *timeout,
		       unsigned int flags)
{
	return syscall(__NR_kevent_wait, fd, num, old_uidx, timeout, flags);
}

static int kevent_commit(int fd, unsigned int new_uidx, unsigned int over)
{
	return syscall(__NR_kevent_commit, fd, new_uidx, over);
}

int main(int argc, char *argv[])
{
	struct __kernel_timespec timeout = { .tv_sec = 2, .tv_nsec = 0 };
	unsigned int nr = 100, size = 4, uidx = 0, over = 0, total = 0;
	unsigned int i, new_uidx;
	struct kevent_ring *ring;
	struct ukevent uk[2], *e;
	int fd, n;

	if (argc > 1)
		nr = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		size = strtoul(argv[2], NULL, 0);
	if (argc > 3 || nr == 0 || size == 0 || size > 4096) {
		fprintf(stderr, "Usage: %s [NR [SIZE]]\n", argv[0]);
		exit(EXIT_FAILURE);
	}
	ring = malloc(sizeof(*ring) + size * sizeof(struct ukevent));
	if (ring == NULL) {
		perror("malloc");
		exit(EXIT_FAILURE);
	}
	fd = kevent_init(ring, size, 0);
	if (fd == -1) {
		perror("kevent_init");
		exit(EXIT_FAILURE);
	}
	memset(uk, 0, sizeof(uk));
	for (i = 0; i < 2; i++) {
		uk[i].id.raw[1] = (5 + 2 * i) * 1000000;	/* 5, 7 ms */
		uk[i].type = KEVENT_TIMER;
		uk[i].event = KEVENT_TIMER_FIRED;
		uk[i].ptr = 5 + 2 * i;
	}
	if (kevent_ctl(fd, KEVENT_CTL_ADD, 2, uk) != 0) {
		perror("kevent_ctl");
		exit(EXIT_FAILURE);
	}
	while (total < nr) {
		/* Sleeps only if uidx is still the kernel's index. */
		n = kevent_wait(fd, size, uidx, &timeout, 0);
		if (n <= 0) {		/* error, or timeout: no event in 2 s */
			fprintf(stderr, "kevent_wait: %s\n",
				n ? strerror(errno) : "timeout");
			exit(EXIT_FAILURE);
		}
		new_uidx = (uidx + n) % size;
		printf("kevent_wait: %d events in slots %u..%u, ring_kidx %u\n",
		       n, uidx, (uidx + n - 1) % size, ring->ring_kidx);
		if (ring->ring_kidx != new_uidx)
			exit(EXIT_FAILURE);	/* kernel index is wrong */
		for (i = 0; i < (unsigned int)n; i++) {
			e = &ring->event[(uidx + i) % size];
			printf("  slot %u: timer %llu ms, expiries %u, at %u ms\n",
			       (uidx + i) % size, (unsigned long long)e->ptr,
			       e->ret_data[1], e->ret_data[0]);
			if (e->type != KEVENT_TIMER ||
			    e->ret_flags != KEVENT_RET_DONE ||
			    (e->ptr != 5 && e->ptr != 7))
				exit(EXIT_FAILURE);	/* not our timer */
		}
		if (uidx + n >= size)	/* the committed index wraps */
			over++;
		if (kevent_commit(fd, new_uidx, over) != n) {
			perror("kevent_commit");
			exit(EXIT_FAILURE);
		}
		if (ring->ring_over != over)
			exit(EXIT_FAILURE);	/* wrap count is wrong */
		uidx = new_uidx;
		total += n;
	}
	printf("%u events through a ring of %u slots, %u wraps\n",
	       total, size, over);
	if (close(fd) == -1) {
		perror("close");
		exit(EXIT_FAILURE);
	}
	free(ring);
	exit(EXIT_SUCCESS);
}
