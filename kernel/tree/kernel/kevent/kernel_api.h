/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent: registrations that the kernel makes on a caller's behalf.
 */
#ifndef _KERNEL_KEVENT_KERNEL_API_H
#define _KERNEL_KEVENT_KERNEL_API_H

#include <linux/kevent.h>

int kevent_kernel_add(struct file *file, const struct ukevent *uk,
		      const void *priv, size_t size);

#endif /* _KERNEL_KEVENT_KERNEL_API_H */
