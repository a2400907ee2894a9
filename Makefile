# kevent for Linux 6.1: build the patched kernel, boot it, check it.
#
#   make run       boot the patched kernel in QEMU and show kevent at work
#   make shell     boot it into a shell with the examples in /kevent/bin
#   make check     the whole testsuite; the last line is the summary
#   make check-fresh  make check in a fresh Debian 12 root (debootstrap)
#   make guest-test T="ctl wait"   those tests alone, in the guest
#   make conformance KERNEL=PATH   the suite on a kernel of one's own
#   make conformance-bundle        the suite as a tarball for a booted machine
#   make install   the manual and the UAPI header (PREFIX, DESTDIR)
#   make html      the HTML manual in doc/html, from man/
#   make bench     kevent against epoll and io_uring in a bench guest
#   make patchset  the series as git format-patch output in build/patchset
#   make mutants   deliberate kernel mutations the suite must kill
#
# The first run unpacks /usr/src/linux-source-6.1.tar.xz and builds the
# kernel into build/, which later runs reuse.  Every target that needs
# a package, the kernel or the programs builds them first, so that each
# works from a fresh clone on its own.

BUILD		?= build
PREFIX		?= /usr/local
DESTDIR		?=
MANDIR		?= $(PREFIX)/share/man
INCLUDEDIR	?= $(PREFIX)/include

export BUILD

PROG_CFLAGS	:= -static -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude \
		   -Iinclude/uapi -Itestsuite/lib -pthread
