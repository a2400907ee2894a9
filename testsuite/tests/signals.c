// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_SIGNAL: signals through a queue, with and without NOMASK (kevent_signal(7)).
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"

static volatile sig_atomic_t hits[_NSIG];

static void handler(int sig)
{
	hits[sig]++;
}

static void catch(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL))
		bail_out("sigaction(%d): %s", sig, strerror(errno));
}

static void disposition(int sig, void (*h)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	if (sigaction(sig, &sa, NULL))
		bail_out("sigaction(%d): %s", sig, strerror(errno));
}

static struct ukevent sig_ukevent(int sig, int nomask, __u32 req_flags,
				  __u64 ptr)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = (__u32)sig;
	if (nomask)
		uk.id.raw_u64 |= KEVENT_SIGNAL_NOMASK;
	uk.type = KEVENT_SIGNAL;
	uk.event = KEVENT_SIGNAL_DELIVERY;
	uk.req_flags = req_flags;
	uk.ptr = ptr;
	return uk;
}

static int is_pending(int sig)
{
	sigset_t set;

	if (sigpending(&set))
		bail_out("sigpending: %s", strerror(errno));
	return sigismember(&set, sig);
}

static void send_self(int sig)
{
	if (kill(getpid(), sig))
		bail_out("kill: %s", strerror(errno));
}

/* One event came, for this signal and ptr, with this code and count. */
static void is_report(int fd, __u64 ptr, int code, __u32 count,
		      const char *what)
{
	struct ukevent uk[2];
	int n = harvest(fd, uk, 2);

	/* Four points whatever n is: the plan stays fixed. */
	if (!is_int(n, 1, "%s: one event", what))
		memset(uk, 0x55, sizeof(uk));
	is_ukevent(uk, UKEV(.type = KEVENT_SIGNAL, .ptr = ptr,
			    .ret_flags = KEVENT_RET_DONE),
		   UK_TYPE | UK_PTR | UK_RET_FLAGS,
		   "%s: KEVENT_SIGNAL with DONE and the caller's ptr", what);
	is_int((int)uk[0].ret_data[0], code, "%s: ret_data[0] is the si_code",
	       what);
	is_int(uk[0].ret_data[1], count, "%s: ret_data[1] counts the sends",
	       what);
}

static void test_invalid(void)
{
	static const struct {
		__u64 id;
		__u32 event;
		const char *what, *tag;
	} t[] = {
		{ 0, KEVENT_SIGNAL_DELIVERY, "signal 0", "signo" },
		{ 65, KEVENT_SIGNAL_DELIVERY, "signal 65", "signo" },
		{ 1000, KEVENT_SIGNAL_DELIVERY, "signal 1000", "signo" },
		{ SIGKILL, KEVENT_SIGNAL_DELIVERY, "SIGKILL", "signo" },
		{ SIGSTOP, KEVENT_SIGNAL_DELIVERY, "SIGSTOP", "signo" },
		{ SIGKILL | KEVENT_SIGNAL_NOMASK, KEVENT_SIGNAL_DELIVERY,
		  "SIGKILL with NOMASK", "signo" },
		{ SIGUSR1 | (1ULL << 32), KEVENT_SIGNAL_DELIVERY,
		  "id bit 32 set", "id-bits" },
		{ SIGUSR1, 0, "event 0", "event" },
		{ SIGUSR1, 0x2, "event 0x2", "event" },
	};
	int fd = anchored_queue();
	struct ukevent uk;
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uk = sig_ukevent(0, 0, 0, i);
		uk.id.raw_u64 = t[i].id;
		uk.event = t[i].event;
		is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 1,
		       "ADD of %s copies the entry back", t[i].what);
		is_ukevent(&uk, UKEV(.ret_flags = KEVENT_RET_BROKEN |
						  KEVENT_RET_DONE,
				     .ret_data = { 0, (__u32)-EINVAL }),
			   UK_RET_FLAGS | UK_RET_DATA1,
			   "ADD of %s: BROKEN|DONE, -EINVAL "
			   "[kevent_signal.7 EINVAL %s]", t[i].what, t[i].tag);
	}
	is_int(add1(fd, sig_ukevent(64, 0, 0, 1)), 0, "signal 64 is accepted");
	is_int(add1(fd, sig_ukevent(1, 1, 0, 1)), 0,
	       "signal 1 with NOMASK is accepted");
	uk = sig_ukevent(64, 0, 0, 1);
	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 1,
	       "signal 64 again, same ptr: copied back [kevent_signal.7 EEXIST]");
	is_ukevent(&uk, UKEV(.ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE,
			     .ret_data = { 0, (__u32)-EEXIST }),
		   UK_RET_FLAGS | UK_RET_DATA1,
		   "signal 64 again, same ptr: EEXIST [kevent_signal.7 EEXIST]");
	close(fd);
}

