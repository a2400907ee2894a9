// SPDX-License-Identifier: MIT
/*
 * kcount: a QEMU TCG plugin that counts the instructions a guest
 * executes, for make bench's counted boot (doc/benchmarks.md).
 *
 *   qemu-system-x86_64 -smp 1 -plugin kcount.so,out=FILE[,map=System.map]
 *
 * Each vCPU's executed instructions are counted, split into kernel and
 * user by address (x86-64: a kernel address has its top bit set), and
 * so are the system call instructions user code executes.  Every time
 * the guest executes a marker (kbench.h: a 7-byte "nopl disp32(%rax)"
 * whose displacement holds a signature and the marker's id), one line
 * goes to FILE:
 *
 *   MARK n=SEQ id=ID vcpu=V kernel=K user=U syscalls=S
 *
 * with the counts since the boot, the marker itself included and the
 * rest of its block left out.  With map=System.map, every kernel
 * instruction is also counted by the function it belongs to, and each
 * marker of id 2 (the end of a measured phase) is followed by the
 * functions that ran since the last marker of id 1, most first:
 *
 *   PROF n=SEQ fn=NAME insns=COUNT
 *
 * Instructions are counted per translated block, by an inline add at
 * the block's start (a callback per block or per instruction would slow
 * the guest several times over).  A block left early by an exception
 * counts whole; a guest in its steady state takes almost none.  QEMU
 * 7.2's inline adds are not per vCPU, so with more than one vCPU the
 * plugin counts through a callback per block instead, and keeps no
 * profile.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * QEMU's plugin API, version 1, as 7.2 offers it.  Debian ships no
 * qemu-plugin.h (no package holds QEMU's headers), so the few types and
 * functions used here are declared from that version's documented ABI;
 * QEMU refuses a plugin whose qemu_plugin_version it does not support.
 */
typedef uint64_t qemu_plugin_id_t;

typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);

#define QEMU_PLUGIN_EXPORT	__attribute__((visibility("default")))

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op,
						void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

/* The marker's bytes: 0f 1f 80, then the displacement, little-endian. */
#define MARK_LEN	7
#define MARK_SIG	0x4b45u		/* "KE", the displacement's top half */
#define MARK_END	2		/* ends a phase: the profile follows */
#define MARK_BEGIN	1		/* begins one */

#define MAX_VCPUS	64

struct vcpu {
	uint64_t kernel, user, syscalls;
	uint64_t seq;			/* markers this vCPU executed */
};

static struct vcpu vcpus[MAX_VCPUS];
static bool inline_ok;			/* one vCPU: inline adds */
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t markers;

/* The kernel's functions, from System.map, by address. */
struct sym {
	uint64_t addr;
	char *name;
};

static struct sym *syms;
static size_t nsyms;
static uint64_t *fn_count;		/* nsyms + 1: the last, outside all */
static uint64_t *fn_snap;		/* fn_count at the last MARK_BEGIN */

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols only: an address inside data would not be executed. */
static int load_map(const char *path)
{
	char line[512], name[256], type;
	size_t cap = 0;
	uint64_t addr;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type,
			   name) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (nsyms == cap) {
			cap = cap ? 2 * cap : 65536;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				return -1;
		}
		syms[nsyms].addr = addr;
		syms[nsyms].name = strdup(name);
		nsyms++;
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), cmp_sym);
	fn_count = calloc(nsyms + 1, sizeof(*fn_count));
	fn_snap = calloc(nsyms + 1, sizeof(*fn_snap));
	return fn_count && fn_snap ? 0 : -1;
}

