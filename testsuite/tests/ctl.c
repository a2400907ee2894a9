// SPDX-License-Identifier: GPL-2.0
/*
 * Description: kevent_ctl(2) commands, per-entry errors and call errors.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "../lib/tap.h"
#include "../lib/kevent_sys.h"

#define BROKEN_DONE	(KEVENT_RET_BROKEN | KEVENT_RET_DONE)


/* Would kevent_get_events() return an event now?  (poll(2) says.) */
static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/*
 * Check that uk came back as a per-entry error -err; what names the
 * case and the tags of the statement it checks.
 */
#define is_entry_err(uk, err, what)					\
	is_ukevent((uk), UKEV(.ret_flags = BROKEN_DONE,			\
			      .ret_data = { 0, (__u32)-(err) }),	\
		   UK_RET_FLAGS | UK_RET_DATA1,				\
		   "%s: entry has BROKEN|DONE and ret_data[1] = -%s "	\
		   "[KEVENT_RET_BROKEN.2const]", (what), strerror(err))

static void test_add_remove(void)
{
	int fd = new_queue(0);
	struct ukevent uk = timer_ms(10000, 0, 1), again;

	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 0,
	       "ADD of a timer returns 0 (registered, nothing copied back) "
	       "[KEVENT_CTL_ADD.2const]");
	again = uk;
	is_int(ctl1(fd, KEVENT_CTL_ADD, &again), 1,
	       "ADD of the same (type, id, user) copies one entry back "
	       "[KEVENT_CTL_ADD.2const]");
	is_entry_err(&again, EEXIST, "duplicate ADD [kevent_ctl.2 EEXIST] "
		     "[kevent_timer.7 EEXIST]");

	again = timer_ms(10000, 0, 2);
	is_int(ctl1(fd, KEVENT_CTL_ADD, &again), 0,
	       "same type and id with a different user is a new registration");

	uk = timer_ms(10000, 0, 1);
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk), 1,
	       "REMOVE returns num [KEVENT_CTL_REMOVE.2const]");
	is_int(uk.ret_flags, KEVENT_RET_DONE,
	       "REMOVE of a registration: entry has DONE only "
	       "[KEVENT_CTL_REMOVE.2const] [KEVENT_RET_DONE.2const]");
	uk = timer_ms(10000, 0, 2);
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk), 1,
	       "REMOVE of the second user's registration returns num");
	is_int(uk.ret_flags, KEVENT_RET_DONE,
	       "the other user's registration was still there");

	is_err(ctl1(fd, KEVENT_CTL_REMOVE, &uk), EINVAL,
	       "REMOVE with num > registrations (0) is EINVAL "
	       "[kevent_ctl.2 EINVAL num-too-big]");
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_ADD, 0, NULL), 0,
	       "ADD with num 0 returns 0");
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_REMOVE, 0, NULL), 0,
	       "REMOVE with num 0 returns 0");
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_MODIFY, 0, NULL), 0,
	       "MODIFY with num 0 returns 0");
	close(fd);
}

static void test_add_compacts(void)
{
	int fd = new_queue(0);
	struct ukevent uk[5], rm[3];
	int i;

	uk[0] = timer_ms(10000, 0, 10);
	uk[1] = timer_ms(10000, 0, 11);
	uk[1].type = 100;
	uk[2] = timer_ms(10000, 0, 12);
	uk[3] = timer_ms(10000, 0, 13);
	uk[3].req_flags = 1U << 20;
	uk[4] = timer_ms(10000, 0, 14);

	is_int(sys_kevent_ctl(fd, KEVENT_CTL_ADD, 5, uk), 2,
	       "ADD of 5 entries, 2 failing, returns 2 [KEVENT_CTL_ADD.2const]");
	is_int(uk[0].ptr, 11, "first failed entry is compacted to arg[0] "
	       "[KEVENT_CTL_ADD.2const]");
	is_entry_err(&uk[0], ENOSYS, "type 100 in a batch "
		     "[kevent_ctl.2 ENOSYS type-max]");
	is_int(uk[1].ptr, 13, "second failed entry is compacted to arg[1] "
	       "[KEVENT_CTL_ADD.2const]");
	is_entry_err(&uk[1], EINVAL, "unknown req_flags in a batch "
		     "[kevent_ctl.2 EINVAL req-flags]");

	for (i = 0; i < 3; i++)
		rm[i] = timer_ms(10000, 0, (__u64)(10 + 2 * i));
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_REMOVE, 3, rm), 3,
	       "REMOVE of the 3 good entries returns 3");
	ok(rm[0].ret_flags == KEVENT_RET_DONE &&
	   rm[1].ret_flags == KEVENT_RET_DONE &&
	   rm[2].ret_flags == KEVENT_RET_DONE,
	   "the 3 good entries of the batch were registered");
	close(fd);
}