static void test_without_nomask(void)
{
	int fd = anchored_queue();
	struct ukevent uk = sig_ukevent(SIGUSR1, 0, 0, 0x5101);

	catch(SIGUSR1);
	hits[SIGUSR1] = 0;
	is_int(add1(fd, uk), 0, "plain: ADD");
	is_int(harvest(fd, &uk, 1), 0, "plain: nothing ready before a send");
	send_self(SIGUSR1);
	is_int(hits[SIGUSR1], 1, "plain: kill(): the handler ran");
	is_report(fd, 0x5101, SI_USER, 1, "plain: kill()");
	is_int(harvest(fd, &uk, 1), 0,
	       "plain: level triggered, not reported again without a send");

	pthread_kill(pthread_self(), SIGUSR1);
	is_int(hits[SIGUSR1], 2, "plain: pthread_kill(): the handler ran");
	is_report(fd, 0x5101, SI_TKILL, 1, "plain: pthread_kill()");

	/* Blocked: the signal becomes pending and is reported. */
	{
		sigset_t set, old;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, &old);
		send_self(SIGUSR1);
		ok(is_pending(SIGUSR1), "plain, blocked: the signal is pending");
		is_report(fd, 0x5101, SI_USER, 1, "plain, blocked");
		sigprocmask(SIG_SETMASK, &old, NULL);
		is_int(hits[SIGUSR1], 3,
		       "plain, blocked: the handler ran once unblocked");
	}

	/* Sends before a harvest are counted in one report. */
	send_self(SIGUSR1);
	send_self(SIGUSR1);
	send_self(SIGUSR1);
	is_report(fd, 0x5101, SI_USER, 3, "plain: three kill()s");
	is_int(hits[SIGUSR1], 6, "plain: the handler ran three more times");
	close(fd);
}

