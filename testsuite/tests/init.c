// SPDX-License-Identifier: GPL-2.0
/*
 * Description: kevent_init(2) and /dev/kevent: rings, flags, errors, close.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <termios.h>
#include <linux/capability.h>
#include <linux/elf.h>

#include "../lib/tap.h"
#include "../lib/kevent_sys.h"

#define MAX_RING_SIZE	53687090U	/* the most that fits in INT_MAX bytes */

/* An address beyond user space: only a 64-bit process can name one. */
#if TAP_WORD_BITS == 64
#define RING_RANGE	"[kevent_init.2 EFAULT ring-range]"
#else
#define RING_RANGE	"[kevent_init.2 EFAULT ring-write]"
#endif

/* fcntl(fd, cmd) & bit, or -1 when fd is not open. */
static int fd_bit(int fd, int cmd, int bit)
{
	int v = fd >= 0 ? fcntl(fd, cmd) : -1;

	return v < 0 ? -1 : (v & bit);
}

static void test_no_ring(void)
{
	int fd = sys_kevent_init(NULL, 0, 0);

	/* On failure the points below fail too: the plan stays whole. */
	ok(fd >= 0, "init(NULL, 0, 0) gives a queue without a ring");
	is_err(sys_kevent_wait(fd, 1, 0, TSP(0, 0), 0), EINVAL,
	       "kevent_wait on a queue without a ring fails with EINVAL "
	       "[kevent_wait.2 EINVAL no-ring]");
	is_int(sys_kevent_get_events(fd, 0, 1, TSP(0, 0),
				     &(struct ukevent){ .type = 0 }, 0), 0,
	       "kevent_get_events works on a queue without a ring");
	is_int(fd_bit(fd, F_GETFD, FD_CLOEXEC), 0,
	       "without KEVENT_INIT_CLOEXEC the descriptor is not close-on-exec "
	       "[KEVENT_INIT_CLOEXEC.2const]");
	is_int(fd_bit(fd, F_GETFL, O_NONBLOCK), 0,
	       "without KEVENT_INIT_NONBLOCK the descriptor is blocking "
	       "[KEVENT_INIT_NONBLOCK.2const]");
	close(fd);
}

static void test_ring(void)
{
	struct kevent_ring *ring = ring_alloc(16, NULL);
	int fd;

	if (!ring)
		bail_out("mmap");
	fd = sys_kevent_init(ring, 16, 0);
	ok(fd >= 0, "init(ring, 16, 0) gives a queue with a ring");
	is_int(ring->ring_kidx, 0, "init writes ring_kidx = 0");
	is_int(ring->ring_over, 0, "init writes ring_over = 0");
	is_int(sys_kevent_wait(fd, 16, 0, TSP(0, 0), 0), 0,
	       "kevent_wait with num == ring_size is accepted");
	close(fd);
	munmap(ring, 4096);

	/* The smallest ring: one slot. */
	ring = ring_alloc(1, NULL);
	fd = sys_kevent_init(ring, 1, 0);
	ok(fd >= 0, "init accepts a ring of one slot");
	close(fd);
	munmap(ring, 4096);
}

static void test_einval(void)
{
	struct kevent_ring *ring = ring_alloc(4, NULL);

	is_err(sys_kevent_init(ring, 0, 0), EINVAL,
	       "a ring with ring_size 0 is EINVAL [kevent_init.2 EINVAL ring-size]");
	is_err(sys_kevent_init(NULL, 4, 0), EINVAL,
	       "ring_size without a ring is EINVAL [kevent_init.2 EINVAL ring-size]");
	is_err(sys_kevent_init(ring, MAX_RING_SIZE + 1, 0), EINVAL,
	       "ring_size 53687091 (more than INT_MAX bytes) is EINVAL "
	       "[kevent_init.2 EINVAL ring-too-big]");
	is_err(sys_kevent_init(ring, 0xffffffffU, 0), EINVAL,
	       "ring_size 0xffffffff is EINVAL [kevent_init.2 EINVAL ring-too-big]");
	is_err(sys_kevent_init(NULL, 0, 1U << 3), EINVAL,
	       "unknown init flag 0x8 is EINVAL [kevent_init.2 EINVAL flags] "
	       "[KEVENT_INIT_CLOEXEC.2const EINVAL] "
	       "[KEVENT_INIT_NONBLOCK.2const EINVAL]");
	is_err(sys_kevent_init(NULL, 0, 1U << 31), EINVAL,
	       "unknown init flag 0x80000000 is EINVAL "
	       "[kevent_init.2 EINVAL flags]");
	is_err(sys_kevent_init(ring, 4, ~0U), EINVAL,
	       "all flag bits set is EINVAL [kevent_init.2 EINVAL flags]");
	munmap(ring, 4096);
}