static void test_enosys(void)
{
	static const struct {
		__u32 type;
		const char *name, *tag;
	} t[] = {
		{ KEVENT_MAX, "type 9 (KEVENT_MAX)", "type-max" },
		{ 100, "type 100", "type-max" },
		{ 0xffffffffU, "type 0xffffffff", "type-max" },
		{ KEVENT_INODE, "KEVENT_INODE", "no-source" },
		{ KEVENT_NAIO, "KEVENT_NAIO", "no-source" },
		{ KEVENT_AIO, "KEVENT_AIO", "no-source" },
		{ KEVENT_POSIX_TIMER, "KEVENT_POSIX_TIMER (kernel-only)",
		  "posix-timer" },
	};
	struct ukevent uk;
	char what[128];
	unsigned int i;
	int fd = new_queue(0);

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uk = timer_ms(1000, 0, i);
		uk.type = t[i].type;
		uk.event = KEVENT_MASK_ALL;
		snprintf(what, sizeof(what), "ADD of %s [kevent_ctl.2 ENOSYS %s]",
			 t[i].name, t[i].tag);
		is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 1,
		       "%s copies the entry back", what);
		is_entry_err(&uk, ENOSYS, what);
	}
	close(fd);
}

static void test_bad_req_flags(void)
{
	int fd = new_queue(0);
	struct ukevent uk = timer_ms(10000, 1U << 5, 1);

	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 1,
	       "ADD with req_flags bit 5 copies the entry back");
	is_entry_err(&uk, EINVAL, "ADD with req_flags 0x20 "
		     "[kevent_ctl.2 EINVAL req-flags]");
	uk = timer_ms(10000, 1U << 31, 1);
	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 1,
	       "ADD with req_flags bit 31 copies the entry back");
	is_entry_err(&uk, EINVAL, "ADD with req_flags 0x80000000 "
		     "[kevent_ctl.2 EINVAL req-flags]");

	uk = timer_ms(10000, 0, 1);
	setup_add(fd, uk);
	uk.req_flags = KEVENT_REQ_ONESHOT | (1U << 7);
	is_int(ctl1(fd, KEVENT_CTL_MODIFY, &uk), 1, "MODIFY returns num");
	is_entry_err(&uk, EINVAL, "MODIFY to req_flags with bit 7 "
		     "[kevent_ctl.2 EINVAL req-flags]");
	close(fd);
}

