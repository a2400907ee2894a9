// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_IOC_GET_ABI, what this kernel provides.
 *
 * The system call numbers of kevent belong to other system calls on
 * later kernels, so userspace must not probe them by calling them: it
 * opens /dev/kevent and asks here instead.  The numbers reported are
 * those of the caller's ABI, which differ for 32-bit processes on some
 * architectures.
 */

#include <linux/compat.h>
#include <linux/uaccess.h>
#include <asm/unistd.h>

#include "kevent.h"

#ifdef __NR_kevent_init
static void kevent_abi_syscalls(struct kevent_abi *abi)
{
	u32 x32 = 0;

#ifdef __NR_ia32_kevent_init
	if (in_ia32_syscall()) {
		abi->nr_init = __NR_ia32_kevent_init;
		abi->nr_ctl = __NR_ia32_kevent_ctl;
		abi->nr_get_events = __NR_ia32_kevent_get_events;
		abi->nr_wait = __NR_ia32_kevent_wait;
		abi->nr_commit = __NR_ia32_kevent_commit;
		return;
	}
#endif
#ifdef CONFIG_X86_X32_ABI
	if (in_x32_syscall())
		x32 = __X32_SYSCALL_BIT;
#endif
	/* Any other compat ABI (arm64's AArch32) has no kevent calls. */
	if (in_compat_syscall() && !x32)
		return;
	abi->nr_init = x32 | __NR_kevent_init;
	abi->nr_ctl = x32 | __NR_kevent_ctl;
	abi->nr_get_events = x32 | __NR_kevent_get_events;
	abi->nr_wait = x32 | __NR_kevent_wait;
	abi->nr_commit = x32 | __NR_kevent_commit;
}
#else
/* An architecture that has not wired the system calls reports none. */
static void kevent_abi_syscalls(struct kevent_abi *abi)
{
}
#endif

/**
 * kevent_ioctl - the ioctls of a queue's file
 * @file: the queue's file, or /dev/kevent's
 * @cmd: KEVENT_IOC_GET_ABI
 * @arg: where to store the &struct kevent_abi
 *
 * Return: 0, -EFAULT, or -ENOTTY for any other @cmd.
 */
long kevent_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kevent_abi abi = { .version = KEVENT_ABI_VERSION };
	u32 type;

	if (cmd != KEVENT_IOC_GET_ABI)
		return -ENOTTY;
	for (type = 0; type < KEVENT_MAX; type++)
		if (kevent_callbacks_of(type))
			abi.types |= BIT(type);
	kevent_abi_syscalls(&abi);
	if (copy_to_user((void __user *)arg, &abi, sizeof(abi)))
		return -EFAULT;
	return 0;
}
