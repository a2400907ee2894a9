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
 * The thread's storage is allocated at its first ADD and hangs off
 * task_struct.kevent_signal; the signal_struct counts the threads that have
 * one, so that the send path of a process that never watched a signal
 * costs one load.  The pointer changes under siglock only, which the send
 * path holds, and the storage is freed an RCU grace period after the
 * thread's exit has reported its kevents broken.
 */

#include <linux/lockdep.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/slab.h>

#include <linux/kevent_signal.h>

#include "kevent.h"
#include "sources.h"

/*
 * Signals the kernel raises for a fault of the thread.  NOMASK does not
 * keep such a signal off the thread: the faulting instruction would run
 * again for ever.
 */
#define KEVENT_SIGNAL_FAULT_MASK \
	(sigmask(SIGSEGV) | sigmask(SIGBUS) | sigmask(SIGILL) | \
	 sigmask(SIGTRAP) | sigmask(SIGFPE) | sigmask(SIGSYS))

/**
 * struct kevent_signal_storage - the signal kevents of one thread
 * @st: the storage
 * @rcu: frees it an RCU grace period after the thread's exit
 */
struct kevent_signal_storage {
	struct kevent_storage st;
	struct rcu_head rcu;
};

/**
 * struct kevent_signal - the per-kevent data of KEVENT_SIGNAL
 * @sent: sends not yet reported
 * @code: si_code of the latest send
 */
struct kevent_signal {
	atomic_t sent;
	int code;
};

/*
 * The storage lock of a thread nests inside its siglock.  Storages of
 * other sources are taken where siglock may be taken inside them (a poll
 * of a signalfd), so this one gets a lockdep class of its own.
 */
static struct lock_class_key kevent_signal_lock_key;

static u64 kevent_signal_number(const struct kevent *k)
{
	return k->uk.id.raw_u64 & ~KEVENT_SIGNAL_NOMASK;
}

static int kevent_signal_code(struct kernel_siginfo *info)
{
	if (info == SEND_SIG_NOINFO)
		return SI_USER;
	if (info == SEND_SIG_PRIV)
		return SI_KERNEL;
	return info->si_code;
}

static bool kevent_signal_is_fault(int sig, struct kernel_siginfo *info)
{
	if (info == SEND_SIG_NOINFO || info == SEND_SIG_PRIV)
		return false;
	return info->si_code > 0 && info->si_code < SI_KERNEL &&
	       sig < SIGRTMIN && (sigmask(sig) & KEVENT_SIGNAL_FAULT_MASK);
}

/* Report @sig to the kevents of @t; true if one of them takes it. */
static bool kevent_signal_notify(struct task_struct *t, int sig, int code)
{
	struct kevent_signal_storage *kst = t->kevent_signal;
	struct kevent_signal *s;
	bool take = false;
	struct kevent *k;

	if (!kst)
		return false;

	/* siglock is held with interrupts disabled. */
	spin_lock(&kst->st.lock);
	list_for_each_entry(k, &kst->st.list, storage_entry) {
		if (kevent_signal_number(k) != sig ||
		    !(READ_ONCE(k->uk.event) & KEVENT_SIGNAL_DELIVERY))
			continue;
		s = kevent_priv(k);
		WRITE_ONCE(s->code, code);
		atomic_inc(&s->sent);
		kevent_ready(k, 1);
		if (k->uk.id.raw_u64 & KEVENT_SIGNAL_NOMASK)
			take = true;
	}
	spin_unlock(&kst->st.lock);
	return take;
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
	int code = kevent_signal_code(info);
	struct task_struct *p;
	bool take = false;

	lockdep_assert_held(&t->sighand->siglock);

	if (type == PIDTYPE_PID) {
		take = kevent_signal_notify(t, sig, code);
	} else {
		/* siglock keeps the thread list stable. */
		for_each_thread(t, p)
			take |= kevent_signal_notify(p, sig, code);
	}
	return take && !kevent_signal_is_fault(sig, info);
}

/**
 * __kevent_signal_exit - report and detach the signal kevents of a thread
 * @tsk: the thread, current, in do_exit()
 *
 * Called by kevent_signal_exit() for a thread that has had signal kevents.
 * They are reported once with KEVENT_RET_BROKEN and -ESRCH.
 */
void __kevent_signal_exit(struct task_struct *tsk)
{
	struct kevent_signal_storage *kst = tsk->kevent_signal;
	struct kevent *k;

	spin_lock_irq(&tsk->sighand->siglock);
	tsk->kevent_signal = NULL;
	tsk->signal->kevent_signal_threads--;
	spin_unlock_irq(&tsk->sighand->siglock);

	/*
	 * Mark them broken with -ESRCH first: kevent_storage_fini() reports
	 * -EBADF, which is for a file, but keeps an errno already set.  No
	 * kevent can be attached meanwhile: only the thread itself attaches.
	 */
	spin_lock_irq(&kst->st.lock);
	list_for_each_entry(k, &kst->st.list, storage_entry)
		kevent_ready(k, -ESRCH);
	spin_unlock_irq(&kst->st.lock);

	kevent_storage_fini(&kst->st);
	kfree_rcu(kst, rcu);
}

/* The storage of the calling thread, made at its first signal kevent. */
static struct kevent_signal_storage *kevent_signal_storage_get(void)
{
	struct task_struct *tsk = current;
	struct kevent_signal_storage *kst = tsk->kevent_signal;

	/* Only the thread itself sets its pointer. */
	if (kst)
		return kst;

	kst = kmalloc(sizeof(*kst), GFP_KERNEL_ACCOUNT);
	if (!kst)
		return NULL;
	kevent_storage_init(&kst->st);
	lockdep_set_class(&kst->st.lock, &kevent_signal_lock_key);

	spin_lock_irq(&tsk->sighand->siglock);
	tsk->kevent_signal = kst;
	tsk->signal->kevent_signal_threads++;
	spin_unlock_irq(&tsk->sighand->siglock);
	return kst;
}

static int kevent_signal_enqueue(struct kevent *k)
{
	u64 sig = kevent_signal_number(k);
	struct kevent_signal_storage *kst;

	if (sig < 1 || sig > _NSIG || sig_kernel_only((int)sig) ||
	    !(k->uk.event & KEVENT_SIGNAL_DELIVERY))
		return -EINVAL;

	kst = kevent_signal_storage_get();
	if (!kst)
		return -ENOMEM;
	kevent_storage_attach(&kst->st, k);
	return 0;
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
	.enqueue	= kevent_signal_enqueue,
	.dequeue	= kevent_storage_detach,
	.check		= kevent_signal_check,
	.fill		= kevent_signal_fill,
	.delivered	= kevent_signal_delivered,
	.priv_size	= sizeof(struct kevent_signal),
};