static void test_enoent(void)
{
	int fd = new_queue(0);
	struct ukevent uk[3];
	int i;

	for (i = 0; i < 3; i++)
		setup_add(fd, timer_ms(10000, 0, (__u64)(20 + i)));

	/* REMOVE: missing entry in the middle, reported in place. */
	uk[0] = timer_ms(10000, 0, 20);
	uk[1] = timer_ms(10000, 0, 99);
	uk[2] = timer_ms(10000, 0, 21);
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_REMOVE, 3, uk), 3,
	       "REMOVE with one missing entry still returns num");
	is_int(uk[0].ret_flags, KEVENT_RET_DONE, "REMOVE: arg[0] DONE");
	is_entry_err(&uk[1], ENOENT, "REMOVE of a missing entry (in place) "
		     "[kevent_ctl.2 ENOENT]");
	is_int(uk[1].ptr, 99, "REMOVE: the missing entry stays at arg[1]");
	is_int(uk[2].ret_flags, KEVENT_RET_DONE, "REMOVE: arg[2] DONE");

	/* Two registrations left: 20+2=22, and re-add 20 and 21. */
	setup_add(fd, timer_ms(10000, 0, 20));
	setup_add(fd, timer_ms(10000, 0, 21));

	uk[0] = timer_ms(10000, 0, 98);
	uk[1] = timer_ms(10000, KEVENT_REQ_ONESHOT, 22);
	uk[2] = timer_ms(20000, 0, 22);	/* other id, same user */
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_MODIFY, 3, uk), 3,
	       "MODIFY with two missing entries returns num");
	is_entry_err(&uk[0], ENOENT, "MODIFY of a missing entry (in place) "
		     "[kevent_ctl.2 ENOENT]");
	is_int(uk[1].ret_flags, KEVENT_RET_DONE, "MODIFY: arg[1] DONE");
	is_entry_err(&uk[2], ENOENT,
		     "MODIFY: id is part of the identity (other id) "
		     "[kevent_ctl.2 ENOENT]");

	/* READY: missing ones compacted to the front. */
	uk[0] = timer_ms(10000, 0, 97);
	uk[1] = timer_ms(10000, 0, 20);
	uk[2] = timer_ms(10000, 0, 96);
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_READY, 3, uk), 2,
	       "READY returns the number of entries copied back (2 missing) "
	       "[KEVENT_CTL_READY.2const]");
	is_int(uk[0].ptr, 97, "READY: first missing entry at arg[0] "
	       "[KEVENT_CTL_READY.2const]");
	is_entry_err(&uk[0], ENOENT, "READY of a missing entry "
		     "[kevent_ctl.2 ENOENT]");
	is_int(uk[1].ptr, 96, "READY: second missing entry compacted to "
	       "arg[1] [KEVENT_CTL_READY.2const]");
	is_entry_err(&uk[1], ENOENT, "READY of the second missing entry "
		     "[kevent_ctl.2 ENOENT]");

	/* The type is part of the identity, too. */
	uk[0] = timer_ms(10000, 0, 20);
	uk[0].type = KEVENT_POLL;
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk[0]), 1,
	       "REMOVE of (POLL, id, user) of a timer returns num");
	is_entry_err(&uk[0], ENOENT, "REMOVE with another type "
		     "[kevent_ctl.2 ENOENT]");
	close(fd);
}

static void test_num_too_large(void)
{
	int fd = new_queue(0);
	struct ukevent uk[3];

	setup_add(fd, timer_ms(10000, 0, 1));
	setup_add(fd, timer_ms(10000, 0, 2));
	uk[0] = timer_ms(10000, 0, 1);
	uk[1] = timer_ms(10000, 0, 2);
	uk[2] = timer_ms(10000, 0, 3);
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_REMOVE, 3, uk), EINVAL,
	       "REMOVE with num 3 > 2 registrations is EINVAL "
	       "[kevent_ctl.2 EINVAL num-too-big]");
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_MODIFY, 3, uk), EINVAL,
	       "MODIFY with num 3 > 2 registrations is EINVAL "
	       "[kevent_ctl.2 EINVAL num-too-big]");
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_READY, 3, uk), EINVAL,
	       "READY with num 3 > 2 registrations is EINVAL "
	       "[kevent_ctl.2 EINVAL num-too-big]");
	is_int(sys_kevent_ctl(fd, KEVENT_CTL_REMOVE, 2, uk), 2,
	       "the failed calls removed nothing: REMOVE of both returns 2");
	ok(uk[0].ret_flags == KEVENT_RET_DONE &&
	   uk[1].ret_flags == KEVENT_RET_DONE,
	   "both registrations were still there");
	close(fd);
}

