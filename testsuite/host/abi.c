/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pin the layout of every UAPI structure of <linux/kevent.h>: built with
 * -m64 and -m32 by testsuite/host-checks.sh, it fails to compile if a
 * size or an offset moves.  The kernel pins the same values with
 * BUILD_BUG_ON() in kernel/kevent/queue.c.
 */
#include <stddef.h>
#include <kevent.h>

#define PIN(expr) _Static_assert(expr, #expr)

PIN(sizeof(struct kevent_id) == 8);
PIN(_Alignof(struct kevent_id) == 8);
PIN(offsetof(struct kevent_id, raw) == 0);
PIN(offsetof(struct kevent_id, raw_u64) == 0);

PIN(sizeof(struct ukevent) == 40);
PIN(_Alignof(struct ukevent) == 8);
PIN(offsetof(struct ukevent, id) == 0);
PIN(offsetof(struct ukevent, type) == 8);
PIN(offsetof(struct ukevent, event) == 12);
PIN(offsetof(struct ukevent, req_flags) == 16);
PIN(offsetof(struct ukevent, ret_flags) == 20);
PIN(offsetof(struct ukevent, ret_data) == 24);
PIN(offsetof(struct ukevent, user) == 32);
PIN(offsetof(struct ukevent, ptr) == 32);

PIN(sizeof(struct kevent_ring) == 8);
PIN(offsetof(struct kevent_ring, ring_kidx) == 0);
PIN(offsetof(struct kevent_ring, ring_over) == 4);
PIN(offsetof(struct kevent_ring, event) == 8);

/* take26's values, which the series keeps (doc/deviations.md). */
PIN(KEVENT_SOCKET == 0 && KEVENT_INODE == 1 && KEVENT_TIMER == 2);
PIN(KEVENT_POLL == 3 && KEVENT_NAIO == 4 && KEVENT_AIO == 5);
PIN(KEVENT_PIPE == 6 && KEVENT_SIGNAL == 7 && KEVENT_POSIX_TIMER == 8);
PIN(KEVENT_MAX == 9);
PIN(KEVENT_REQ_ONESHOT == 0x1 && KEVENT_REQ_WAKEUP_ALL == 0x2);
PIN(KEVENT_REQ_ET == 0x4 && KEVENT_REQ_LAST_CHECK == 0x8);
PIN(KEVENT_REQ_ALWAYS_QUEUE == 0x10);
PIN(KEVENT_RET_BROKEN == 0x1 && KEVENT_RET_DONE == 0x2);
PIN(KEVENT_RET_COPY_FAILED == 0x4);
PIN(KEVENT_CTL_ADD == 0 && KEVENT_CTL_REMOVE == 1);
PIN(KEVENT_CTL_MODIFY == 2 && KEVENT_CTL_READY == 3);
PIN(KEVENT_FLAGS_ABSTIME == 1);
PIN(KEVENT_SOCKET_RECV == 0x1 && KEVENT_SOCKET_ACCEPT == 0x2);
PIN(KEVENT_SOCKET_SEND == 0x4);
PIN(KEVENT_TIMER_FIRED == 0x1 && KEVENT_SIGNAL_DELIVERY == 0x1);
PIN(KEVENT_SIGNAL_NOMASK == 0x8000000000000000ULL);
PIN(KEVENT_MASK_ALL == 0xffffffffU && SIGEV_KEVENT == 8);
PIN(__NR_kevent_init == 451 && __NR_kevent_ctl == 452);
PIN(__NR_kevent_get_events == 453 && __NR_kevent_wait == 454);
PIN(__NR_kevent_commit == 455);

PIN(sizeof(struct kevent_abi) == 40);
PIN(offsetof(struct kevent_abi, types) == 4);
PIN(offsetof(struct kevent_abi, nr_init) == 8);
PIN(offsetof(struct kevent_abi, nr_commit) == 24);
PIN(KEVENT_IOC_GET_ABI == 0x8028b801);