static void test_max_ring_size(void)
{
	size_t len = kevent_ring_bytes(MAX_RING_SIZE);
	void *p;
	int fd;

	/* Address space only: the kernel checks it and writes 8 bytes. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		skip(1, "cannot map %zu bytes for the largest ring", len);
		return;
	}
	fd = sys_kevent_init(p, MAX_RING_SIZE, 0);
	ok(fd >= 0, "ring_size 53687090 (the largest) is accepted");
	close(fd);
	munmap(p, len);
}

static void test_efault(void)
{
	void *hole = unmapped_page();
	struct kevent_ring *ro = readonly_copy(NULL, 0);

	is_err(sys_kevent_init(hole, 4, 0), EFAULT,
	       "a ring at an unmapped address is EFAULT "
	       "[kevent_init.2 EFAULT ring-write]");
	is_err(sys_kevent_init(ro, 4, 0), EFAULT,
	       "a ring in read-only memory is EFAULT "
	       "[kevent_init.2 EFAULT ring-write]");
	is_err(sys_kevent_init((void *)(~0UL - 4095), 4, 0), EFAULT,
	       "a ring at the top of the address space is EFAULT " RING_RANGE);
	munmap(ro, 4096);
}

static void test_flags(void)
{
	int fd;

	fd = sys_kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
	ok(fd >= 0, "init with KEVENT_INIT_CLOEXEC succeeds");
	is_int(fd_bit(fd, F_GETFD, FD_CLOEXEC), FD_CLOEXEC,
	       "KEVENT_INIT_CLOEXEC sets FD_CLOEXEC [KEVENT_INIT_CLOEXEC.2const]");
	is_int(fd_bit(fd, F_GETFL, O_NONBLOCK), 0,
	       "KEVENT_INIT_CLOEXEC alone does not set O_NONBLOCK "
	       "[KEVENT_INIT_CLOEXEC.2const]");
	close(fd);

	fd = sys_kevent_init(NULL, 0, KEVENT_INIT_NONBLOCK);
	ok(fd >= 0, "init with KEVENT_INIT_NONBLOCK succeeds");
	is_int(fd_bit(fd, F_GETFL, O_NONBLOCK), O_NONBLOCK,
	       "KEVENT_INIT_NONBLOCK sets O_NONBLOCK [KEVENT_INIT_NONBLOCK.2const]");
	is_int(fd_bit(fd, F_GETFD, FD_CLOEXEC), 0,
	       "KEVENT_INIT_NONBLOCK alone does not set FD_CLOEXEC "
	       "[KEVENT_INIT_NONBLOCK.2const]");
	close(fd);

	fd = sys_kevent_init(NULL, 0,
			     KEVENT_INIT_CLOEXEC | KEVENT_INIT_NONBLOCK);
	ok(fd_bit(fd, F_GETFD, FD_CLOEXEC) == FD_CLOEXEC &&
	   fd_bit(fd, F_GETFL, O_NONBLOCK) == O_NONBLOCK,
	   "CLOEXEC | NONBLOCK sets both");
	close(fd);
}

static void test_dev_kevent(void)
{
	struct ukevent uk = timer_ms(10000, 0, 1), buf[2];
	int fd = open("/dev/kevent", O_RDWR);

	ok(fd >= 0, "open(\"/dev/kevent\", O_RDWR) gives a queue");
	if (fd < 0) {
		diag("open /dev/kevent: %s", strerror(errno));
		skip(5, "no /dev/kevent");
		return;
	}
	is_int(ctl1(fd, KEVENT_CTL_ADD, &uk), 0,
	       "kevent_ctl ADD works on a /dev/kevent queue");
	is_int(ctl1(fd, KEVENT_CTL_READY, &uk), 0,
	       "kevent_ctl READY works on a /dev/kevent queue");
	is_int(sys_kevent_get_events(fd, 1, 2, TSP(1, 0), buf, 0), 1,
	       "kevent_get_events delivers from a /dev/kevent queue");
	is_err(sys_kevent_wait(fd, 1, 0, TSP(0, 0), 0), EINVAL,
	       "a /dev/kevent queue has no ring: kevent_wait is EINVAL "
	       "[kevent_wait.2 EINVAL no-ring]");
	is_err(sys_kevent_commit(fd, 0, 0), EINVAL,
	       "a /dev/kevent queue has no ring: kevent_commit is EINVAL "
	       "[kevent_commit.2 EINVAL no-ring]");
	close(fd);
}

/* A number from a "Name:\tvalue" line of a /proc file; -1 if none. */
static long proc_value(const char *path, const char *name)
{
	char line[256];
	size_t len = strlen(name);
	long v = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static long slab_kb(void)
{
	return proc_value("/proc/meminfo", "SUnreclaim");
}

static long queue_kevents(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return proc_value(path, "kevents");
}

/*
 * 50 queues of 1000 timers each, closed with their timers: 50 000
 * registrations of a few hundred bytes each.  If close left them
 * allocated, the kernel's unreclaimable slab would grow by several
 * megabytes; allow 4 MB for what the rest of the system does meanwhile.
 */
static void test_close_frees(void)
{
	static struct ukevent uk[1000];
	int round, i, fd, bad = 0;
	long before, after, count;
	long long start;

	for (i = 0; i < 1000; i++)
		uk[i] = timer_ukevent(100, (__u32)i, 0, (__u64)i);
	before = slab_kb();
	for (round = 0; round < 50 && !bad; round++) {
		fd = sys_kevent_init(NULL, 0, 0);
		if (fd < 0) {
			diag("round %d: kevent_init: %s", round,
			     strerror(errno));
			bad = 1;
			break;
		}
		i = sys_kevent_ctl(fd, KEVENT_CTL_ADD, 1000, uk);
		count = queue_kevents(fd);
		if (i != 0 || count != 1000) {
			diag("round %d: ADD of 1000 timers returned %d (%s), "
			     "fdinfo kevents %ld", round, i,
			     i < 0 ? strerror(errno) : "entries", count);
			bad = 1;
		}
		if (close(fd)) {
			diag("round %d: close: %s", round, strerror(errno));
			bad = 1;
		}
	}
	ok(!bad, "50 times: 1000 timers registered (fdinfo kevents 1000), "
	   "then close");
	/* Let what the kernel frees late (RCU, per-CPU caches) settle. */
	start = now_ns();
	do {
		msleep(50);
		after = slab_kb();
	} while (after - before >= 4096 && ms_since(start) < 3000);
	ok(before > 0 && after > 0 && after - before < 4096,
	   "close freed the 50 000 registrations (unreclaimable slab "
	   "%ld -> %ld kB)", before, after);
}

static void test_emfile(void)
{
	struct rlimit old, rl;
	int lowest = dup(0);

	if (lowest < 0 || getrlimit(RLIMIT_NOFILE, &old)) {
		skip(2, "dup/getrlimit failed");
		return;
	}
	close(lowest);
	rl = old;
	rl.rlim_cur = (rlim_t)lowest;	/* every lower descriptor is in use */
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		skip(2, "setrlimit failed");
		return;
	}
	is_err(sys_kevent_init(NULL, 0, 0), EMFILE,
	       "init with no descriptor left is EMFILE [kevent_init.2 EMFILE]");
	is_err(kevent_probe(NULL), EMFILE,
	       "kevent_probe() with no descriptor left is EMFILE "
	       "[kevent_probe.3 EMFILE]");
	setrlimit(RLIMIT_NOFILE, &old);
}

/*
 * ENFILE: with fs.file-max below the number of open files, a process
 * without CAP_SYS_ADMIN cannot get a new file.  The child drops its
 * capabilities; the parent, still root, restores the limit.
 */
static void test_enfile(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { { 0 } };
	char old[64] = "";
	int status = -1, f;
	ssize_t n;
	pid_t pid;

	f = open("/proc/sys/fs/file-max", O_RDWR);
	if (f < 0 || (n = read(f, old, sizeof(old) - 1)) <= 0) {
		skip(2, "no /proc/sys/fs/file-max");
		if (f >= 0)
			close(f);
		return;
	}
	if (pwrite(f, "1\n", 2, 0) != 2) {
		skip(2, "cannot lower fs.file-max (not root?)");
		close(f);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int i;

		/*
		 * The first test of the limit reads a per-CPU counter that
		 * lags by a batch per CPU: open enough files to pass it.
		 */
		for (i = 0; i < 256; i++)
			open("/dev/null", O_RDONLY);
		if (syscall(SYS_capset, &hdr, data))
			_exit(4);
		i = sys_kevent_init(NULL, 0, 0) == -1 && errno == ENFILE ? 0 : 1;
		i |= kevent_probe(NULL) == -1 && errno == ENFILE ? 0 : 2;
		_exit(i);
	}
	waitpid(pid, &status, 0);
	if (pwrite(f, old, (size_t)n, 0) != n)
		bail_out("cannot restore fs.file-max");
	close(f);
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 5),
	   "init beyond fs.file-max without CAP_SYS_ADMIN is ENFILE "
	   "[kevent_init.2 ENFILE] (status %#x)", status);
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 6),
	   "kevent_probe() beyond fs.file-max without CAP_SYS_ADMIN is ENFILE "
	   "[kevent_probe.3 ENFILE] (status %#x)", status);
}

