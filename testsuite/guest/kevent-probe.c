// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-probe: does the running kernel provide kevent, and which ABI?
 * The guest's /init and the conformance bundle's runner ask it before
 * any test: it calls kevent_probe() and nothing else, so a kernel
 * without kevent (where 451-455 may be other system calls) never sees
 * a kevent system call.
 *
 * Prints one line and exits 0 with kevent, 1 without:
 *   abi 1 types 0x3f nr 451 452 453 454 455
 *   none: kevent_probe: Function not implemented (ENOSYS)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <kevent.h>

int main(void)
{
	struct kevent_abi abi;

	if (kevent_probe(&abi)) {
		int err = errno;

		printf("none: kevent_probe: %s (%s)\n", strerror(err),
		       err == ENOSYS ? "ENOSYS" : "not ENOSYS");
		return 1;
	}
	printf("abi %u types %#x nr %u %u %u %u %u\n", abi.version, abi.types,
	       abi.nr_init, abi.nr_ctl, abi.nr_get_events, abi.nr_wait,
	       abi.nr_commit);
	return 0;
}
