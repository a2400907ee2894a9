// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_SIGNAL, the sending of a signal to a thread.
 *
 * id.raw[0] holds the signal number.  A kevent watches the thread that
 * added it: it is reported when that signal is sent to the thread, or to
 * its thread group.  With KEVENT_SIGNAL_NOMASK, bit 63 of id.raw_u64, the
 * signal is taken off the thread: it is reported through the queue only,
 * and never becomes pending.  Each report carries the si_code of the
 * latest send in ret_data[0] and the number of sends since the previous
 * report in ret_data[1].
 *
 * NOMASK acts as a blocked signal would, and no further: the signals the
 * kernel raises for a fault of the thread are delivered anyway, as
 * force_sig_info() unblocks them, and SIGTTIN and SIGTTOU, whose blocked
 * state the terminal driver reads to decide between EIO and a stop, are
 * refused.
 *
 * The thread's storage is allocated at its first ADD and hangs off
 * task_struct.kevent_signal; the signal_struct counts the threads that
 * have one, so that the send path of a process that never watched a
 * signal costs one load.  The pointer changes under siglock only, which
 * the send path holds.  The thread's exit and its execve() release the
 * storage: the registrations are reported broken with -ESRCH, and a new
 * program never has its signals taken by registrations it did not make.
 */

#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>

#include <linux/kevent_signal.h>

#include "kevent.h"
#include "sources.h"

/* Signals the kernel raises for a fault of the thread. */
#define KEVENT_SIGNAL_FAULT_MASK \
	(sigmask(SIGSEGV) | sigmask(SIGBUS) | sigmask(SIGILL) | \
	 sigmask(SIGTRAP) | sigmask(SIGFPE) | sigmask(SIGSYS))

/**
 * struct kevent_signal - the per-kevent data of KEVENT_SIGNAL
 * @sent: sends not yet reported
 * @code: si_code of the latest send
 */
struct kevent_signal {
	atomic_t sent;
	int code;
};

/**
 * struct kevent_signal_hint - a signal being sent, for the kevents
 * @sig: the signal
 * @code: its si_code
 * @fault: raised by the kernel for a fault: NOMASK does not take it
 * @take: set when a NOMASK kevent takes it
 */
struct kevent_signal_hint {
	int sig;
	int code;
	bool fault;
	bool take;
};

/*
 * The signal number: id.raw[0], once the NOMASK bit, which is bit 63 of
 * id.raw_u64 and so lies in raw[0] on big-endian, is cleared.  0 if any
 * other bit of the id is set.
 */
static u32 kevent_signal_number(const struct ukevent *uk)
{
	struct kevent_id id = {
		.raw_u64 = uk->id.raw_u64 & ~KEVENT_SIGNAL_NOMASK,
	};

	return id.raw[1] ? 0 : id.raw[0];
}

static int kevent_signal_code(struct kernel_siginfo *info)
{
	if (info == SEND_SIG_NOINFO)
		return SI_USER;
	if (info == SEND_SIG_PRIV)
		return SI_KERNEL;
	return info->si_code;
}

/*
 * A fault signal the kernel raised (si_code > 0, SI_KERNEL included, as
 * force_sig() sends), not one that kill(), tgkill() or sigqueue() sent.
 */
static bool kevent_signal_is_fault(int sig, int code)
{
	return sig < SIGRTMIN && (sigmask(sig) & KEVENT_SIGNAL_FAULT_MASK) &&
	       code > 0;
}

static int kevent_signal_event(struct kevent *k, void *data)
{
	struct kevent_signal_hint *hint = data;
	struct kevent_signal *s = kevent_priv(k);

	if (kevent_signal_number(&k->uk) != hint->sig)
		return 0;
	WRITE_ONCE(s->code, hint->code);
	kevent_count_add(&s->sent, 1);
	if ((k->uk.id.raw_u64 & KEVENT_SIGNAL_NOMASK) && !hint->fault)
		hint->take = true;
	return 1;
}

/**
 * __kevent_signal_send - report a signal to the kevents that watch it
 * @t: the target task, its siglock held
 * @sig: the signal
 * @info: its siginfo, or SEND_SIG_NOINFO or SEND_SIG_PRIV
 * @type: PIDTYPE_PID for @t alone, else for the whole thread group
 *
 * Called by kevent_signal_send() when a thread of @t's group has signal
 * kevents.
 *
 * Return: true if the signal is taken off the task by a kevent with
 * KEVENT_SIGNAL_NOMASK.
 */