/*
 * KEVENT_IOC_GET_ABI on a queue of kevent_init() and on /dev/kevent:
 * the version, the types with a source, this ABI's numbers, reserved 0.
 */
static void test_ioc_get_abi(void)
{
	const __u32 types = 1U << KEVENT_SOCKET | 1U << KEVENT_TIMER |
			    1U << KEVENT_POLL | 1U << KEVENT_PIPE |
			    1U << KEVENT_SIGNAL | 1U << KEVENT_POSIX_TIMER;
	int q = sys_kevent_init(NULL, 0, 0), dev, p[2], closed;
	struct kevent_abi abi, *ro = readonly_copy(NULL, 0);

	memset(&abi, 0xa5, sizeof(abi));
	is_int(ioctl(q, KEVENT_IOC_GET_ABI, &abi), 0,
	       "KEVENT_IOC_GET_ABI on a queue of kevent_init() returns 0 "
	       "[KEVENT_IOC_GET_ABI.2const]");
	ok(abi.version == KEVENT_ABI_VERSION && abi.types == types &&
	   abi.nr_init == __NR_kevent_init && abi.nr_ctl == __NR_kevent_ctl &&
	   abi.nr_get_events == __NR_kevent_get_events &&
	   abi.nr_wait == __NR_kevent_wait &&
	   abi.nr_commit == __NR_kevent_commit && !abi.reserved[0] &&
	   !abi.reserved[1] && !abi.reserved[2],
	   "... version 1, the types with a source, the numbers of this "
	   "ABI, reserved 0 [KEVENT_IOC_GET_ABI.2const] (version %u types "
	   "%#x init %u commit %u)", abi.version, abi.types, abi.nr_init,
	   abi.nr_commit);
	dev = open("/dev/kevent", O_WRONLY | O_CLOEXEC);
	memset(&abi, 0, sizeof(abi));
	ok(dev >= 0 && ioctl(dev, KEVENT_IOC_GET_ABI, &abi) == 0 &&
	   abi.version == KEVENT_ABI_VERSION && abi.nr_wait == __NR_kevent_wait,
	   "KEVENT_IOC_GET_ABI on /dev/kevent opened write-only "
	   "[KEVENT_IOC_GET_ABI.2const]");
	closed = dup(q);
	close(closed);
	is_err(ioctl(closed, KEVENT_IOC_GET_ABI, &abi), EBADF,
	       "KEVENT_IOC_GET_ABI on a closed descriptor: EBADF "
	       "[KEVENT_IOC_GET_ABI.2const EBADF]");
	is_err(ioctl(q, KEVENT_IOC_GET_ABI, unmapped_page()), EFAULT,
	       "KEVENT_IOC_GET_ABI into unmapped memory: EFAULT "
	       "[KEVENT_IOC_GET_ABI.2const EFAULT]");
	is_err(ioctl(q, KEVENT_IOC_GET_ABI, ro), EFAULT,
	       "KEVENT_IOC_GET_ABI into read-only memory: EFAULT "
	       "[KEVENT_IOC_GET_ABI.2const EFAULT]");
	if (pipe(p))
		bail_out("pipe: %s", strerror(errno));
	is_err(ioctl(p[0], KEVENT_IOC_GET_ABI, &abi), ENOTTY,
	       "KEVENT_IOC_GET_ABI on a pipe: ENOTTY "
	       "[KEVENT_IOC_GET_ABI.2const ENOTTY not-queue]");
	is_err(ioctl(q, _IOR(0xB8, 0x02, struct kevent_abi), &abi), ENOTTY,
	       "another request of type 0xB8 on a queue: ENOTTY "
	       "[KEVENT_IOC_GET_ABI.2const ENOTTY other-request]");
	is_err(ioctl(dev, TCGETS, &abi), ENOTTY,
	       "TCGETS on /dev/kevent: ENOTTY "
	       "[KEVENT_IOC_GET_ABI.2const ENOTTY other-request]");
	close(p[0]);
	close(p[1]);
	close(dev);
	close(q);
	munmap(ro, 4096);
}