static void test_nomask(void)
{
	int fd = anchored_queue();
	struct ukevent uk = sig_ukevent(SIGUSR1, 1, 0, 0x5102);
	union sigval v = { .sival_int = 7 };

	catch(SIGUSR1);
	hits[SIGUSR1] = 0;
	is_int(add1(fd, uk), 0, "NOMASK: ADD");
	send_self(SIGUSR1);
	is_int(hits[SIGUSR1], 0, "NOMASK: kill(): the handler did not run");
	ok(!is_pending(SIGUSR1), "NOMASK: kill(): sigpending() is empty");
	is_report(fd, 0x5102, SI_USER, 1, "NOMASK: kill()");

	pthread_kill(pthread_self(), SIGUSR1);
	is_int(hits[SIGUSR1], 0,
	       "NOMASK: pthread_kill(): the handler did not run");
	ok(!is_pending(SIGUSR1), "NOMASK: pthread_kill(): nothing pending");
	is_report(fd, 0x5102, SI_TKILL, 1, "NOMASK: pthread_kill()");

	if (sigqueue(getpid(), SIGUSR1, v))
		bail_out("sigqueue: %s", strerror(errno));
	is_int(hits[SIGUSR1], 0, "NOMASK: sigqueue(): the handler did not run");
	is_report(fd, 0x5102, SI_QUEUE, 1, "NOMASK: sigqueue()");

	/* Blocked too: still not pending. */
	{
		sigset_t set, old;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, &old);
		send_self(SIGUSR1);
		ok(!is_pending(SIGUSR1),
		   "NOMASK, blocked: the signal is not pending");
		sigprocmask(SIG_SETMASK, &old, NULL);
		is_report(fd, 0x5102, SI_USER, 1, "NOMASK, blocked");
	}

	/* Both kinds for one signal: both reported, the task sees none. */
	is_int(add1(fd, sig_ukevent(SIGUSR1, 0, 0, 0x5102)), 0,
	       "NOMASK and plain: ADD of the plain one, same ptr");
	send_self(SIGUSR1);
	is_int(harvest(fd, &uk, 1) + harvest(fd, &uk, 1), 2,
	       "NOMASK and plain: both reported");
	is_int(hits[SIGUSR1], 0, "NOMASK and plain: the handler did not run");

	/* REMOVE of the NOMASK one gives the signal back to the task. */
	uk = sig_ukevent(SIGUSR1, 1, 0, 0x5102);
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk), 1, "NOMASK: REMOVE");
	is_int(uk.ret_flags, KEVENT_RET_DONE, "NOMASK: REMOVE found it");
	send_self(SIGUSR1);
	is_int(hits[SIGUSR1], 1, "after REMOVE of NOMASK: the handler ran");
	is_report(fd, 0x5102, SI_USER, 1,
		  "after REMOVE of NOMASK: the plain one");
	close(fd);
}

/* A timer signal goes through send_sigqueue(): SI_TIMER, and NOMASK. */
static void test_posix_timer_signal(void)
{
	int fd = anchored_queue();
	struct sigevent sev;
	struct itimerspec its;
	struct ukevent uk;
	timer_t tid;

	catch(SIGUSR2);
	hits[SIGUSR2] = 0;
	is_int(add1(fd, sig_ukevent(SIGUSR2, 1, 0, 0x5103)), 0,
	       "timer signal: ADD NOMASK SIGUSR2");
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR2;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tid))
		bail_out("timer_create: %s", strerror(errno));
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 10 * 1000000;
	its.it_interval.tv_nsec = 10 * 1000000;
	timer_settime(tid, 0, &its, NULL);
	is_int(sys_kevent_get_events(fd, 1, 1, TSP(2, 0), &uk, 0), 1,
	       "timer signal: reported");
	is_int((int)uk.ret_data[0], SI_TIMER, "timer signal: si_code SI_TIMER");
	msleep(50);
	is_int(hits[SIGUSR2], 0, "timer signal: the handler never ran");
	ok(harvest(fd, &uk, 1) == 1 && uk.ret_data[1] >= 2,
	   "timer signal: a periodic timer keeps being reported (%u)",
	   uk.ret_data[1]);
	timer_delete(tid);
	close(fd);
}