bool __kevent_signal_send(struct task_struct *t, int sig,
			  struct kernel_siginfo *info, enum pid_type type)
{
	struct kevent_signal_hint hint = {
		.sig = sig,
		.code = kevent_signal_code(info),
	};
	struct task_struct *p;

	lockdep_assert_held(&t->sighand->siglock);

	hint.fault = kevent_signal_is_fault(sig, hint.code);
	if (type == PIDTYPE_PID) {
		if (t->kevent_signal)
			kevent_storage_notify(t->kevent_signal,
					      KEVENT_SIGNAL_DELIVERY, &hint);
		return hint.take;
	}
	/* siglock keeps the thread list stable. */
	for_each_thread(t, p)
		if (p->kevent_signal)
			kevent_storage_notify(p->kevent_signal,
					      KEVENT_SIGNAL_DELIVERY, &hint);
	return hint.take;
}

/*
 * The siglock of @tsk, which is current: its sighand changes only under
 * the thread itself (exec), so it is read without RCU.
 */
static spinlock_t *kevent_siglock(struct task_struct *tsk)
{
	return &rcu_dereference_protected(tsk->sighand, tsk == current)->siglock;
}

/**
 * __kevent_signal_release - report and detach the signal kevents of a thread
 * @tsk: the thread, current, in do_exit() or execve()
 *
 * Called by kevent_signal_release() for a thread that has signal kevents.
 * They are reported once with KEVENT_RET_BROKEN and -ESRCH.
 */
void __kevent_signal_release(struct task_struct *tsk)
{
	struct kevent_storage *st;

	spin_lock_irq(kevent_siglock(tsk));
	st = tsk->kevent_signal;
	tsk->kevent_signal = NULL;
	tsk->signal->kevent_signal_threads--;
	spin_unlock_irq(kevent_siglock(tsk));

	/* No kevent can be attached meanwhile: only the thread attaches. */
	kevent_storage_release(st, -ESRCH);
}

/* The storage of the calling thread, made at its first signal kevent. */
static struct kevent_storage *kevent_signal_storage(void)
{
	struct task_struct *tsk = current;
	struct kevent_storage *st = tsk->kevent_signal;

	/* Only the thread itself sets its pointer. */
	if (st)
		return st;
	st = kevent_storage_alloc();
	if (!st)
		return NULL;
	spin_lock_irq(kevent_siglock(tsk));
	tsk->kevent_signal = st;
	tsk->signal->kevent_signal_threads++;
	spin_unlock_irq(kevent_siglock(tsk));
	return st;
}

static int kevent_signal_validate(const struct ukevent *uk)
{
	u32 sig = kevent_signal_number(uk);

	if (sig < 1 || sig > _NSIG || sig_kernel_only(sig) ||
	    !(uk->event & KEVENT_SIGNAL_DELIVERY))
		return -EINVAL;
	if ((uk->id.raw_u64 & KEVENT_SIGNAL_NOMASK) &&
	    (sig == SIGTTIN || sig == SIGTTOU))
		return -EINVAL;
	return 0;
}

static int kevent_signal_enqueue(struct kevent *k)
{
	struct kevent_storage *st = kevent_signal_storage();
	struct kevent_signal *s = kevent_priv(k);

	if (!st)
		return -ENOMEM;
	atomic_set(&s->sent, 0);
	s->code = 0;
	return kevent_storage_attach(st, k);
}

static int kevent_signal_check(struct kevent *k)
{
	struct kevent_signal *s = kevent_priv(k);

	return atomic_read(&s->sent) > 0;
}

static void kevent_signal_fill(struct kevent *k, struct ukevent *out)
{
	struct kevent_signal *s = kevent_priv(k);

	out->ret_data[0] = READ_ONCE(s->code);
	if (!(out->ret_flags & KEVENT_RET_BROKEN))
		out->ret_data[1] = atomic_read(&s->sent);
}

static void kevent_signal_delivered(struct kevent *k,
				    const struct ukevent *out)
{
	struct kevent_signal *s = kevent_priv(k);

	if (!(out->ret_flags & KEVENT_RET_BROKEN))
		atomic_sub(out->ret_data[1], &s->sent);
}

const struct kevent_callbacks kevent_signal_callbacks = {
	.validate	= kevent_signal_validate,
	.enqueue	= kevent_signal_enqueue,
	.dequeue	= kevent_storage_detach,
	.event		= kevent_signal_event,
	.check		= kevent_signal_check,
	.fill		= kevent_signal_fill,
	.delivered	= kevent_signal_delivered,
	.priv_size	= sizeof(struct kevent_signal),
	.name		= "kevent_signal",
};