/* A character device major that no driver of the guest registered. */
static unsigned int free_major(void)
{
	char line[128];
	unsigned int major, m, used[4] = { 0 };
	FILE *f = fopen("/proc/devices", "r");

	/* Character devices come first; 60-63 are for local use. */
	while (f && fgets(line, sizeof(line), f) && strncmp(line, "Block", 5))
		if (sscanf(line, "%u", &m) == 1 && m >= 60 && m <= 63)
			used[m - 60] = 1;
	if (f)
		fclose(f);
	for (major = 60; major < 63 && used[major - 60]; major++)
		;
	return major;
}

/*
 * kevent_probe() in a child chrooted to a directory whose dev/kevent is
 * the device dev with mode (none if mode is 0), as user uid: the errno
 * it fails with, 0 if it succeeds, -1 if the child could not run.
 */
static int probe_chrooted(mode_t mode, dev_t dev, uid_t uid)
{
	char dir[] = "/tmp/kevent-probe-XXXXXX", path[64];
	int status = -1;
	pid_t pid;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/dev", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/kevent", dir);
	if (mode && mknod(path, S_IFCHR | mode, dev)) {
		diag("mknod %s: %s", path, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		if (chroot(dir) || chdir("/") || (uid && setuid(uid)))
			_exit(255);
		_exit(kevent_probe(NULL) ? errno : 0);
	}
	waitpid(pid, &status, 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dev", dir);
	rmdir(path);
	rmdir(dir);
	return WIFEXITED(status) && WEXITSTATUS(status) != 255 ?
	       WEXITSTATUS(status) : -1;
}

/*
 * kevent_probe() in a traced child whose KEVENT_IOC_GET_ABI answer the
 * tracer alters, as another kernel would answer: add is added to the
 * __u32 at byte off of struct kevent_abi (0: the version, 8: nr_init).
 * The errno the probe fails with, 0 if it succeeds, -1 if the ioctl was
 * not seen or the child could not run.
 */
/*
 * At a system call's exit stop of @pid: its number, its return value and
 * its third argument.  0, or -1 if the registers cannot be read.
 */
static int syscall_exit_regs(pid_t pid, long *nr, long *ret,
			     unsigned long *arg)
{
#ifdef __aarch64__
	struct user_regs_struct regs;
	struct iovec iov = { &regs, sizeof(regs) };

	/* x8 holds the number, x0 the result; x2 is left as it was. */
	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov))
		return -1;
	*nr = (long)regs.regs[8];
	*ret = (long)regs.regs[0];
	*arg = regs.regs[2];