/* The function holding @addr, or nsyms when no text symbol precedes it. */
static size_t sym_of(uint64_t addr)
{
	size_t lo = 0, hi = nsyms;

	if (!nsyms || addr < syms[0].addr)
		return nsyms;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

struct prof_row {
	size_t sym;
	uint64_t n;
};

static int cmp_row(const void *a, const void *b)
{
	const struct prof_row *x = a, *y = b;

	return x->n > y->n ? -1 : x->n < y->n;
}

/* The functions that ran since the last MARK_BEGIN, under out_lock. */
static void profile_out(uint64_t seq)
{
	struct prof_row *rows = malloc((nsyms + 1) * sizeof(*rows));
	size_t i, n = 0;

	if (!rows)
		return;
	for (i = 0; i <= nsyms; i++)
		if (fn_count[i] != fn_snap[i])
			rows[n++] = (struct prof_row){ i, fn_count[i] -
						       fn_snap[i] };
	qsort(rows, n, sizeof(*rows), cmp_row);
	for (i = 0; i < n; i++)
		fprintf(out, "PROF n=%" PRIu64 " fn=%s insns=%" PRIu64 "\n",
			seq, rows[i].sym < nsyms ? syms[rows[i].sym].name : "?",
			rows[i].n);
	free(rows);
}

/*
 * A marker ran.  @udata packs its id and how many instructions of its
 * block follow it: the block's count went in whole at its start.
 */
static void on_marker(unsigned int vcpu_index, void *udata)
{
	uintptr_t v = (uintptr_t)udata;
	unsigned int id = v & 0xffff, after = v >> 16;
	struct vcpu *c = &vcpus[vcpu_index % MAX_VCPUS];

	pthread_mutex_lock(&out_lock);
	c->seq++;
	fprintf(out, "MARK n=%" PRIu64 " id=%u vcpu=%u kernel=%" PRIu64
		" user=%" PRIu64 " syscalls=%" PRIu64 "\n", ++markers, id,
		vcpu_index, c->kernel, c->user - after, c->syscalls);
	if (fn_count && id == MARK_END)
		profile_out(markers);
	if (fn_count && id == MARK_BEGIN)
		memcpy(fn_snap, fn_count, (nsyms + 1) * sizeof(*fn_count));
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

/* More than one vCPU: a block's count through a callback, per vCPU. */
static void on_tb(unsigned int vcpu_index, void *udata)
{
	uintptr_t v = (uintptr_t)udata;
	struct vcpu *c = &vcpus[vcpu_index % MAX_VCPUS];

	if (v & 1)
		c->kernel += v >> 1;
	else
		c->user += v >> 1;
}

static void on_syscall(unsigned int vcpu_index, void *udata)
{
	(void)udata;
	vcpus[vcpu_index % MAX_VCPUS].syscalls++;
}

static bool is_marker(const uint8_t *b, size_t len, unsigned int *id)
{
	if (len != MARK_LEN || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 ||
	    (b[5] | b[6] << 8) != MARK_SIG)
		return false;
	*id = b[3] | b[4] << 8;
	return true;
}

/* syscall, and int $0x80 for a 32-bit program. */
static bool is_syscall(const uint8_t *b, size_t len)
{
	return len == 2 && ((b[0] == 0x0f && b[1] == 0x05) ||
			    (b[0] == 0xcd && b[1] == 0x80));
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i, run = 0, fn = 0;
	bool kernel = qemu_plugin_tb_vaddr(tb) >> 63;
	struct qemu_plugin_insn *insn, *first = NULL;
	const uint8_t *b;
	unsigned int mid;
	size_t len;

	(void)id;
	if (inline_ok)
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
			QEMU_PLUGIN_INLINE_ADD_U64,
			kernel ? &vcpus[0].kernel : &vcpus[0].user, n);
	else
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb,
			QEMU_PLUGIN_CB_NO_REGS,
			(void *)(uintptr_t)(n << 1 | kernel));
	for (i = 0; i < n; i++) {
		insn = qemu_plugin_tb_get_insn(tb, i);
		b = qemu_plugin_insn_data(insn);
		len = qemu_plugin_insn_size(insn);

		if (!kernel && is_marker(b, len, &mid))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
				QEMU_PLUGIN_CB_NO_REGS,
				(void *)(uintptr_t)((n - i - 1) << 16 | mid));
		if (!kernel && is_syscall(b, len)) {
			if (inline_ok)
				qemu_plugin_register_vcpu_insn_exec_inline(insn,
					QEMU_PLUGIN_INLINE_ADD_U64,
					&vcpus[0].syscalls, 1);
			else
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
					on_syscall, QEMU_PLUGIN_CB_NO_REGS,
					NULL);
		}
		/* The profile: one add per run of a function's instructions. */
		if (kernel && fn_count) {
			size_t s = sym_of(qemu_plugin_insn_vaddr(insn));

			if (first && s != fn) {
				qemu_plugin_register_vcpu_insn_exec_inline(first,
					QEMU_PLUGIN_INLINE_ADD_U64,
					&fn_count[fn], run);
				first = NULL;
			}
			if (!first) {
				first = insn;
				fn = s;
				run = 0;
			}
			run++;
		}
	}
	if (first)
		qemu_plugin_register_vcpu_insn_exec_inline(first,
			QEMU_PLUGIN_INLINE_ADD_U64, &fn_count[fn], run);
}

static void plugin_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	pthread_mutex_lock(&out_lock);
	for (int i = 0; i < MAX_VCPUS; i++)
		if (vcpus[i].kernel || vcpus[i].user)
			fprintf(out, "TOTAL vcpu=%d kernel=%" PRIu64
				" user=%" PRIu64 " syscalls=%" PRIu64
				" markers=%" PRIu64 "\n", i, vcpus[i].kernel,
				vcpus[i].user, vcpus[i].syscalls,
				vcpus[i].seq);
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL, *map = NULL;
	char msg[256];

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "map=", 4))
			map = argv[i] + 4;
		else {
			snprintf(msg, sizeof(msg), "kcount: unknown argument "
				 "%s (out=FILE, map=System.map)\n", argv[i]);
			qemu_plugin_outs(msg);
			return -1;
		}
	}
	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		qemu_plugin_outs("kcount: counts an x86_64 system guest only\n");
		return -1;
	}
	out = path ? fopen(path, "w") : stderr;
	if (!out) {
		snprintf(msg, sizeof(msg), "kcount: cannot write %s\n", path);
		qemu_plugin_outs(msg);
		return -1;
	}
	inline_ok = info->system.max_vcpus <= 1;
	if (map && inline_ok && load_map(map)) {
		snprintf(msg, sizeof(msg), "kcount: cannot read %s\n", map);
		qemu_plugin_outs(msg);
		return -1;
	}
	fprintf(out, "KCOUNT vcpus=%d mode=%s symbols=%zu\n",
		info->system.max_vcpus, inline_ok ? "inline" : "callback",
		nsyms);
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
