/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: the hooks of KEVENT_SIGNAL in the signal code.
 */
#ifndef _LINUX_KEVENT_SIGNAL_H
#define _LINUX_KEVENT_SIGNAL_H

#include <linux/sched.h>
#include <linux/sched/signal.h>

#ifdef CONFIG_KEVENT
bool __kevent_signal_send(struct task_struct *t, int sig,
			  struct kernel_siginfo *info, enum pid_type type);
void __kevent_signal_release(struct task_struct *tsk);

/**
 * kevent_signal_send - report a signal that is being sent
 * @t: the target task, its siglock held
 * @sig: the signal
 * @info: its siginfo, or SEND_SIG_NOINFO or SEND_SIG_PRIV
 * @type: PIDTYPE_PID for @t alone, else for the whole thread group
 *
 * Reports @sig to the kevents of @t, or of every thread of its group,
 * that watch it.  A process none of whose threads has ever had a signal
 * kevent pays one load and one branch.
 *
 * Return: true if a kevent with KEVENT_SIGNAL_NOMASK took the signal, which
 * then must not be queued to the task.
 */
static inline bool kevent_signal_send(struct task_struct *t, int sig,
				      struct kernel_siginfo *info,
				      enum pid_type type)
{
	if (likely(!t->signal->kevent_signal_threads))
		return false;
	return __kevent_signal_send(t, sig, info, type);
}

/**
 * kevent_signal_release - a thread exits or executes a new program
 * @tsk: the thread, current, in do_exit() or begin_new_exec()
 *
 * The signal kevents of @tsk are reported broken, once, and detached:
 * they watch the program that made them, and no other.
 */
static inline void kevent_signal_release(struct task_struct *tsk)
{
	if (unlikely(tsk->kevent_signal))
		__kevent_signal_release(tsk);
}
#else
static inline bool kevent_signal_send(struct task_struct *t, int sig,
				      struct kernel_siginfo *info,
				      enum pid_type type)
{
	return false;
}

static inline void kevent_signal_release(struct task_struct *tsk) { }
#endif

#endif /* _LINUX_KEVENT_SIGNAL_H */