EXAMPLES	:= $(patsubst examples/%.c,%,$(wildcard examples/*.c))
TESTS		:= $(patsubst testsuite/tests/%.c,%,$(wildcard testsuite/tests/*.c))
# ARCH=arm64 (make check ARCH=arm64): the programs cross-built with clang
# for the arm64 guest, in a folder of their own; no -m32 twins (the arm64
# guest has no 32-bit compat), no kbench (no arm64 liburing here) and no
# kselftest-kevent (its build is the x86 series check's).
ifeq ($(ARCH),arm64)
GUEST_DIR	:= $(BUILD)/guest-arm64
CC		:= clang --target=aarch64-linux-gnu -fuse-ld=lld
TWINS		:=
else
GUEST_DIR	:= $(BUILD)/guest
# The -m32 twins that testsuite/tests.list and nokevent.list run.
TWINS		:= $(filter %-m32,$(shell scripts/suite-list.sh programs) \
		   $(shell scripts/suite-list.sh programs testsuite/nokevent.list))
endif
GUEST_BIN	:= $(GUEST_DIR)/bin
PROGRAMS	:= $(addprefix $(GUEST_BIN)/,$(EXAMPLES) $(TESTS) $(TWINS)) \
		   $(GUEST_BIN)/kevent-probe
# What the guest must run, one "NAME KIND" a line: every line of
# tests.list.  report.py fails a program missing from the log, and
# scripts/suite-list.sh check a program that no list runs.
EXPECTED	:= $(GUEST_DIR)/expected
PROG_DEPS	:= include/kevent.h include/uapi/linux/kevent.h $(wildcard testsuite/lib/*.h)
# kbench (bench/): make bench runs it in its own guest; make check runs
# its smoke test (bench_smoke in testsuite/tests.list).
BENCH_BIN	:= $(BUILD)/bench/bin
# bench/kcount.c is no guest program: the QEMU plugin of the counted
# bench, built for the host as a shared object.
KCOUNT		:= $(BUILD)/bench/kcount.so
BENCH_SRCS	:= $(filter-out bench/kcount.c,$(wildcard bench/*.c))
BENCH_DEPS	:= $(BENCH_SRCS) $(wildcard bench/*.h) $(PROG_DEPS)
ifneq ($(ARCH),arm64)
PROGRAMS	+= $(GUEST_BIN)/kbench
endif

.PHONY: all deps kernel programs initramfs check run shell install \
	uninstall html clean distclean

all: kernel programs initramfs

deps:
	@scripts/deps.sh

kernel:
	@scripts/kernel.sh

programs: $(PROGRAMS)
	@scripts/suite-list.sh check
	@ARCH=$(ARCH) scripts/suite-list.sh expected >$(EXPECTED).tmp
	@mv $(EXPECTED).tmp $(EXPECTED)

$(GUEST_BIN)/%: examples/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -o $@ $<

$(GUEST_BIN)/%-m32: testsuite/tests/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) -m32 -DKEVENT_TEST_M32 $(PROG_CFLAGS) -o $@ $<

$(GUEST_BIN)/%: testsuite/tests/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -o $@ $<

# fragments runs the fragments of kevent(7) as the page shows them: each
# named fragment is written out of the page at build time.
FRAGMENTS	:= $(GUEST_DIR)/fragments
$(FRAGMENTS)/.stamp: man/man7/kevent.7 scripts/man-fragments.sh
	scripts/man-fragments.sh man/man7/kevent.7 $(FRAGMENTS)
	@touch $@
$(GUEST_BIN)/fragments $(GUEST_BIN)/fragments-m32: $(FRAGMENTS)/.stamp
$(GUEST_BIN)/fragments $(GUEST_BIN)/fragments-m32: \
	PROG_CFLAGS += -I$(GUEST_DIR)

# What /init and the conformance bundle ask before any test.
$(GUEST_BIN)/kevent-probe: testsuite/guest/kevent-probe.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -o $@ $<

$(GUEST_BIN)/kbench $(BENCH_BIN)/kbench: $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -o $@ $(BENCH_SRCS) -luring

$(BENCH_BIN)/evserver: examples/evserver.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(PROG_CFLAGS) -o $@ $<

$(KCOUNT): bench/kcount.c
	@mkdir -p $(@D)
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -fvisibility=hidden \
		-o $@ $< -pthread

.PHONY: bench bench-programs kcount
bench-programs: $(BENCH_BIN)/kbench $(BENCH_BIN)/evserver $(KCOUNT)
kcount: $(KCOUNT)

bench:
	@scripts/bench.sh

ifeq ($(ARCH),arm64)
initramfs: programs
	@ARCH=arm64 scripts/suite-list.sh guest >$(GUEST_DIR)/tests.list
	@BUSYBOX=$(BUILD)/arm64/bin/busybox scripts/initramfs.sh \
		$(GUEST_BIN) $(GUEST_DIR)/tests.list $(BUILD)/initramfs-arm64.cpio
else
initramfs: programs
	@scripts/suite-list.sh guest >$(GUEST_DIR)/tests.list
	@scripts/initramfs.sh $(GUEST_BIN) $(GUEST_DIR)/tests.list \
		$(BUILD)/initramfs.cpio
endif

check:
	@testsuite/check.sh

# The suite against a kernel of one's own, without building one here
# (doc/testing.md):
#   make conformance KERNEL=PATH     a bzImage (ARCH=arm64: an Image) in QEMU
#   make conformance KERNEL=PATH T="ctl wait"   those programs alone
#   make conformance-bundle          a tarball that runs it on a booted machine
.PHONY: conformance conformance-bundle
conformance: deps
	@scripts/conformance.sh boot $(T)

conformance-bundle: deps
	@scripts/conformance.sh bundle

# make check as a new user runs it: in a minimal Debian 12 root made
# with debootstrap, a clone of HEAD, nothing of this machine's /usr
# (scripts/check-fresh.sh; the root is kept in build/fresh).
.PHONY: check-fresh
check-fresh:
	@scripts/check-fresh.sh

# A few programs in the guest, on the kernel built already (doc/testing.md):
#   make guest-test T="ctl wait"   a test runs with its -m32 twin
.PHONY: guest-test
guest-test: deps
	@scripts/guest-test.sh $(T)

# Deliberate kernel mutations that the suite must kill (doc/testing.md):
#   make mutants               every mutant of testsuite/mutants/
#   make mutants M="NAME..."   those alone
.PHONY: mutants
mutants: deps kernel
	@scripts/mutants.sh $(M)

# What the hooks cost a program that does not use kevent: the kevent
# kernel against the same config without CONFIG_KEVENT (doc/benchmarks.md).
.PHONY: hookcost
hookcost:
	@scripts/hookcost.sh

# The kernel's own selftests on the kevent kernel and without kevent.
.PHONY: selftests-compare
selftests-compare: deps
	@scripts/selftests-compare.sh

# The series for LKML: a cover letter and one patch per step, made with
# git format-patch on a git repository of the pristine tree
# (doc/patchset.md); make patchset-bisect builds the tree after each
# patch, at low priority.
.PHONY: patchset patchset-bisect
patchset: deps
	@scripts/kernel.sh assemble
	@scripts/patchset.sh all

patchset-bisect: patchset
	@nice -n 19 scripts/patchset-bisect.sh

# The event libraries on kevent, each in a boot of its own: libevent
# 2.1.12's regression programs and benchmark (doc/libevent.md), libuv
# 1.44.2's test suite (doc/libuv.md), with the kevent backend and with
# epoll.
#   make peers PEERS=DIR          the folder of the release tarballs
#   make peers PEERS_BENCH=0      without the benchmarks
#   make peers PEERS_LIBS=libuv   one library only
PEERS_LIBS ?= libevent libuv
.PHONY: peers
peers: deps kernel
	@status=0; for lib in $(PEERS_LIBS); do \
		scripts/peers.sh $$lib all || status=1; \
	done; exit $$status

run: deps
	@$(MAKE) --no-print-directory all
	@scripts/boot.sh run $(BUILD)/run.log 300

shell: deps
	@$(MAKE) --no-print-directory all
	@scripts/boot.sh shell $(BUILD)/shell.log

html: deps
	scripts/man-html.sh build

install:
	scripts/install.sh install "$(DESTDIR)" "$(MANDIR)" "$(INCLUDEDIR)"

uninstall:
	scripts/install.sh uninstall "$(DESTDIR)" "$(MANDIR)" "$(INCLUDEDIR)"

clean:
	rm -rf $(BUILD)/guest $(BUILD)/initramfs.cpio* $(BUILD)/*.log \
		$(BUILD)/host.tap

distclean:
	rm -rf $(BUILD)
