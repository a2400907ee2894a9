// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a kernel built without CONFIG_KEVENT: the probe and the
 * system calls fail cleanly.
 *
 * Runs on build/obj-nokevent (VARIANT=nokevent), listed in
 * testsuite/nokevent.list, never in tests.list: on the kevent kernel
 * every point but the first fails, which make selftests-compare checks
 * too (it runs this program on both kernels).
 *
 * Conformance: checks a kernel without kevent, not a kevent kernel; not
 * part of the conformance run.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "tap.h"
#include <kevent.h>

/*
 * Is the running kernel older than Linux 6.5?  Only there are 451-455
 * free numbers, which a kernel without kevent answers with ENOSYS.
 */
static int before_6_5(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major < 6 || (major == 6 && minor < 5);
}

/* Does /proc/misc list a misc device of this name? -1 if unreadable. */
static int misc_device(const char *name)
{
	char line[128], dev[64];
	FILE *f = fopen("/proc/misc", "r");
	int found = 0, minor;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %63s", &minor, dev) == 2 &&
		    !strcmp(dev, name))
			found = 1;
	fclose(f);
	return found;
}

static void test_probe(void)
{
	struct kevent_abi abi, before;
	int fd;

	is_err(kevent_probe(NULL), ENOSYS, "kevent_probe(NULL) fails with "
	       "ENOSYS [kevent_probe.3 ENOSYS no-kevent]");

	memset(&abi, 0xa5, sizeof(abi));
	before = abi;
	is_err(kevent_probe(&abi), ENOSYS, "kevent_probe(&abi) fails with "
	       "ENOSYS [kevent_probe.3 ENOSYS no-kevent]");
	ok(!memcmp(&abi, &before, sizeof(abi)),
	   "a failed kevent_probe() leaves *abi as it was "
	   "[kevent_probe.3 RETURN VALUE]");

	/*
	 * Not a mere missing device file (devtmpfs is mounted by the
	 * guest's /init): the kernel has no such device.
	 */
	is_int(misc_device("kevent"), 0, "/proc/misc lists no kevent device "
	       "[kevent_probe.3 ENOSYS no-kevent]");
	fd = open("/dev/kevent", O_RDONLY | O_CLOEXEC);
	is_err(fd, ENOENT,
	       "open(/dev/kevent) fails with ENOENT: the device does not "
	       "exist [kevent_probe.3 ENOSYS no-kevent]");
	if (fd >= 0)
		close(fd);
	is_err(access("/proc/sys/fs/kevent/max_user_kevents", F_OK), ENOENT,
	       "/proc/sys/fs/kevent/max_user_kevents does not exist "
	       "[kevent.7 max_user_kevents]");
}

/*
 * The system calls themselves.  On this Linux 6.1 kernel, 451-455 are
 * COND_SYSCALL stubs (kernel/sys_ni.c) that a kernel without
 * CONFIG_KEVENT answers with ENOSYS.  On Linux 6.5 and later they are
 * cachestat, fchmodat2, map_shadow_stack, futex_wake and futex_wait:
 * calling them there runs another system call, and kevent_probe() is
 * the only safe test.  So they are called only on a kernel before 6.5,
 * and skipped elsewhere.
 */
static void test_syscalls(void)
{
	struct __kernel_timespec zero = { 0, 0 };
	struct ukevent uk;
	int ret;

	if (!before_6_5()) {
		skip(5, "Linux 6.5 or later: 451-455 are other system calls");
		return;
	}
	memset(&uk, 0, sizeof(uk));
	ret = kevent_init(NULL, 0, 0);
	is_err(ret, ENOSYS, "kevent_init (%d) fails with ENOSYS "
	       "[kevent_init.2 ENOSYS no-kevent]", __NR_kevent_init);
	if (ret >= 0)
		close(ret);
	is_err(kevent_ctl(-1, KEVENT_CTL_ADD, 1, &uk), ENOSYS,
	       "kevent_ctl (%d) fails with ENOSYS "
	       "[kevent_ctl.2 ENOSYS no-kevent]", __NR_kevent_ctl);
	is_err(kevent_get_events(-1, 0, 1, &zero, &uk, 0), ENOSYS,
	       "kevent_get_events (%d) fails with ENOSYS "
	       "[kevent_get_events.2 ENOSYS no-kevent]",
	       __NR_kevent_get_events);
	is_err(kevent_wait(-1, 1, 0, &zero, 0), ENOSYS,
	       "kevent_wait (%d) fails with ENOSYS "
	       "[kevent_wait.2 ENOSYS no-kevent]", __NR_kevent_wait);
	is_err(kevent_commit(-1, 0, 0), ENOSYS, "kevent_commit (%d) fails "
	       "with ENOSYS [kevent_commit.2 ENOSYS no-kevent]",
	       __NR_kevent_commit);
}

/*
 * timer_create() with sigev_notify SIGEV_KEVENT (8): a kernel without
 * kevent does not know the notification, and fails with EINVAL, as for
 * any unknown sigev_notify.  The queue descriptor is a number that is
 * not open: the kevent kernel would fail with EBADF, so the point tells
 * the two kernels apart (a descriptor that is open but no queue gives
 * EINVAL on both).
 */
static void test_posix_timer(void)
{
	struct sigevent sev;
	timer_t tid;
	int fd, ret;

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	must(fd >= 0, "open(/dev/null): %s", strerror(errno));
	close(fd);	/* fd is now a number that is not open */
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev._sigev_un._tid = fd;
	sev.sigev_value.sival_ptr = &sev;
	ret = timer_create(CLOCK_MONOTONIC, &sev, &tid);
	is_err(ret, EINVAL, "timer_create with sigev_notify SIGEV_KEVENT (%d) "
	       "fails with EINVAL [kevent_posix_timer.7 SIGEV_KEVENT]",
	       SIGEV_KEVENT);
	if (ret == 0)
		timer_delete(tid);
}

int main(void)
{
	plan(12);
	tap_watchdog(30);
	test_probe();
	test_syscalls();
	test_posix_timer();
	return tap_done();
}