#else
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return -1;
#ifdef __x86_64__
	*nr = (long)regs.orig_rax;
	*ret = (long)regs.rax;
	*arg = regs.rdx;
#else
	*nr = regs.orig_eax;
	*ret = regs.eax;
	*arg = (unsigned long)regs.edx;
#endif
#endif
	return 0;
}

static int probe_altered(unsigned int off, __u32 add)
{
	int status = -1, in_call = 0, altered = 0;
	long nr, ret, word;
	unsigned long arg;
	__u32 v;
	pid_t pid = fork();

	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(255);
		raise(SIGSTOP);
		_exit(kevent_probe(NULL) ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		return -1;
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_TRACESYSGOOD);
	while (!ptrace(PTRACE_SYSCALL, pid, NULL, NULL) &&
	       waitpid(pid, &status, 0) == pid && WIFSTOPPED(status)) {
		if (WSTOPSIG(status) != (SIGTRAP | 0x80))
			continue;
		in_call = !in_call;
		if (in_call || syscall_exit_regs(pid, &nr, &ret, &arg))
			continue;
		if (nr != SYS_ioctl || ret != 0 || altered)
			continue;
		/* Little-endian: the __u32 is the first bytes of the word. */
		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, pid, (void *)(arg + off), NULL);
		if (errno)
			break;
		memcpy(&v, &word, sizeof(v));
		v += add;
		memcpy(&word, &v, sizeof(v));
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(arg + off),
			   (void *)word))
			break;
		altered = 1;
	}
	if (!WIFEXITED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	return altered && WEXITSTATUS(status) != 255 ?
	       WEXITSTATUS(status) : -1;
}