static void test_bad_cmd_and_fd(void)
{
	int fd = new_queue(0), closed, p[2], null;
	struct ukevent uk = timer_ms(10000, 0, 1);

	/* A descriptor number that nothing below can reuse. */
	closed = dup2(fd, 999);
	close(closed);
	is_err(ctl1(fd, 4, &uk), EINVAL, "unknown cmd 4 is EINVAL "
	       "[kevent_ctl.2 EINVAL bad-cmd]");
	is_err(ctl1(fd, 0x80000000U, &uk), EINVAL,
	       "unknown cmd 0x80000000 is EINVAL [kevent_ctl.2 EINVAL bad-cmd]");
	is_err(ctl1(-1, KEVENT_CTL_ADD, &uk), EBADF, "fd -1 is EBADF "
	       "[kevent_ctl.2 EBADF]");
	is_err(ctl1(closed, KEVENT_CTL_ADD, &uk), EBADF,
	       "a closed fd is EBADF [kevent_ctl.2 EBADF]");
	if (pipe(p))
		bail_out("pipe");
	is_err(ctl1(p[0], KEVENT_CTL_ADD, &uk), EINVAL,
	       "a pipe is not a queue: EINVAL [kevent_ctl.2 EINVAL not-queue]");
	null = open("/dev/null", O_RDWR);
	is_err(ctl1(null, KEVENT_CTL_ADD, &uk), EINVAL,
	       "/dev/null is not a queue: EINVAL "
	       "[kevent_ctl.2 EINVAL not-queue]");
	is_err(sys_kevent_get_events(p[0], 0, 1, TSP(0, 0), &uk, 0), EINVAL,
	       "kevent_get_events on a pipe: EINVAL "
	       "[kevent_get_events.2 EINVAL not-queue]");
	is_err(sys_kevent_get_events(closed, 0, 1, TSP(0, 0), &uk, 0), EBADF,
	       "kevent_get_events on a closed fd: EBADF "
	       "[kevent_get_events.2 EBADF]");
	is_err(sys_kevent_wait(null, 1, 0, TSP(0, 0), 0), EINVAL,
	       "kevent_wait on /dev/null: EINVAL "
	       "[kevent_wait.2 EINVAL not-queue]");
	is_err(sys_kevent_wait(-1, 1, 0, TSP(0, 0), 0), EBADF,
	       "kevent_wait on fd -1: EBADF [kevent_wait.2 EBADF]");
	is_err(sys_kevent_commit(p[1], 0, 0), EINVAL,
	       "kevent_commit on a pipe: EINVAL "
	       "[kevent_commit.2 EINVAL not-queue]");
	is_err(sys_kevent_commit(closed, 0, 0), EBADF,
	       "kevent_commit on a closed fd: EBADF [kevent_commit.2 EBADF]");
	close(p[0]);
	close(p[1]);
	close(null);
	close(fd);
}

static void test_efault(void)
{
	int fd = new_queue(0);
	struct ukevent *hole = unmapped_page(), bad, *ro;

	is_err(sys_kevent_ctl(fd, KEVENT_CTL_ADD, 1, NULL), EFAULT,
	       "ADD with arg NULL is EFAULT [kevent_ctl.2 EFAULT]");
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_ADD, 1, hole), EFAULT,
	       "ADD with arg in unmapped memory is EFAULT [kevent_ctl.2 EFAULT]");

	setup_add(fd, timer_ms(10000, 0, 1));
	setup_add(fd, timer_ms(10000, 0, 2));
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_REMOVE, 1, NULL), EFAULT,
	       "REMOVE with arg NULL is EFAULT [kevent_ctl.2 EFAULT]");
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_MODIFY, 2, hole), EFAULT,
	       "MODIFY with arg in unmapped memory is EFAULT "
	       "[kevent_ctl.2 EFAULT]");
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_READY, 1, hole), EFAULT,
	       "READY with arg in unmapped memory is EFAULT "
	       "[kevent_ctl.2 EFAULT]");

	/* An entry that fails must be written back: read-only arg. */
	bad = timer_ms(10000, 0, 3);
	bad.type = 100;
	ro = readonly_copy(&bad, sizeof(bad));
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_ADD, 1, ro), EFAULT,
	       "ADD whose copy-back hits read-only memory is EFAULT "
	       "[kevent_ctl.2 EFAULT]");
	munmap(ro, 4096);

	/* REMOVE writes every entry back. */
	bad = timer_ms(10000, 0, 2);
	ro = readonly_copy(&bad, sizeof(bad));
	is_err(sys_kevent_ctl(fd, KEVENT_CTL_REMOVE, 1, ro), EFAULT,
	       "REMOVE with arg in read-only memory is EFAULT "
	       "[kevent_ctl.2 EFAULT]");
	munmap(ro, 4096);
	close(fd);
}