static void test_flags(void)
{
	int fd = anchored_queue();
	struct ukevent uk;

	catch(SIGUSR1);

	/* ONESHOT: removed once reported. */
	is_int(add1(fd, sig_ukevent(SIGUSR1, 1, KEVENT_REQ_ONESHOT, 1)), 0,
	       "ONESHOT: ADD");
	send_self(SIGUSR1);
	is_report(fd, 1, SI_USER, 1, "ONESHOT");
	uk = sig_ukevent(SIGUSR1, 1, 0, 1);
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk) == 1 &&
	       (int)uk.ret_data[1] == -ENOENT, 1,
	       "ONESHOT: gone after the report (REMOVE: ENOENT)");
	hits[SIGUSR1] = 0;
	send_self(SIGUSR1);
	is_int(hits[SIGUSR1], 1, "ONESHOT: later signals reach the handler");
	is_int(harvest(fd, &uk, 1), 0, "ONESHOT: and not the queue");

	/* ET: stays, reported again at the next send only. */
	is_int(add1(fd, sig_ukevent(SIGUSR1, 1, KEVENT_REQ_ET, 2)), 0,
	       "ET: ADD");
	send_self(SIGUSR1);
	is_report(fd, 2, SI_USER, 1, "ET: first send");
	is_int(harvest(fd, &uk, 1), 0, "ET: not reported again by itself");
	send_self(SIGUSR1);
	is_report(fd, 2, SI_USER, 1, "ET: second send");

	/* MODIFY to event 0: refused as at ADD; the registration stays. */
	uk = sig_ukevent(SIGUSR1, 1, KEVENT_REQ_ET, 2);
	uk.event = 0;
	is_int(ctl1(fd, KEVENT_CTL_MODIFY, &uk), 1, "MODIFY to event 0");
	is_ukevent(&uk, UKEV(.ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE,
			     .ret_data = { 0, (__u32)-EINVAL }),
		   UK_RET_FLAGS | UK_RET_DATA1,
		   "MODIFY to event 0: BROKEN|DONE, -EINVAL "
		   "[kevent_signal.7 EINVAL event]");
	hits[SIGUSR1] = 0;
	send_self(SIGUSR1);
	is_int(hits[SIGUSR1], 0, "refused MODIFY: NOMASK still takes it");
	is_report(fd, 2, SI_USER, 1, "refused MODIFY: still reported");

	/* MODIFY back with ONESHOT: sends meanwhile make it ready at once. */
	uk = sig_ukevent(SIGUSR1, 1, KEVENT_REQ_ET, 2);
	must(ctl1(fd, KEVENT_CTL_MODIFY, &uk) == 1 &&
	     uk.ret_flags == KEVENT_RET_DONE, "MODIFY back to DELIVERY");
	send_self(SIGUSR1);
	send_self(SIGUSR1);
	is_int(hits[SIGUSR1], 0, "MODIFY back: NOMASK takes the signal again");
	uk = sig_ukevent(SIGUSR1, 1, KEVENT_REQ_ONESHOT, 2);
	is_int(ctl1(fd, KEVENT_CTL_MODIFY, &uk), 1, "MODIFY to ONESHOT");
	is_report(fd, 2, SI_USER, 2, "MODIFY to ONESHOT: both sends");
	is_int(harvest(fd, &uk, 1), 0, "MODIFY to ONESHOT: then removed");

	/* ALWAYS_QUEUE: nothing is ready at ADD, so it is simply kept. */
	uk = sig_ukevent(SIGUSR1, 0, KEVENT_REQ_ALWAYS_QUEUE, 3);
	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 0,
	       "ALWAYS_QUEUE: ADD returns 0 (not ready at ADD)");
	is_int(harvest(fd, &uk, 1), 0, "ALWAYS_QUEUE: nothing queued");
	send_self(SIGUSR1);
	is_report(fd, 3, SI_USER, 1, "ALWAYS_QUEUE");

	/* READY: reported once with no send counted. */
	uk = sig_ukevent(SIGUSR1, 0, KEVENT_REQ_ALWAYS_QUEUE, 3);
	is_int(ctl1(fd, KEVENT_CTL_READY, &uk), 0, "READY");
	is_report(fd, 3, SI_USER, 0, "READY");
	is_int(harvest(fd, &uk, 1), 0, "READY: once");

	/* REMOVE drops a pending report. */
	send_self(SIGUSR1);
	uk = sig_ukevent(SIGUSR1, 0, 0, 3);
	is_int(ctl1(fd, KEVENT_CTL_REMOVE, &uk), 1, "REMOVE a ready one");
	is_int(harvest(fd, &uk, 1), 0, "REMOVE: its report is dropped");
	uk = sig_ukevent(SIGUSR1, 0, 0, 3);
	is_int(ctl1(fd, KEVENT_CTL_MODIFY, &uk), 1, "MODIFY after REMOVE");
	is_int((int)uk.ret_data[1], -ENOENT, "MODIFY after REMOVE: ENOENT");
	close(fd);
}