/* kevent_probe(3): success here, and each way it fails. */
static void test_probe(void)
{
	struct kevent_abi abi;
	struct stat st;
	int r;

	memset(&abi, 0, sizeof(abi));
	ok(kevent_probe(&abi) == 0 && abi.version == KEVENT_ABI_VERSION &&
	   abi.nr_get_events == __NR_kevent_get_events,
	   "kevent_probe() succeeds and fills the kevent_abi "
	   "[kevent_probe.3 RETURN VALUE]");
	if (stat("/dev/kevent", &st) || !S_ISCHR(st.st_mode)) {
		skip(6, "no character device /dev/kevent");
		return;
	}
	r = probe_chrooted(0, 0, 0);
	is_int(r, ENOSYS, "kevent_probe() without /dev/kevent: ENOSYS "
	       "[kevent_probe.3 ENOSYS no-kevent]");
	r = probe_chrooted(0666, makedev(1, 3), 0);
	is_int(r, ENOSYS, "kevent_probe() with /dev/null as /dev/kevent (no "
	       "answer to KEVENT_IOC_GET_ABI): ENOSYS "
	       "[kevent_probe.3 ENOSYS no-kevent]");
	r = probe_chrooted(0666, makedev(free_major(), 0), 0);
	is_int(r, ENOSYS, "kevent_probe() with a stale /dev/kevent (a device "
	       "number no driver has, ENXIO): ENOSYS "
	       "[kevent_probe.3 ENOSYS no-kevent]");
	r = probe_chrooted(0600, st.st_rdev, 65534);
	is_int(r, EACCES, "kevent_probe() as nobody with /dev/kevent of mode "
	       "0600: EACCES [kevent_probe.3 EACCES]");
	r = probe_altered(0, 1);
	is_int(r, ENOSYS, "kevent_probe() when the kernel answers version 2 "
	       "(the answer altered by a tracer): ENOSYS "
	       "[kevent_probe.3 ENOSYS other-abi]");
	r = probe_altered(8, 1000);
	is_int(r, ENOSYS, "kevent_probe() when the kernel answers another "
	       "kevent_init() number (the answer altered by a tracer): "
	       "ENOSYS [kevent_probe.3 ENOSYS other-abi]");
}

static void test_distinct(void)
{
	int a = sys_kevent_init(NULL, 0, 0), b = sys_kevent_init(NULL, 0, 0);
	struct ukevent uk = timer_ms(10000, 0, 1), buf[1];

	ok(a >= 0 && b >= 0 && a != b, "two inits give two descriptors");
	must(add1(a, uk) == 0, "ADD of a timer: %s", strerror(errno));
	must(ctl1(a, KEVENT_CTL_READY, &uk) == 0, "READY of the timer");
	is_int(sys_kevent_get_events(b, 0, 1, TSP(0, 0), buf, 0), 0,
	       "an event of one queue is not seen in another");
	is_int(sys_kevent_get_events(a, 0, 1, TSP(0, 0), buf, 0), 1,
	       "and is seen in its own");
	close(a);
	close(b);
}

int main(void)
{
	plan(59);
	tap_watchdog(18);
	kevent_require();
	test_no_ring();
	test_ring();
	test_einval();
	test_max_ring_size();
	test_efault();
	test_flags();
	test_dev_kevent();
	test_ioc_get_abi();
	test_probe();
	test_distinct();
	test_emfile();
	test_enfile();
	test_close_frees();
	return tap_done();
}