static void test_modify(void)
{
	int fd = new_queue(0);
	struct ukevent uk = timer_ms(20, 0, 5), buf[4];
	int n;

	setup_add(fd, timer_ms(10000, 0, 1));	/* keeps num <= registrations */
	setup_add(fd, uk);
	n = sys_kevent_get_events(fd, 1, 4, TSP(2, 0), buf, 0);
	ok(n == 1 && buf[0].ptr == 5, "the periodic 20 ms timer fires");

	uk.req_flags = KEVENT_REQ_ONESHOT;
	uk.ret_flags = 0x55;
	uk.ret_data[0] = 0x1234;
	is_int(ctl1(fd, KEVENT_CTL_MODIFY, &uk), 1, "MODIFY returns num "
	       "[KEVENT_CTL_MODIFY.2const]");
	is_int(uk.ret_flags, KEVENT_RET_DONE, "MODIFY of it: entry DONE "
	       "[KEVENT_CTL_MODIFY.2const]");

	n = sys_kevent_get_events(fd, 1, 4, TSP(2, 0), buf, 0);
	is_event(n, buf, UKEV(.ptr = 5, .req_flags = KEVENT_REQ_ONESHOT),
		 UK_PTR | UK_REQ_FLAGS,
		 "after MODIFY the event carries the new req_flags "
		 "[KEVENT_CTL_MODIFY.2const]");
	is_event(n, buf, UKEV(.ret_flags = KEVENT_RET_DONE), UK_RET_FLAGS,
		 "MODIFY cleared the old return flags [KEVENT_CTL_MODIFY.2const]");
	is_int(sys_kevent_get_events(fd, 1, 4, TSP(0, 100000000), buf, 0), 0,
	       "modified to ONESHOT: not delivered again within 100 ms "
	       "[KEVENT_REQ_ONESHOT.2const]");
	uk = timer_ms(20, 0, 5);
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk), 1, "REMOVE returns num");
	is_entry_err(&uk, ENOENT, "the ONESHOT timer is gone after delivery "
		     "[kevent_ctl.2 ENOENT] [KEVENT_REQ_ONESHOT.2const]");
	close(fd);
}

static void test_ready(void)
{
	int fd = new_queue(0);
	struct ukevent uk = timer_ms(10000, 0, 7), buf[4];
	int n;

	setup_add(fd, uk);
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0), 0,
	       "a 10 s timer is not ready");
	is_int(ctl1(fd, KEVENT_CTL_READY, &uk), 0,
	       "READY of a registration returns 0 (nothing copied back) "
	       "[KEVENT_CTL_READY.2const]");
	n = sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0);
	is_int(n, 1, "READY queued the registration [KEVENT_CTL_READY.2const]");
	is_event(n, buf, UKEV(.type = KEVENT_TIMER, .id.raw = { 10, 0 },
			      .ptr = 7), UK_KEY,
		 "the delivered event is the registration (type, id, ptr) "
		 "[KEVENT_CTL_READY.2const]");
	is_int(buf[0].ret_flags, KEVENT_RET_DONE,
	       "an event made ready by READY has DONE "
	       "[KEVENT_CTL_READY.2const] [KEVENT_RET_DONE.2const]");
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0), 0,
	       "it is delivered once");

	/* READY twice before delivery: on the ready queue only once. */
	is_int(ctl1(fd, KEVENT_CTL_READY, &uk) + ctl1(fd, KEVENT_CTL_READY, &uk),
	       0, "READY twice: both calls return 0");
	is_int(sys_kevent_get_events(fd, 0, 4, TSP(0, 0), buf, 0), 1,
	       "READY twice: delivered once");
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk), 1,
	       "a delivered periodic timer is still registered (REMOVE)");
	is_int(uk.ret_flags, KEVENT_RET_DONE, "REMOVE found it");
	close(fd);
}