/* Ignored signals are dropped before a kevent sees them. */
static void test_ignored(void)
{
	int fd = anchored_queue();
	struct ukevent uk;

	disposition(SIGUSR2, SIG_IGN);
	is_int(add1(fd, sig_ukevent(SIGUSR2, 1, 0, 1)), 0, "ignored: ADD");
	is_int(add1(fd, sig_ukevent(SIGUSR2, 0, 0, 1)), 0, "ignored: ADD plain");
	send_self(SIGUSR2);
	is_int(harvest(fd, &uk, 1), 0, "SIG_IGN: not reported");
	disposition(SIGWINCH, SIG_DFL);
	is_int(add1(fd, sig_ukevent(SIGWINCH, 1, 0, 1)), 0,
	       "SIGWINCH: ADD");
	send_self(SIGWINCH);
	is_int(harvest(fd, &uk, 1), 0,
	       "SIGWINCH, default action ignore: not reported");
	close(fd);
}

static void test_not_inherited(void)
{
	int fd = anchored_queue(), status = -1;
	struct ukevent uk;
	pid_t pid;

	catch(SIGUSR1);
	is_int(add1(fd, sig_ukevent(SIGUSR1, 1, 0, 9)), 0, "fork: ADD NOMASK");
	hits[SIGUSR1] = 0;
	pid = fork();
	if (pid == 0) {
		/* The child's signal reaches its handler, not the queue. */
		kill(getpid(), SIGUSR1);
		pthread_kill(pthread_self(), SIGUSR1);
		_exit(hits[SIGUSR1] == 2 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "fork: the child's handler ran for kill() and pthread_kill()");
	is_int(harvest(fd, &uk, 1), 0, "fork: the child's signals are not reported");
	send_self(SIGUSR1);
	is_report(fd, 9, SI_USER, 1, "fork: the parent's still is");
	close(fd);
}

struct thread_arg {
	int fd;
	int sig;
	int nomask;
	pthread_barrier_t *added;
	pthread_barrier_t *done;
	int hits_seen;
	pid_t tid;
};

static void *watcher(void *p)
{
	struct thread_arg *a = p;

	a->tid = (pid_t)syscall(SYS_gettid);
	if (a->fd >= 0 && add1(a->fd, sig_ukevent(a->sig, a->nomask, 0, 77)))
		bail_out("thread ADD: %s", strerror(errno));
	pthread_barrier_wait(a->added);
	if (a->done)
		pthread_barrier_wait(a->done);
	a->hits_seen = hits[a->sig];
	return NULL;
}

static void test_threads(void)
{
	pthread_barrier_t added, done;
	struct thread_arg a;
	struct ukevent uk;
	pthread_t th;
	int fd = anchored_queue();

	catch(SIGUSR2);

	/* kill() from another thread reaches a thread's NOMASK kevent. */
	pthread_barrier_init(&added, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	memset(&a, 0, sizeof(a));
	a.fd = fd;
	a.sig = SIGUSR2;
	a.nomask = 1;
	a.added = &added;
	a.done = &done;
	hits[SIGUSR2] = 0;
	pthread_create(&th, NULL, watcher, &a);
	pthread_barrier_wait(&added);
	send_self(SIGUSR2);
	is_report(fd, 77, SI_USER, 1,
		  "thread: kill() of the process reaches its kevent");
	pthread_kill(th, SIGUSR2);
	is_report(fd, 77, SI_TKILL, 1,
		  "thread: pthread_kill() of the thread reaches its kevent");
	/* Not the main thread's: a signal directed at it is its own. */
	pthread_kill(pthread_self(), SIGUSR2);
	is_int(harvest(fd, &uk, 1), 0,
	       "thread: pthread_kill() of another thread is not reported");
	is_int(hits[SIGUSR2], 1, "thread: that one ran the handler");
	pthread_barrier_wait(&done);
	pthread_join(th, NULL);

	/* Its exit reports the kevent broken, once, and removes it. */
	is_int(harvest(fd, &uk, 1), 1, "thread exit: reported");
	ok(uk.ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
	   uk.ptr == 77, "thread exit: BROKEN|DONE (flags %#x)", uk.ret_flags);
	is_int((int)uk.ret_data[1], -ESRCH, "thread exit: ret_data[1] -ESRCH");
	is_int(harvest(fd, &uk, 1), 0, "thread exit: reported once");
	uk = sig_ukevent(SIGUSR2, 1, 0, 77);
	is_int(add1(fd, uk), 0,
	       "thread exit: the registration is gone (ADD again works)");
	uk = sig_ukevent(SIGUSR2, 1, 0, 77);
	must(ctl1(fd, KEVENT_CTL_REMOVE, &uk) == 1 &&
	     uk.ret_flags == KEVENT_RET_DONE, "REMOVE of the re-added one");

	/* A new thread does not inherit the main thread's kevents. */
	is_int(add1(fd, sig_ukevent(SIGUSR2, 1, 0, 78)), 0,
	       "clone: ADD NOMASK in the main thread");
	pthread_barrier_destroy(&added);
	pthread_barrier_init(&added, NULL, 2);
	memset(&a, 0, sizeof(a));
	a.fd = -1;
	a.sig = SIGUSR2;
	a.added = &added;
	a.done = &done;
	hits[SIGUSR2] = 0;
	pthread_create(&th, NULL, watcher, &a);
	pthread_barrier_wait(&added);
	pthread_kill(th, SIGUSR2);
	pthread_barrier_wait(&done);
	pthread_join(th, NULL);
	is_int(a.hits_seen, 1, "clone: the new thread's handler ran");
	is_int(harvest(fd, &uk, 1), 0,
	       "clone: the main thread's kevent did not see it");
	pthread_barrier_destroy(&added);
	pthread_barrier_destroy(&done);
	close(fd);
}

static void test_two_queues(void)
{
	int q1 = anchored_queue(), q2 = anchored_queue();

	catch(SIGUSR1);
	hits[SIGUSR1] = 0;
	is_int(add1(q1, sig_ukevent(SIGUSR1, 1, 0, 1)), 0, "two queues: ADD 1");
	is_int(add1(q2, sig_ukevent(SIGUSR1, 0, 0, 2)), 0, "two queues: ADD 2");
	send_self(SIGUSR1);
	is_report(q1, 1, SI_USER, 1, "two queues: the first");
	is_report(q2, 2, SI_USER, 1, "two queues: the second");
	is_int(hits[SIGUSR1], 0, "two queues: NOMASK in one keeps it off");
	close(q1);
	send_self(SIGUSR1);
	is_int(hits[SIGUSR1], 1, "two queues: closing it gives it back");
	is_report(q2, 2, SI_USER, 1, "two queues: the second still");
	close(q2);
}

static sigjmp_buf fault_jmp;
static int fault_fd;

static void fault_handler(int sig)
{
	(void)sig;
	siglongjmp(fault_jmp, 1);
}

/* NOMASK does not keep a fault's signal off the thread. */
static void test_fault(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct ukevent uk;

		alarm(10);
		fault_fd = anchored_queue();
		disposition(SIGSEGV, fault_handler);
		if (add1(fault_fd, sig_ukevent(SIGSEGV, 1, 0, 1)))
			_exit(2);
		if (sigsetjmp(fault_jmp, 1) == 0)
			*(volatile int *)unmapped_page() = 1;
		else if (harvest(fault_fd, &uk, 1) == 1 &&
			 uk.ret_data[0] == SEGV_MAPERR)
			_exit(0);
		_exit(1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "fault: SIGSEGV reached the handler despite NOMASK, and the queue (status %#x)",
	   status);
}

int main(void)
{
	plan(179);
	tap_watchdog(60);
	kevent_require();
	test_invalid();
	test_without_nomask();
	test_nomask();
	test_posix_timer_signal();
	test_flags();
	test_ignored();
	test_not_inherited();
	test_threads();
	test_two_queues();
	test_fault();
	return tap_done();
}
