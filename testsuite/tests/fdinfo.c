// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/fdinfo of a queue: registrations and ring indexes (kevent(7), /proc interfaces).
 *
 * Conformance: checks the fdinfo lines that kevent(7) documents (their
 * names and values); their layout is this tree's.
 */
#include <fcntl.h>

#include "tap.h"
#include "kevent_sys.h"

/* The fdinfo text of fd, or "" if it cannot be read. */
static const char *fdinfo(int fd)
{
	static char buf[4096];
	char path[64];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	buf[0] = '\0';
	f = open(path, O_RDONLY);
	if (f < 0)
		return buf;
	n = read(f, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(f);
	return buf;
}

static int has(const char *text, const char *line)
{
	return strstr(text, line) != NULL;
}

/* The lines of text that start with prefix. */
static int lines(const char *text, const char *prefix)
{
	int n = 0;

	while (text) {
		n += !strncmp(text, prefix, strlen(prefix));
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	return n;
}

int main(void)
{
	struct kevent_ring *ring = ring_alloc(8, NULL);
	const char *info, *timer_line, *pipe_line;
	char want[128];
	int q, p[2];

	plan(12);
	kevent_require();
	tap_watchdog(18);

	q = sys_kevent_init(NULL, 0, 0);
	info = fdinfo(q);
	ok(has(info, "kevents:\t0\n") && has(info, "ready:\t0\n"),
	   "an empty queue shows 0 kevents and 0 ready");
	ok(!has(info, "ring_size:"), "a queue without a ring shows no ring");
	close(q);

	q = sys_kevent_init(ring, 8, 0);
	must(q >= 0, "kevent_init(ring, 8): %s", strerror(errno));
	if (pipe(p))
		bail_out("pipe");
	must(!add1(q, timer_ukevent(0, 10 * 1000000, KEVENT_REQ_ONESHOT,
				    0x1234)),
	     "ADD of the timer: %s", strerror(errno));
	must(!add1(q, poll_ukevent(p[0], KEVENT_POLL_POLLIN, 0, 0)),
	     "ADD of the pipe: %s", strerror(errno));
	msleep(50);
	info = fdinfo(q);
	ok(has(info, "kevents:\t2\n"), "two registrations: kevents 2");
	ok(has(info, "ready:\t1\n"), "the fired timer: ready 1");
	ok(has(info, "ring_size:\t8\nkidx:\t0\nuidx:\t0\nused:\t0\nover:\t0\n"),
	   "the ring's size and indexes, all 0 before any wait");
	snprintf(want, sizeof(want),
		 "kevent:\ttype 2 id %llx event 1 req_flags 1 user 1234 ready 1\n",
		 (unsigned long long)10000000 << 32);
	timer_line = strstr(info, want);
	ok(timer_line != NULL, "the timer's line: type, id, event, flags, "
	   "user, ready");
	snprintf(want, sizeof(want),
		 "kevent:\ttype 3 id %x event 1 req_flags 0 user 0 ready 0\n",
		 p[0]);
	pipe_line = strstr(info, want);
	ok(pipe_line != NULL, "the pipe's line");
	ok(lines(info, "kevent:\t") == 2,
	   "one line per registration: 2 lines for kevents 2");

	is_int(sys_kevent_wait(q, 8, 0, TSP(1, 0), 0), 1,
	       "kevent_wait moves the timer into the ring");
	info = fdinfo(q);
	ok(has(info, "kevents:\t1\n") && has(info, "kidx:\t1\n") &&
	   has(info, "used:\t1\n"),
	   "after the wait: 1 kevent left, kidx 1, used 1");
	is_int(sys_kevent_commit(q, 1, 0), 1, "commit the slot");
	info = fdinfo(q);
	ok(has(info, "uidx:\t1\n") && has(info, "used:\t0\n"),
	   "after the commit: uidx 1, used 0");
	close(p[0]);
	close(p[1]);
	close(q);
	return tap_done();
}