/* REMOVE of a ready registration drops the pending event. */
static void test_remove_ready(void)
{
	int fd = new_queue(0);
	struct ukevent uk = timer_ms(10000, 0, 8), buf[2];

	is_int(add1(fd, uk), 0, "REMOVE of a ready one: ADD of a 10 s timer");
	is_int(ctl1(fd, KEVENT_CTL_READY, &uk), 0,
	       "REMOVE of a ready one: READY of it returns 0");
	ok(readable(fd), "REMOVE of a ready one: the queue polls readable");
	uk = timer_ms(10000, 0, 8);
	ok(ctl1(fd, KEVENT_CTL_REMOVE, &uk) == 1 &&
	   uk.ret_flags == KEVENT_RET_DONE,
	   "REMOVE of a ready one: REMOVE finds it (DONE)");
	ok(!readable(fd), "REMOVE of a ready one: the queue is no longer readable");
	is_int(sys_kevent_get_events(fd, 0, 2, TSP(0, 0), buf, 0), 0,
	       "REMOVE of a ready registration drops its pending event");
	close(fd);
}

struct waiter {
	int fd;
	int entering;
	pid_t tid;
	int ret;
	int err;
	long long start, end;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ukevent buf[4];

	w->tid = (pid_t)syscall(SYS_gettid);
	w->start = now_ns();
	__atomic_store_n(&w->entering, 1, __ATOMIC_SEQ_CST);
	w->ret = sys_kevent_get_events(w->fd, 1, 4, TSP(8, 0), buf, 0);
	w->err = errno;
	w->end = now_ns();
	return NULL;
}

static void test_ready_wakes(void)
{
	struct waiter w = { .fd = new_queue(0) };
	pthread_t th;
	int asleep;

	if (pthread_create(&th, NULL, waiter_main, &w))
		bail_out("pthread_create");
	while (!__atomic_load_n(&w.entering, __ATOMIC_SEQ_CST))
		msleep(1);
	asleep = wait_sleeping(w.tid, 3000);
	ok(asleep, "a thread blocks in kevent_get_events on an empty queue");
	msleep(20);
	is_int(sys_kevent_ctl(w.fd, KEVENT_CTL_READY, 0, NULL), 0,
	       "READY with num 0 returns 0 [KEVENT_CTL_READY.2const]");
	pthread_join(th, NULL);
	is_int(w.ret, 0, "the woken kevent_get_events returns 0 "
	       "[KEVENT_CTL_READY.2const]");
	ok((w.end - w.start) / 1000000 < 4000,
	   "READY with num 0 woke it before its 8 s timeout (%lld ms) "
	   "[KEVENT_CTL_READY.2const]", (w.end - w.start) / 1000000);
	close(w.fd);
}

int main(void)
{
	plan(107);
	tap_watchdog(18);
	kevent_require();
	test_add_remove();
	test_add_compacts();
	test_enosys();
	test_bad_req_flags();
	test_enoent();
	test_num_too_large();
	test_bad_cmd_and_fd();
	test_efault();
	test_modify();
	test_ready();
	test_remove_ready();
	test_ready_wakes();
	return tap_done();
}
