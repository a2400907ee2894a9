// SPDX-License-Identifier: GPL-2.0
/*
 * Description: stress: shared queues under concurrent commands, every
 * event source firing, descriptors closed and reused, POLLFREE, fork and
 * exec, rings overflowing; an accounting check that no event is lost or
 * reported twice.
 *
 * Usage: stress [SECONDS [SEED]]   (default 15 s, seed from the clock)
 *
 * Threads of this process:
 *   H1, H2  harvest queue A with kevent_get_events() (random min_nr,
 *           max_nr, timeouts: none, zero, relative, absolute);
 *   H3      harvests queue F, which the fork-and-exec process shares;
 *   R       consumes ring queue B (8 slots) with kevent_wait() and
 *           kevent_commit(), and kevent_get_events() whose ring copies it
 *           checks; RW waits on B with num 0 and kicks it;
 *   D       consumes direct queue D (KEVENT_INIT_DIRECT, 16 slots) with
 *           no system call while it holds events, and kevent_wait() when
 *           it is empty or PENDING; a registration twice in what it takes
 *           at once counts as reported twice;
 *   W0, W1  write sequence-numbered records into pipes, TCP, UDP and
 *           UNIX stream and datagram sockets, each watched on A, B or D
 *           (level, edge, one-shot re-added, or KEVENT_POLL), and wait
 *           for room with one-shot SEND registrations on their own queue;
 *           each channel ends with an END record, is closed and replaced
 *           (UDP may drop datagrams or deliver them late: its channels
 *           count gaps, send END again, and are closed by the writer if
 *           END never comes, unless a datagram is left unread);
 *   T0, T1  ADD, READY, MODIFY and REMOVE one-shot timers in batches on
 *           A and B, bursts of 32 ready events into B's 8-slot ring, and
 *           periodic timers whose reported expiries are checked against
 *           the time the kernel reports for the latest one;
 *   S, K    K sends SIGUSR1 (tgkill and kill) and SIGRTMIN+2 (sigqueue) to
 *           S, which holds NOMASK registrations and replaces them;
 *   P       POSIX timers (SIGEV_KEVENT): a one-shot one re-armed after each
 *           report, periodic ones deleted and made again, and short-lived
 *           ones deleted while they fire;
 *   C       opens pipes, socket pairs, eventfds, timerfds and queues,
 *           registers them, closes them or dup2()s over them and
 *           registers the reused numbers again;
 *   X1, X2  race object death against REMOVE, close of the queue,
 *           harvest and MODIFY on a private queue, and ADD against a
 *           pipe or socket that breaks meanwhile.
 * A second process, forked at the start, makes children that add a
 * KEVENT_POLL of a signalfd and exit (POLLFREE) while a thread removes
 * it, children that exec this program with live registrations, children
 * that check that signal registrations are not inherited, and uses ring
 * queue B from its own address space.
 *
 * Every registration has a unique ptr, an entry in a table shared by
 * both processes, and a rule for how it must end: reported once, removed
 * once, or reported BROKEN once.  After SECONDS the producers stop, the
 * harvesters drain, and the table, the byte counts, the signal counts and
 * the POSIX timer counts are checked; no call may report a registration
 * twice; after everything is closed, as many registrations must fit under
 * fs.kevent.max_user_kevents lowered to 64 as did before.  The number of
 * operations of each kind, events, channels and race rounds go to diag
 * lines.
 *
 * Conformance: checks the documented ABI and semantics (the manual); any
 * kevent kernel must pass it.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "tap.h"
#include "kevent_sys.h"
#include "harness.h"

/* ---------------------------------------------------------------- */
/* The shared table of registrations and counters.                  */

enum kind {
	K_NONE, K_ANCHOR, K_TIMER1, K_PERIODIC, K_CHAN, K_SEND, K_SIG,
	K_POSIX, K_CHURN, K_RACE, K_POLLFREE, K_CHILDSIG, K_EXECSIG, K_CHILD,
	K_FWSIG, K_NR
};

static const char *const kind_name[K_NR] = {
	"none", "anchor", "oneshot-timer", "periodic-timer", "channel",
	"send", "signal", "posix-timer", "churn", "race", "pollfree",
	"child-signal", "exec-signal", "child", "fw-signal",
};

/* Queue identities, to check that a report comes from its own queue. */
enum { Q_NONE, Q_A, Q_B, Q_F, Q_W0, Q_W1, Q_X1, Q_X2, Q_D };

struct reg {
	uint8_t kind, q, oneshot, added;
	uint32_t salt;		/* the high 32 bits of ptr */
	uint64_t id;
	uint32_t type, event;
	uint32_t slot, gen;	/* channel slot and generation, or index */
	uint32_t reports, broken, removed, add_ready, add_fail, qdead;
	int32_t err;		/* ret_data[1] of a BROKEN report or a failed ADD */
	uint32_t count, max_ms, bad;
};

#define MAX_REGS	(1U << 20)
#define PTR_TAG		0x40000000U
#define PTR_MASK	0xff000000U
#define PTR_IDX		0x00ffffffU

enum op {
	OP_ADD, OP_REMOVE, OP_MODIFY, OP_READY, OP_KICK, OP_GET_EVENTS,
	OP_WAIT, OP_COMMIT, OP_INIT, OP_CLOSE_QUEUE, OP_EVENTS, OP_RING_EVENTS,
	OP_BROKEN, OP_COPY_FAILED, OP_WRITES, OP_READS, OP_BYTES, OP_CHANNELS,
	OP_SEND_WAITS, OP_SIGNALS, OP_POSIX_ARMS, OP_POSIX_TIMERS,
	OP_OBJECTS, OP_CLOSES, OP_DUP2, OP_RACES, OP_FORKS, OP_EXECS,
	OP_POLLFREE, OP_OTHER_MM, OP_EINTR, OP_NR
};

static const char *const op_name[OP_NR] = {
	"add", "remove", "modify", "ready", "kick", "get_events", "wait",
	"commit", "init", "close_queue", "events", "ring_events", "broken",
	"copy_failed", "writes", "reads", "bytes", "channels", "send_waits",
	"signals", "posix_arms", "posix_timers", "objects", "closes", "dup2",
	"race_rounds", "forks", "execs", "pollfree", "other_mm", "eintr",
};

struct shared {
	int stop;		/* producers stop */
	int harvest_stop;	/* harvesters stop */
	uint32_t next_reg;
	uint32_t ops[OP_NR];
	uint32_t unexpected;
	uint32_t dup_in_call, malformed, wrong_queue, unknown_ptr;
	uint32_t race_fail, race_addfail_bad;
	uint32_t fork_fail, exec_fail, fw_fail;
	uint32_t other_mm_bad;
	uint32_t pollfree_stuck;
	uint32_t ring_bad;
	struct reg regs[MAX_REGS];
};

static struct shared *sh;

#define INC(x)		__atomic_add_fetch(&(x), 1, __ATOMIC_SEQ_CST)
#define ADD(x, n)	__atomic_add_fetch(&(x), (n), __ATOMIC_SEQ_CST)
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define OP(o)		INC(sh->ops[o])

static int qa, qb, qf;		/* the shared queues */
static struct kevent_ring *ring_b;
#define RING_B_SIZE	8
static int qd;			/* the direct queue */
static struct kevent_ring *ring_d;
#define RING_D_SIZE	16
static uint64_t seed;
static int run_seconds = 15;
static long long t_begin, t_stop;
static char self_exe[] = "/proc/self/exe";

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void unexpected(const char *what, long ret, int err)
{
	uint32_t n = INC(sh->unexpected);

	if (n <= 20)
		diag("unexpected: %s returned %ld (%s)", what, ret,
		     ret < 0 ? strerror(err) : "no error");
}

static void entry_unexpected(const char *what, const struct ukevent *uk)
{
	uint32_t n = INC(sh->unexpected);

	if (n <= 20)
		diag("unexpected: %s: entry type %u id %llx ptr %llx came back with flags %x data %d",
		     what, uk->type, (unsigned long long)uk->id.raw_u64,
		     (unsigned long long)uk->ptr, uk->ret_flags,
		     (int)uk->ret_data[1]);
}

static struct reg *reg_new(uint8_t kind, uint8_t q, uint32_t *idx)
{
	uint32_t i = INC(sh->next_reg);
	struct reg *r;

	if (i >= MAX_REGS) {
		if (i == MAX_REGS)
			diag("the table of registrations is full: no new ones from now on");
		return NULL;
	}
	r = &sh->regs[i];
	r->kind = kind;
	r->q = q;
	r->salt = kind == K_POSIX ? 0 : 0xc0de0000U | kind;
	*idx = i;
	return r;
}

static uint64_t reg_ptr(uint32_t idx)
{
	return ((uint64_t)sh->regs[idx].salt << 32) | PTR_TAG | idx;
}

static struct reg *reg_of(uint64_t ptr, uint32_t *idx)
{
	uint32_t low = (uint32_t)ptr, i = low & PTR_IDX;

	if ((low & PTR_MASK) != PTR_TAG || !i || i > LOAD(sh->next_reg) ||
	    i >= MAX_REGS)
		return NULL;
	if (sh->regs[i].salt != (uint32_t)(ptr >> 32))
		return NULL;
	if (idx)
		*idx = i;
	return &sh->regs[i];
}

/* A request for registration idx; its key is kept in the table. */
static struct ukevent reg_uk(uint32_t idx, uint32_t type, uint64_t id,
			     uint32_t event, uint32_t req_flags)
{
	struct reg *r = &sh->regs[idx];
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw_u64 = id;
	uk.type = type;
	uk.event = event;
	uk.req_flags = req_flags;
	uk.ptr = reg_ptr(idx);
	r->id = id;
	r->type = type;
	r->event = event;
	r->oneshot = !!(req_flags & KEVENT_REQ_ONESHOT);
	return uk;
}

static uint64_t timer_id(uint32_t sec, uint32_t nsec)
{
	struct kevent_id id;

	id.raw[0] = sec;
	id.raw[1] = nsec;
	return id.raw_u64;
}

static uint64_t fd_id(int fd)
{
	struct kevent_id id;

	id.raw[0] = (uint32_t)fd;
	id.raw[1] = 0;
	return id.raw_u64;
}

/*
 * ADD num entries of uk, each a registration of the table: mark the
 * ones kept, ready at ADD (copied back DONE) or failed (copied back
 * BROKEN).  Returns the number of failed entries, or -1.
 */
static int add_regs(int fd, struct ukevent *uk, unsigned int num,
		    const char *what, int fail_expected)
{
	struct ukevent back[64];
	unsigned int i, j;
	int ret, failed = 0;
	uint32_t idx;

	if (num > 64)
		bail_out("add_regs: %u entries", num);
	memcpy(back, uk, num * sizeof(*uk));
	OP(OP_ADD);
	ret = kevent_ctl(fd, KEVENT_CTL_ADD, num, back);
	if (ret < 0) {
		unexpected(what, ret, errno);
		for (i = 0; i < num; i++) {
			struct reg *r = reg_of(uk[i].ptr, NULL);

			if (r)
				r->qdead = 1;
		}
		return -1;
	}
	if ((unsigned int)ret > num) {
		unexpected(what, ret, 0);
		return -1;
	}
	for (i = 0; i < num; i++) {
		struct reg *r = reg_of(uk[i].ptr, &idx);
		int found = 0;

		for (j = 0; j < (unsigned int)ret; j++) {
			if (back[j].ptr != uk[i].ptr)
				continue;
			found = 1;
			if (back[j].ret_flags & KEVENT_RET_BROKEN) {
				INC(r->add_fail);
				r->err = (int32_t)back[j].ret_data[1];
				failed++;
				if (!fail_expected)
					entry_unexpected(what, &back[j]);
			} else if (back[j].ret_flags != KEVENT_RET_DONE) {
				entry_unexpected(what, &back[j]);
			} else {
				INC(r->add_ready);
			}
		}
		if (!found)
			STORE(r->added, 1);
	}
	return failed;
}

/* One ADD; 0 kept, 1 ready at ADD, -errno failed, -1000 call failed. */
static int add_one(int fd, struct ukevent uk, const char *what,
		   int fail_expected)
{
	struct reg *r = reg_of(uk.ptr, NULL);
	int ret = add_regs(fd, &uk, 1, what, fail_expected);

	if (ret < 0)
		return -1000;
	if (ret)
		return r->err ? r->err : -1;
	return LOAD(r->add_ready) ? 1 : 0;
}

/*
 * REMOVE of num entries, one call: count the ones found.  ENOENT is
 * expected when may_be_gone; EINVAL when the queue may hold fewer than
 * num registrations.
 */
static int remove_regs(int fd, struct ukevent *uk, unsigned int num,
		       const char *what, int may_be_gone)
{
	struct ukevent back[64];
	unsigned int i;
	int ret, found = 0;

	memcpy(back, uk, num * sizeof(*uk));
	OP(OP_REMOVE);
	ret = kevent_ctl(fd, KEVENT_CTL_REMOVE, num, back);
	if (ret < 0) {
		if (!(errno == EINVAL && num > 1))
			unexpected(what, ret, errno);
		return -1;
	}
	if ((unsigned int)ret != num) {
		unexpected(what, ret, 0);
		return -1;
	}
	for (i = 0; i < num; i++) {
		struct reg *r = reg_of(back[i].ptr, NULL);

		if (back[i].ret_flags == KEVENT_RET_DONE) {
			if (r)
				INC(r->removed);
			found++;
		} else if (back[i].ret_flags ==
			   (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
			   (int)back[i].ret_data[1] == -ENOENT) {
			if (!may_be_gone)
				entry_unexpected(what, &back[i]);
		} else {
			entry_unexpected(what, &back[i]);
		}
	}
	return found;
}

/* ---------------------------------------------------------------- */
/* Channels: a byte stream of records through one descriptor pair.  */

enum ch_kind { CH_PIPE, CH_TCP, CH_UDP, CH_USTREAM, CH_UDGRAM, CH_NKINDS };
enum ch_mode { M_LT, M_ET, M_ONESHOT, M_POLL_LT, M_POLL_ET, M_NMODES };

static const char *const ch_kind_name[CH_NKINDS] = {
	"pipe", "tcp", "udp", "unix-stream", "unix-dgram",
};

#define REC_SIZE	16
#define END_SEQ		0xffffffffU
#define MAX_CH		32
#define W_DGRAM		16		/* records in flight, datagrams */
#define W_STREAM	(256 * 1024)	/* bytes in flight, streams */

/*
 * UDP may drop a datagram even on loopback (a full per-CPU backlog or
 * receive buffer), and may deliver one late: loopback queues a packet
 * to the backlog of the CPU that sent it, so a sender that moves to the
 * other CPU while the first one's backlog waits for ksoftirqd overtakes
 * itself.  kevent owes every datagram that reaches the socket a report,
 * not the datagram: a UDP channel accepts gaps and late datagrams
 * (counted), never a damaged or repeated one.  Its writer counts the
 * window as lost when nothing was read for UDP_STALL_NS and nothing is
 * queued; it sends END once what is in flight was read or counted lost,
 * again every UDP_RESEND_NS for UDP_END_SENDS_NS, and UDP_QUIET_NS
 * after the last one closes both ends itself.  A datagram still queued
 * then, or queued and not read for UDP_UNREAD_NS while nothing else was
 * sent, is a report that never came.
 */
#define UDP_MAX_RECS	4096		/* > (50 + 2000) + 8 records */
#define UDP_STALL_NS	200000000LL
#define UDP_UNREAD_NS	3000000000LL
#define UDP_RESEND_NS	20000000LL
#define UDP_END_SENDS_NS 2000000000LL
#define UDP_QUIET_NS	3000000000LL

struct rec {
	uint32_t tag, seq, total, chk;
};

struct channel {
	pthread_mutex_t lock;	/* the reader side */
	uint32_t gen;
	int slot, kind, mode, q, qid;
	int rfd, wfd;
	/* writer side, owned by one writer */
	int used, ending, wclosed, blocked, after_send;
	uint64_t wbytes, wlimit, lifetime;
	uint64_t end_at;	/* the index of the END record */
	uint32_t send_reg;
	long long blocked_since;
	/* writer side, UDP */
	uint64_t wlost;		/* records the window counts as lost */
	uint64_t stall_rbytes;
	long long stall_since, end_first, end_last;
	uint32_t end_resends, window_resets;
	/* reader side, under lock */
	uint32_t reg;		/* the current reader registration */
	uint64_t rbytes_local;
	unsigned char part[REC_SIZE];
	unsigned int partlen;
	uint32_t rseq;
	int ended, rclosed, bad, eof_early;
	/* reader side, UDP, under lock */
	uint32_t rmax, rdistinct, late;
	int unread, end_lost;
	uint8_t seen[UDP_MAX_RECS / 8];
	/* published */
	uint64_t rbytes;
	uint32_t rrecords;	/* UDP: the highest sequence number read + 1 */
};

static struct channel chans[MAX_CH];

/* Totals per kind, for the final check and diag. */
static uint64_t kind_wbytes[CH_NKINDS], kind_rbytes[CH_NKINDS];
static uint32_t kind_channels[CH_NKINDS], kind_done[CH_NKINDS];
static uint32_t chan_bad, chan_unfinished, send_spurious;
static uint64_t udp_unread, udp_late;
static uint32_t udp_resets, udp_resends, udp_end_lost;
static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t rec_chk(uint32_t tag, uint32_t seq, uint32_t total)
{
	uint32_t h = tag * 0x9e3779b1U ^ seq * 0x85ebca6bU ^ total * 0xc2b2ae35U;

	return h ^ (h >> 15);
}

static void make_rec(const struct channel *c, uint64_t k, struct rec *out)
{
	out->tag = ((uint32_t)c->slot << 24) | (c->gen & 0xffffff);
	if (k == c->end_at) {
		out->seq = END_SEQ;
		out->total = (uint32_t)k;
	} else {
		out->seq = (uint32_t)k;
		out->total = 0;
	}
	out->chk = rec_chk(out->tag, out->seq, out->total);
}

static int is_dgram(int kind)
{
	return kind == CH_UDP || kind == CH_UDGRAM;
}

/*
 * A UDP record: each sequence number at most once, the END record's
 * total above every one read; gaps and late ones are counted.
 */
static void udp_record(struct channel *c, const struct rec *r)
{
	uint32_t seq = r->seq;

	if (seq == END_SEQ) {
		if (r->total < c->rmax || r->total >= UDP_MAX_RECS)
			c->bad++;
		c->ended = 1;
		return;
	}
	if (seq >= UDP_MAX_RECS || (c->seen[seq / 8] & (1U << (seq % 8)))) {
		c->bad++;
		return;
	}
	c->seen[seq / 8] |= (uint8_t)(1U << (seq % 8));
	c->rdistinct++;
	if (seq < c->rmax) {
		c->late++;
		return;
	}
	c->rmax = seq + 1;
	STORE(c->rrecords, c->rmax);
}

/* Check one record against what the reader expects. */
static void chan_record(struct channel *c, const struct rec *r)
{
	uint32_t tag = ((uint32_t)c->slot << 24) | (c->gen & 0xffffff);

	if (c->ended || r->tag != tag ||
	    r->chk != rec_chk(r->tag, r->seq, r->total)) {
		c->bad++;
		return;
	}
	if (c->kind == CH_UDP) {
		udp_record(c, r);
		return;
	}
	if (r->seq == END_SEQ) {
		if (r->total != c->rseq)
			c->bad++;
		c->ended = 1;
		return;
	}
	if (r->seq != c->rseq)
		c->bad++;
	c->rseq = r->seq + 1;
	STORE(c->rrecords, c->rseq);
}

/* Read what the channel holds, until EAGAIN or the END record. */
static void chan_read(struct channel *c)
{
	unsigned char buf[4096];
	struct rec r;
	ssize_t n;
	size_t off;

	while (!c->ended) {
		if (is_dgram(c->kind))
			n = recv(c->rfd, buf, sizeof(buf), MSG_DONTWAIT);
		else
			n = read(c->rfd, buf, sizeof(buf));
		OP(OP_READS);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				unexpected("read of a channel", n, errno);
			break;
		}
		if (n == 0) {
			/* The END record comes before the end of the stream. */
			c->eof_early = 1;
			break;
		}
		c->rbytes_local += (uint64_t)n;
		STORE(c->rbytes, c->rbytes_local);
		if (is_dgram(c->kind)) {
			if (n != REC_SIZE) {
				c->bad++;
				continue;
			}
			memcpy(&r, buf, sizeof(r));
			chan_record(c, &r);
			continue;
		}
		off = 0;
		while (off < (size_t)n) {
			size_t take = REC_SIZE - c->partlen;

			if (take > (size_t)n - off)
				take = (size_t)n - off;
			memcpy(c->part + c->partlen, buf + off, take);
			c->partlen += (unsigned int)take;
			off += take;
			if (c->partlen == REC_SIZE) {
				memcpy(&r, c->part, sizeof(r));
				chan_record(c, &r);
				c->partlen = 0;
			}
		}
	}
}

static struct ukevent chan_reader_uk(struct channel *c, uint32_t idx)
{
	uint32_t type, event, flags = 0;

	switch (c->mode) {
	case M_POLL_LT:
	case M_POLL_ET:
		type = KEVENT_POLL;
		event = POLLIN;
		break;
	default:
		type = c->kind == CH_PIPE ? KEVENT_PIPE : KEVENT_SOCKET;
		event = KEVENT_SOCKET_RECV;
		break;
	}
	if (c->mode == M_ET || c->mode == M_POLL_ET)
		flags |= KEVENT_REQ_ET;
	if (c->mode == M_ONESHOT)
		flags |= KEVENT_REQ_ONESHOT;
	sh->regs[idx].slot = (uint32_t)c->slot;
	sh->regs[idx].gen = c->gen;
	return reg_uk(idx, type, fd_id(c->rfd), event, flags);
}

/*
 * Add a new one-shot reader registration; while it is ready at ADD,
 * read and add again.  The channel lock is held.
 */
static void chan_rearm(struct channel *c)
{
	struct ukevent uk;
	uint32_t idx;
	int ret;

	while (!c->ended) {
		if (!reg_new(K_CHAN, (uint8_t)c->qid, &idx)) {
			c->reg = 0;
			return;
		}
		uk = chan_reader_uk(c, idx);
		c->reg = idx;
		ret = add_one(c->q, uk, "ADD of a one-shot channel registration", 0);
		if (ret != 1)
			return;
		chan_read(c);
	}
}

/* A report for a reader registration of channel slot/gen. */
static void chan_event(uint32_t idx, const struct reg *r)
{
	struct channel *c;

	if (r->slot >= MAX_CH)
		return;
	c = &chans[r->slot];
	pthread_mutex_lock(&c->lock);
	if (c->gen == r->gen && !c->rclosed) {
		chan_read(c);
		if (c->mode == M_ONESHOT && c->reg == idx)
			chan_rearm(c);
		if (c->ended) {
			OP(OP_CLOSES);
			close(c->rfd);
			c->rclosed = 1;
		}
	}
	pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------- */
/* Accounting of reports.                                           */

static void periodic_report(struct reg *r, const struct ukevent *ev);
static void send_event(uint32_t idx, struct reg *r);

static int q_has_ring(int qid)
{
	return qid == Q_B || qid == Q_X1;
}

/*
 * Account for n reports that one call returned from queue qid.  Returns
 * the number of events for registrations of kind K_SEND (the writers
 * act on those themselves).
 */
static void account(int qid, const struct ukevent *ev, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (ev[j].type == ev[i].type &&
			    ev[j].id.raw_u64 == ev[i].id.raw_u64 &&
			    ev[j].ptr == ev[i].ptr) {
				if (INC(sh->dup_in_call) <= 5)
					diag("reported twice in one call: type %u id %llx ptr %llx req_flags %#x, as #%d (flags %#x data %#x %#x) and #%d (flags %#x data %#x %#x) of %d",
					     ev[i].type,
					     (unsigned long long)ev[i].id.raw_u64,
					     (unsigned long long)ev[i].ptr,
					     ev[i].req_flags, j, ev[j].ret_flags,
					     ev[j].ret_data[0], ev[j].ret_data[1],
					     i, ev[i].ret_flags, ev[i].ret_data[0],
					     ev[i].ret_data[1], n);
				break;
			}
		}
	}
	for (i = 0; i < n; i++) {
		const struct ukevent *e = &ev[i];
		uint32_t idx, allowed = KEVENT_RET_DONE | KEVENT_RET_BROKEN;
		struct reg *r = reg_of(e->ptr, &idx);

		OP(OP_EVENTS);
		if (!r) {
			if (INC(sh->unknown_ptr) <= 5)
				diag("report with an unknown ptr %llx type %u",
				     (unsigned long long)e->ptr, e->type);
			continue;
		}
		if (q_has_ring(qid))
			allowed |= KEVENT_RET_COPY_FAILED;
		if (e->ret_flags & KEVENT_RET_COPY_FAILED)
			OP(OP_COPY_FAILED);
		if (r->q != qid) {
			if (INC(sh->wrong_queue) <= 5)
				diag("%s registration %u reported on queue %d, added to %d",
				     kind_name[r->kind], idx, qid, r->q);
		}
		if (e->type != r->type || e->id.raw_u64 != r->id ||
		    !(e->ret_flags & KEVENT_RET_DONE) ||
		    (e->ret_flags & ~allowed) ||
		    ((e->ret_flags & KEVENT_RET_BROKEN) &&
		     ((int)e->ret_data[1] >= 0 || (int)e->ret_data[1] < -4095))) {
			INC(r->bad);
			if (INC(sh->malformed) <= 5)
				diag("malformed report of %s registration %u: type %u id %llx flags %x data %x %x",
				     kind_name[r->kind], idx, e->type,
				     (unsigned long long)e->id.raw_u64,
				     e->ret_flags, e->ret_data[0], e->ret_data[1]);
		}
		if (e->ret_flags & KEVENT_RET_BROKEN) {
			OP(OP_BROKEN);
			r->err = (int32_t)e->ret_data[1];
			INC(r->broken);
		} else {
			INC(r->reports);
		}
		switch (r->kind) {
		case K_TIMER1:
		case K_CHILD:
			if (!(e->ret_flags & KEVENT_RET_BROKEN) &&
			    e->ret_data[1] > 1)
				INC(r->bad);
			break;
		case K_PERIODIC:
			periodic_report(r, e);
			break;
		case K_SIG:
			if (!(e->ret_flags & KEVENT_RET_BROKEN))
				ADD(r->count, e->ret_data[1]);
			break;
		case K_POSIX:
			ADD(r->count, e->ret_data[0]);
			break;
		case K_CHAN:
			chan_event(idx, r);
			break;
		case K_SEND:
			send_event(idx, r);
			break;
		default:
			break;
		}
	}
}

/* ---------------------------------------------------------------- */
/* Periodic KEVENT_TIMER registrations.                             */

struct periodic {
	uint32_t idx, period_ns;
	long long add_call, add_ret, rm_call, rm_ret;
	uint32_t min_ms;
};

#define MAX_PERIODIC	4096
static struct periodic periodics[MAX_PERIODIC];
static uint32_t nperiodic;
static uint32_t timer_res_ns = 1000000;

static void periodic_report(struct reg *r, const struct ukevent *ev)
{
	uint32_t ms = ev->ret_data[0], old;

	if (ev->ret_flags & KEVENT_RET_BROKEN)
		return;
	ADD(r->count, ev->ret_data[1]);
	old = LOAD(r->max_ms);
	while (ms > old &&
	       !__atomic_compare_exchange_n(&r->max_ms, &old, ms, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/*
 * The expiries reported must be those up to the latest expiry the
 * kernel reports (ret_data[0], ms of CLOCK_MONOTONIC): the timer started
 * between add_call and add_ret, so count periods from there, with one
 * period of slack either way for the millisecond rounding.
 */
static int periodic_ok(const struct periodic *p, char *why, size_t len)
{
	const struct reg *r = &sh->regs[p->idx];
	long long lo_ns, hi_ns, lo, hi, cap;
	long long n = r->count, period = p->period_ns;

	if (period < 100000)
		period = 100000;
	cap = (p->rm_ret - p->add_call) / period + 1;
	if (n > cap) {
		snprintf(why, len, "%lld expiries reported in %lld ms of life, period %lld ns",
			 n, (p->rm_ret - p->add_call) / 1000000, period);
		return 0;
	}
	if (!n) {
		if (p->rm_call - p->add_ret > 3000000000LL) {
			snprintf(why, len, "no report in %lld ms",
				 (p->rm_call - p->add_ret) / 1000000);
			return 0;
		}
		return 1;
	}
	lo_ns = (long long)r->max_ms * 1000000 - p->add_ret;
	hi_ns = ((long long)r->max_ms + 1) * 1000000 - p->add_call;
	lo = lo_ns / period - 1;
	hi = hi_ns / period + 1;
	if (n < lo || n > hi) {
		snprintf(why, len, "%lld expiries reported up to %u ms, expected %lld..%lld (period %lld ns)",
			 n, r->max_ms, lo, hi, period);
		return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- */
/* Writers.                                                         */

struct writer {
	int id, qw, qid;
	struct rng rng;
	int listener;		/* TCP */
	struct sockaddr_in lsin;
	int nchan;
	int slots[MAX_CH];
	long long deadline;
	pthread_t th;
};

static struct writer writers[2];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static int slot_used[MAX_CH];

static void nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int unix_addr(struct sockaddr_un *sun, const char *what)
{
	static uint32_t seq;
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
		     "kevent-stress-%d-%s-%u", (int)getpid(), what, INC(seq));
	return (int)offsetof(struct sockaddr_un, sun_path) + 1 + n;
}

/* Make the descriptors of a channel of this kind; 0 or -1. */
static int chan_fds(struct writer *w, int kind, int *rfd, int *wfd)
{
	struct sockaddr_in sin;
	struct sockaddr_un sun;
	socklen_t len;
	int p[2], a, b;

	switch (kind) {
	case CH_PIPE:
		if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
			return -1;
		*rfd = p[0];
		*wfd = p[1];
		return 0;
	case CH_TCP:
		a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (a < 0)
			return -1;
		if (connect(a, (struct sockaddr *)&w->lsin, sizeof(w->lsin))) {
			close(a);
			return -1;
		}
		b = accept4(w->listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (b < 0) {
			close(a);
			return -1;
		}
		nonblock(a);
		if (rng_chance(&w->rng, 50)) {
			*rfd = b;
			*wfd = a;
		} else {
			*rfd = a;
			*wfd = b;
		}
		return 0;
	case CH_UDP:
		a = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		b = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(sin);
		if (a < 0 || b < 0 || bind(a, (struct sockaddr *)&sin, len) ||
		    getsockname(a, (struct sockaddr *)&sin, &len) ||
		    connect(b, (struct sockaddr *)&sin, len) ||
		    getsockname(b, (struct sockaddr *)&sin, &len) ||
		    /* Datagrams from the writer only (the racers send too). */
		    connect(a, (struct sockaddr *)&sin, len)) {
			close(a);
			close(b);
			return -1;
		}
		*rfd = a;
		*wfd = b;
		return 0;
	case CH_USTREAM:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			       0, p))
			return -1;
		*rfd = p[0];
		*wfd = p[1];
		return 0;
	case CH_UDGRAM:
		/*
		 * A bound receiver and a sender connected to it (not a pair):
		 * the receiver's queue limit then applies to the sender.
		 */
		a = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		b = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		len = (socklen_t)unix_addr(&sun, "dgram");
		if (a < 0 || b < 0 || bind(a, (struct sockaddr *)&sun, len) ||
		    connect(b, (struct sockaddr *)&sun, len)) {
			close(a);
			close(b);
			return -1;
		}
		*rfd = a;
		*wfd = b;
		return 0;
	}
	return -1;
}

static int slot_get(void)
{
	int i;

	pthread_mutex_lock(&slot_lock);
	for (i = 0; i < MAX_CH; i++) {
		if (!slot_used[i]) {
			slot_used[i] = 1;
			pthread_mutex_unlock(&slot_lock);
			return i;
		}
	}
	pthread_mutex_unlock(&slot_lock);
	return -1;
}

static void slot_put(int i)
{
	pthread_mutex_lock(&slot_lock);
	slot_used[i] = 0;
	pthread_mutex_unlock(&slot_lock);
}

static void chan_open(struct writer *w)
{
	struct channel *c;
	struct ukevent uk;
	int slot, kind, rfd, wfd, ret;
	uint32_t idx;

	slot = slot_get();
	if (slot < 0)
		return;
	kind = (int)rng_below(&w->rng, CH_NKINDS);
	if (chan_fds(w, kind, &rfd, &wfd)) {
		unexpected("making a channel", -1, errno);
		slot_put(slot);
		return;
	}
	c = &chans[slot];
	pthread_mutex_lock(&c->lock);
	c->gen++;
	c->slot = slot;
	c->kind = kind;
	c->mode = (int)rng_below(&w->rng, M_NMODES);
	if (rng_chance(&w->rng, 25)) {
		c->q = qb;
		c->qid = Q_B;
	} else if (rng_chance(&w->rng, 33)) {
		c->q = qd;
		c->qid = Q_D;
	} else {
		c->q = qa;
		c->qid = Q_A;
	}
	c->rfd = rfd;
	c->wfd = wfd;
	c->used = 1;
	c->ending = c->wclosed = c->blocked = c->after_send = 0;
	c->wbytes = 0;
	c->end_at = UINT64_MAX;
	c->wlimit = UINT64_MAX;
	c->lifetime = is_dgram(kind) ?
		(50 + rng_below(&w->rng, 2000)) * REC_SIZE :
		(uint64_t)(16384 + rng_below(&w->rng, 1 << 20));
	c->send_reg = 0;
	c->reg = 0;
	c->rbytes_local = 0;
	c->partlen = 0;
	c->rseq = 0;
	c->ended = c->rclosed = c->bad = c->eof_early = 0;
	c->wlost = c->stall_rbytes = 0;
	c->stall_since = c->end_first = c->end_last = 0;
	c->end_resends = c->window_resets = 0;
	c->rmax = c->rdistinct = c->late = 0;
	c->unread = c->end_lost = 0;
	memset(c->seen, 0, sizeof(c->seen));
	STORE(c->rbytes, 0);
	STORE(c->rrecords, 0);
	if (reg_new(K_CHAN, (uint8_t)c->qid, &idx)) {
		uk = chan_reader_uk(c, idx);
		c->reg = idx;
		/* Empty: nothing is ready at ADD, whatever the flags. */
		if (c->mode == M_LT && rng_chance(&w->rng, 50))
			uk.req_flags |= KEVENT_REQ_ALWAYS_QUEUE;
		ret = add_one(c->q, uk, "ADD of a channel registration", 0);
		if (ret)
			unexpected("ADD of a channel registration: ready or failed at once",
				   ret, 0);
	}
	pthread_mutex_unlock(&c->lock);
	w->slots[w->nchan++] = slot;
	OP(OP_CHANNELS);
	pthread_mutex_lock(&totals_lock);
	kind_channels[kind]++;
	pthread_mutex_unlock(&totals_lock);
}

/* Start ending a channel: the record being written is the last but one. */
static void chan_end(struct channel *c)
{
	if (c->ending)
		return;
	c->ending = 1;
	c->end_at = (c->wbytes + REC_SIZE - 1) / REC_SIZE;
	c->wlimit = (c->end_at + 1) * REC_SIZE;
}

static void chan_send_wait(struct writer *w, struct channel *c)
{
	uint32_t idx, type, event;
	struct ukevent uk;
	int ret;

	if (!reg_new(K_SEND, (uint8_t)w->qid, &idx))
		return;
	if (rng_chance(&w->rng, 30)) {
		type = KEVENT_POLL;
		event = POLLOUT;
	} else {
		type = c->kind == CH_PIPE ? KEVENT_PIPE : KEVENT_SOCKET;
		event = KEVENT_SOCKET_SEND;
	}
	sh->regs[idx].slot = (uint32_t)c->slot;
	sh->regs[idx].gen = c->gen;
	uk = reg_uk(idx, type, fd_id(c->wfd), event, KEVENT_REQ_ONESHOT);
	c->send_reg = idx;
	c->blocked = 1;
	c->blocked_since = now_ns();
	OP(OP_SEND_WAITS);
	ret = add_one(w->qw, uk, "ADD of a SEND registration", 0);
	if (ret != 0) {
		/* Ready at once (or failed): try to write again. */
		c->blocked = 0;
		c->send_reg = 0;
	}
}

/* A SEND registration was reported: the writer may write again. */
static void send_event(uint32_t idx, struct reg *r)
{
	struct channel *c;

	if (r->slot >= MAX_CH)
		return;
	c = &chans[r->slot];
	/* Only the writer that owns the channel harvests its queue. */
	if (c->gen == r->gen && c->send_reg == idx) {
		c->blocked = 0;
		c->send_reg = 0;
		c->after_send = 1;
	}
}

/* A write failed: wait for room, or end the channel where it is. */
static void chan_write_failed(struct writer *w, struct channel *c,
			      const char *what)
{
	if (errno == EAGAIN) {
		if (c->after_send)
			send_spurious++;
		chan_send_wait(w, c);
		return;
	}
	unexpected(what, -1, errno);
	chan_end(c);
	c->wlimit = c->wbytes;
}

/* Is a datagram queued at the reader's end?  The channel lock is held. */
static int udp_queued(struct channel *c)
{
	unsigned char b;
	ssize_t n;

	if (c->rclosed)
		return 0;
	n = recv(c->rfd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && errno != EAGAIN)
		unexpected("recv(MSG_PEEK) of a UDP channel", n, errno);
	return n >= 0;
}

/*
 * Close both ends of a UDP channel whose reader did not end.  What is
 * still queued was never reported to a reader that has a registration.
 */
static void udp_give_up(struct channel *c)
{
	pthread_mutex_lock(&c->lock);
	if (!c->rclosed) {
		if (udp_queued(c) && c->reg)
			c->unread = 1;
		if (c->end_first && !c->ended)
			c->end_lost = 1;
		OP(OP_CLOSES);
		close(c->rfd);
		c->rclosed = 1;
	}
	pthread_mutex_unlock(&c->lock);
	OP(OP_CLOSES);
	close(c->wfd);
	c->wclosed = 1;
}

/*
 * The window of a UDP channel is full, or its END waits for the
 * datagrams in flight to be read.  Nothing read for UDP_STALL_NS and
 * nothing queued: what is in flight was dropped (or comes late), go on.
 * Something queued and not read for UDP_UNREAD_NS: give up, that is a
 * report that never came.  1 if the channel was closed.
 */
static int udp_stalled(struct channel *c)
{
	uint64_t rb = LOAD(c->rbytes);
	long long now = now_ns();
	int queued;

	if (!c->stall_since || rb != c->stall_rbytes) {
		c->stall_since = now;
		c->stall_rbytes = rb;
		return 0;
	}
	if (now - c->stall_since < UDP_STALL_NS)
		return 0;
	pthread_mutex_lock(&c->lock);
	queued = udp_queued(c);
	pthread_mutex_unlock(&c->lock);
	if (!queued) {
		c->wlost = c->wbytes / REC_SIZE;
		c->window_resets++;
		c->stall_since = 0;
		return 0;
	}
	if (now - c->stall_since < UDP_UNREAD_NS)
		return 0;
	udp_give_up(c);
	return 1;
}

/*
 * The END record of a UDP channel went out: close the writer's end once
 * the reader has ended; until then send END again, and in the end give
 * up.  1 if the channel was closed.
 */
static int udp_finish(struct channel *c)
{
	long long now = now_ns();
	struct rec r;
	ssize_t n;

	if (LOAD(c->rclosed)) {
		OP(OP_CLOSES);
		close(c->wfd);
		c->wclosed = 1;
		return 1;
	}
	if (!c->end_first)
		c->end_first = c->end_last = now;
	if (now - c->end_first < UDP_END_SENDS_NS) {
		if (now - c->end_last < UDP_RESEND_NS)
			return 0;
		c->end_last = now;
		make_rec(c, c->end_at, &r);
		n = send(c->wfd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
		OP(OP_WRITES);
		if (n == REC_SIZE)
			c->end_resends++;
		/* ECONNREFUSED: the reader ended and closed meanwhile. */
		else if (!(n < 0 && (errno == EAGAIN || errno == ECONNREFUSED)))
			unexpected("send of a repeated END on a UDP channel", n, errno);
		return 0;
	}
	if (now - c->end_last < UDP_QUIET_NS)
		return 0;
	udp_give_up(c);
	return 1;
}

/* Write what the window allows; 1 if something was written. */
static int chan_write(struct writer *w, struct channel *c)
{
	unsigned char buf[258 * REC_SIZE];
	uint64_t first, k, limit, in_flight, base;
	size_t len, i, off;
	struct rec r;
	ssize_t n;
	int progress = 0;

	if (c->blocked || c->wclosed)
		return 0;
	if (!c->ending && c->wbytes >= c->lifetime)
		chan_end(c);
	if (c->wbytes >= c->wlimit) {
		if (c->kind == CH_UDP && c->end_at != UINT64_MAX)
			return udp_finish(c);
		OP(OP_CLOSES);
		close(c->wfd);
		c->wclosed = 1;
		return 1;
	}
	if (is_dgram(c->kind)) {
		base = LOAD(c->rrecords);
		if (c->kind == CH_UDP && c->wlost > base)
			base = c->wlost;
		in_flight = c->wbytes / REC_SIZE - base;
		if (in_flight >= W_DGRAM)
			return c->kind == CH_UDP ? udp_stalled(c) : 0;
		/* UDP: END after the rest is read (or lost), not before it. */
		if (c->kind == CH_UDP && in_flight &&
		    c->wbytes / REC_SIZE == c->end_at)
			return udp_stalled(c);
		c->stall_since = 0;
		limit = W_DGRAM - in_flight;
		if (limit > 1 + rng_below(&w->rng, 8))
			limit = 1 + rng_below(&w->rng, 8);
		for (k = 0; k < limit && c->wbytes < c->wlimit; k++) {
			make_rec(c, c->wbytes / REC_SIZE, &r);
			n = send(c->wfd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL);
			OP(OP_WRITES);
			if (n < 0) {
				chan_write_failed(w, c, "send on a datagram channel");
				break;
			}
			if (n != REC_SIZE)
				unexpected("short datagram send", n, 0);
			c->wbytes += REC_SIZE;
			c->after_send = 0;
			ADD(sh->ops[OP_BYTES], (uint32_t)n);
			progress = 1;
		}
		return progress;
	}
	in_flight = c->wbytes - LOAD(c->rbytes);
	if (in_flight >= W_STREAM)
		return 0;
	len = (1 + rng_below(&w->rng, 256)) * REC_SIZE;
	if (len > W_STREAM - in_flight)
		len = (size_t)(W_STREAM - in_flight);
	if (len > c->wlimit - c->wbytes)
		len = (size_t)(c->wlimit - c->wbytes);
	/* The bytes [wbytes, wbytes + len) of the channel's stream. */
	first = c->wbytes / REC_SIZE;
	off = (size_t)(c->wbytes % REC_SIZE);
	for (i = 0; i * REC_SIZE < off + len; i++) {
		make_rec(c, first + i, &r);
		memcpy(buf + i * REC_SIZE, &r, REC_SIZE);
	}
	n = write(c->wfd, buf + off, len);
	OP(OP_WRITES);
	if (n < 0) {
		chan_write_failed(w, c, "write on a stream channel");
		return 0;
	}
	c->after_send = 0;
	c->wbytes += (uint64_t)n;
	ADD(sh->ops[OP_BYTES], (uint32_t)n);
	return 1;
}

/* Retire a channel both sides are done with; 1 if it was. */
static int chan_reap(struct writer *w, int i)
{
	struct channel *c = &chans[w->slots[i]];
	int done;

	if (!c->wclosed)
		return 0;
	pthread_mutex_lock(&c->lock);
	done = c->rclosed;
	if (done && c->kind == CH_UDP) {
		/* The data records sent: those before END. */
		uint64_t sent = c->wbytes / REC_SIZE;

		if (sent > c->end_at)
			sent = c->end_at;
		pthread_mutex_lock(&totals_lock);
		kind_wbytes[c->kind] += c->wbytes;
		kind_rbytes[c->kind] += c->rbytes_local;
		kind_done[c->kind]++;
		if (sent > c->rdistinct)
			udp_unread += sent - c->rdistinct;
		udp_late += c->late;
		udp_resets += c->window_resets;
		udp_resends += c->end_resends;
		udp_end_lost += (uint32_t)c->end_lost;
		if (c->bad || c->eof_early || c->unread) {
			if (chan_bad++ < 5)
				diag("channel udp (%d) mode %d: sent %llu datagrams and END, read %u of them (%u late), %d bad records, eof early %d, %s",
				     c->slot, c->mode, (unsigned long long)sent,
				     c->rdistinct, c->late, c->bad, c->eof_early,
				     c->unread ? "datagrams left queued and unread: a report never came" :
				     c->ended ? "ended" : "END never read");
		}
		pthread_mutex_unlock(&totals_lock);
		c->used = 0;
	} else if (done) {
		pthread_mutex_lock(&totals_lock);
		kind_wbytes[c->kind] += c->wbytes;
		kind_rbytes[c->kind] += c->rbytes_local;
		kind_done[c->kind]++;
		if (c->bad || c->eof_early || c->rbytes_local != c->wbytes) {
			if (chan_bad++ < 5)
				diag("channel %s (%d) mode %d: wrote %llu bytes, read %llu, %d bad records, eof early %d",
				     ch_kind_name[c->kind], c->slot, c->mode,
				     (unsigned long long)c->wbytes,
				     (unsigned long long)c->rbytes_local,
				     c->bad, c->eof_early);
		}
		pthread_mutex_unlock(&totals_lock);
		c->used = 0;
	}
	pthread_mutex_unlock(&c->lock);
	if (!done)
		return 0;
	slot_put(c->slot);
	w->slots[i] = w->slots[--w->nchan];
	return 1;
}

static void writer_harvest(struct writer *w, int block_ms)
{
	struct ukevent buf[16];
	int n;

	OP(OP_GET_EVENTS);
	n = kevent_get_events(w->qw, block_ms ? 1 : 0, 16,
			      TSP(0, block_ms * 1000000LL), buf, 0);
	if (n < 0) {
		if (errno == EINTR)
			OP(OP_EINTR);
		else
			unexpected("kevent_get_events on a writer's queue", n, errno);
		return;
	}
	account(w->qid, buf, n);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	int i, progress, stopping = 0;

	while (1) {
		if (!stopping && LOAD(sh->stop)) {
			stopping = 1;
			/* Before main gives up on joining it (17 s). */
			w->deadline = now_ns() + 15000000000LL;
			for (i = 0; i < w->nchan; i++)
				chan_end(&chans[w->slots[i]]);
		}
		if (stopping && !w->nchan)
			break;
		if (stopping && now_ns() > w->deadline)
			break;
		if (!stopping && w->nchan < 6)
			chan_open(w);
		progress = 0;
		for (i = 0; i < w->nchan; i++)
			progress |= chan_write(w, &chans[w->slots[i]]);
		for (i = w->nchan - 1; i >= 0; i--)
			chan_reap(w, i);
		if (!stopping && rng_chance(&w->rng, 2) && w->nchan)
			chan_end(&chans[w->slots[rng_below(&w->rng, (uint32_t)w->nchan)]]);
		writer_harvest(w, progress ? 0 : 2);
	}
	/* What is left unfinished is a finding: count it. */
	for (i = 0; i < w->nchan; i++) {
		struct channel *c = &chans[w->slots[i]];

		pthread_mutex_lock(&totals_lock);
		if (chan_unfinished++ < 5)
			diag("channel %s (%d) mode %d unfinished: wrote %llu of %llu bytes, blocked %d (send reg %u), read %llu, ended %d",
			     ch_kind_name[c->kind], c->slot, c->mode,
			     (unsigned long long)c->wbytes,
			     (unsigned long long)c->wlimit, c->blocked,
			     c->send_reg,
			     (unsigned long long)LOAD(c->rbytes), c->ended);
		pthread_mutex_unlock(&totals_lock);
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* Harvesters.                                                      */

struct harvester {
	int fd, qid;
	struct rng rng;
	pthread_t th;
};

static void *harvester_main(void *arg)
{
	struct harvester *h = arg;
	struct ukevent buf[64];
	struct __kernel_timespec t, *tp;
	struct timespec rt;
	unsigned int min_nr, max_nr, flags;
	int n;

	while (!LOAD(sh->harvest_stop)) {
		max_nr = 1 + rng_below(&h->rng, 64);
		min_nr = rng_below(&h->rng, 5);
		if (min_nr > max_nr)
			min_nr = max_nr;
		flags = 0;
		tp = &t;
		t.tv_sec = 0;
		switch (rng_below(&h->rng, 6)) {
		case 0:
			t.tv_nsec = 0;
			break;
		case 1:
			t.tv_nsec = 1000000;
			break;
		case 2:
			t.tv_nsec = 10000000;
			break;
		case 3:
			t.tv_nsec = 50000000;
			break;
		case 4:
			/* No limit: the teardown kicks the queue. */
			if (!min_nr)
				min_nr = 1;
			tp = NULL;
			break;
		default:
			clock_gettime(CLOCK_REALTIME, &rt);
			rt.tv_nsec += 5000000;
			if (rt.tv_nsec >= 1000000000) {
				rt.tv_nsec -= 1000000000;
				rt.tv_sec++;
			}
			t.tv_sec = rt.tv_sec;
			t.tv_nsec = rt.tv_nsec;
			flags = KEVENT_FLAGS_ABSTIME;
			break;
		}
		OP(OP_GET_EVENTS);
		n = kevent_get_events(h->fd, min_nr, max_nr, tp, buf, flags);
		if (n < 0) {
			if (errno == EINTR)
				OP(OP_EINTR);
			else
				unexpected("kevent_get_events on a shared queue", n, errno);
			continue;
		}
		if ((unsigned int)n > max_nr)
			unexpected("kevent_get_events: more than max_nr", n, 0);
		account(h->qid, buf, n);
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* The consumer of ring queue B.                                     */

static struct rng ring_rng;
static unsigned long long ring_pos, ring_wpos;

/*
 * The kernel has just written n slots, ending where ring_kidx now
 * points: they must start where the consumer's count says.  If they do
 * not (another writer: a process that shares the queue from another
 * address space), say so and follow the kernel, so that the events
 * themselves are still read from where they are.
 */
static void ring_sync(unsigned int n, const char *what)
{
	uint32_t kidx = __atomic_load_n(&ring_b->ring_kidx, __ATOMIC_ACQUIRE);
	uint32_t start = (kidx + RING_B_SIZE * 2 - n % RING_B_SIZE) % RING_B_SIZE;

	if (kidx >= RING_B_SIZE || start != ring_wpos % RING_B_SIZE) {
		if (INC(sh->ring_bad) <= 5)
			diag("ring: after %s of %u events ring_kidx is %u, the consumer counted %llu written",
			     what, n, kidx, ring_wpos + n);
		if (kidx < RING_B_SIZE)
			ring_wpos += (start + RING_B_SIZE - ring_wpos % RING_B_SIZE) %
				     RING_B_SIZE;
	}
}

static void ring_commit(void)
{
	unsigned long long avail = ring_wpos - ring_pos, to;
	int ret;

	if (!avail && rng_chance(&ring_rng, 80))
		return;
	/* Now and then a commit that must fail and change nothing. */
	if (rng_chance(&ring_rng, 5)) {
		OP(OP_COMMIT);
		ret = kevent_commit(qb, (unsigned int)(ring_pos % RING_B_SIZE),
				    (unsigned int)(ring_pos / RING_B_SIZE) + 2);
		if (ret != -1 || errno != EOVERFLOW)
			unexpected("kevent_commit with a stale over", ret, errno);
	}
	if (avail < RING_B_SIZE && rng_chance(&ring_rng, 5)) {
		to = ring_wpos + 1;
		OP(OP_COMMIT);
		ret = kevent_commit(qb, (unsigned int)(to % RING_B_SIZE),
				    (unsigned int)(to / RING_B_SIZE));
		if (ret != -1 || errno != EINVAL)
			unexpected("kevent_commit beyond what was written", ret, errno);
	}
	to = rng_chance(&ring_rng, 70) ? ring_wpos :
	     ring_pos + rng_below(&ring_rng, (uint32_t)avail + 1);
	OP(OP_COMMIT);
	ret = kevent_commit(qb, (unsigned int)(to % RING_B_SIZE),
			    (unsigned int)(to / RING_B_SIZE));
	if (ret < 0 || (unsigned long long)ret != to - ring_pos) {
		unexpected("kevent_commit", ret, errno);
		if (ret < 0)
			return;
	}
	ring_pos = to;
}

static void *ring_main(void *arg)
{
	struct ukevent buf[32], got[RING_B_SIZE];
	unsigned int num, max_nr, min_nr, i, copies;
	long long ns;
	int n;

	(void)arg;
	while (!LOAD(sh->harvest_stop)) {
		ns = rng_chance(&ring_rng, 30) ? 0 :
		     (long long)rng_below(&ring_rng, 20) * 1000000;
		if (rng_chance(&ring_rng, 70)) {
			num = 1 + rng_below(&ring_rng, RING_B_SIZE);
			OP(OP_WAIT);
			n = kevent_wait(qb, num, (unsigned int)(ring_pos % RING_B_SIZE),
					TSP(0, ns), 0);
			if (n < 0) {
				if (errno == EINTR)
					OP(OP_EINTR);
				else
					unexpected("kevent_wait", n, errno);
				ring_commit();
				continue;
			}
			if ((unsigned int)n > num ||
			    (unsigned long long)n > RING_B_SIZE - (ring_wpos - ring_pos))
				unexpected("kevent_wait moved more than asked or room", n, 0);
			if (n > RING_B_SIZE)
				n = RING_B_SIZE;
			ring_sync((unsigned int)n, "kevent_wait");
			for (i = 0; i < (unsigned int)n; i++)
				got[i] = ring_b->event[(ring_wpos + i) % RING_B_SIZE];
			ring_wpos += (unsigned int)n;
			ADD(sh->ops[OP_RING_EVENTS], (uint32_t)n);
			account(Q_B, got, n);
		} else {
			max_nr = 1 + rng_below(&ring_rng, 32);
			min_nr = rng_below(&ring_rng, 3);
			if (min_nr > max_nr)
				min_nr = max_nr;
			OP(OP_GET_EVENTS);
			n = kevent_get_events(qb, min_nr, max_nr, TSP(0, ns / 4),
					      buf, 0);
			if (n < 0) {
				if (errno == EINTR)
					OP(OP_EINTR);
				else
					unexpected("kevent_get_events on the ring queue",
						   n, errno);
				ring_commit();
				continue;
			}
			/* The events without COPY_FAILED went to the ring too, in order. */
			copies = 0;
			for (i = 0; i < (unsigned int)n; i++)
				if (!(buf[i].ret_flags & KEVENT_RET_COPY_FAILED))
					copies++;
			if (copies > RING_B_SIZE)
				unexpected("kevent_get_events: more ring copies than slots",
					   (long)copies, 0);
			ring_sync(copies % (RING_B_SIZE + 1), "kevent_get_events");
			copies = 0;
			for (i = 0; i < (unsigned int)n; i++) {
				if (buf[i].ret_flags & KEVENT_RET_COPY_FAILED)
					continue;
				if (ring_wpos - ring_pos + copies >= RING_B_SIZE ||
				    memcmp(&ring_b->event[(ring_wpos + copies) % RING_B_SIZE],
					   &buf[i], sizeof(buf[i]))) {
					if (INC(sh->ring_bad) <= 5)
						diag("ring: event %u of kevent_get_events (ptr %llx) is not in ring slot %llu",
						     i, (unsigned long long)buf[i].ptr,
						     (ring_wpos + copies) % RING_B_SIZE);
				}
				copies++;
			}
			ring_wpos += copies;
			account(Q_B, buf, n);
		}
		ring_commit();
	}
	return NULL;
}

/* Waits on B with num 0 (no move) and kicks it. */
/* ---------------------------------------------------------------- */
/* The consumer of direct queue D.                                   */

static struct rng direct_rng;

static void *direct_main(void *arg)
{
	struct kevent_ring_tail *t = kevent_ring_tail(ring_d, RING_D_SIZE);
	struct ukevent buf[RING_D_SIZE];
	unsigned int n;
	int ret;

	(void)arg;
	while (!LOAD(sh->harvest_stop)) {
		n = kevent_ring_take(ring_d, RING_D_SIZE, buf, RING_D_SIZE);
		account(Q_D, buf, (int)n);
		if (n && !(LOAD(t->flags) & KEVENT_RING_F_PENDING))
			continue;
		OP(OP_WAIT);
		ret = kevent_wait(qd, RING_D_SIZE, LOAD(t->uhead),
				  TSP(0, (long)rng_below(&direct_rng, 20) *
					 1000000), 0);
		if (ret < 0) {
			if (errno == EINTR)
				OP(OP_EINTR);
			else
				unexpected("kevent_wait on the direct ring", ret,
					   errno);
		}
	}
	return NULL;
}

/* What is left in D once its consumer stopped. */
static void final_harvest_direct(void)
{
	struct kevent_ring_tail *t = kevent_ring_tail(ring_d, RING_D_SIZE);
	struct ukevent buf[RING_D_SIZE];
	unsigned int n;
	int rounds = 0;

	do {
		kevent_wait(qd, RING_D_SIZE, LOAD(t->uhead), TSP(0, 0), 0);
		n = kevent_ring_take(ring_d, RING_D_SIZE, buf, RING_D_SIZE);
		account(Q_D, buf, (int)n);
	} while (n && ++rounds < 1000);
}

static void *ring_waiter_main(void *arg)
{
	struct rng rng;
	int n;

	(void)arg;
	rng_seed(&rng, seed, 77);
	while (!LOAD(sh->harvest_stop)) {
		if (rng_chance(&rng, 20)) {
			OP(OP_KICK);
			n = kevent_ctl(qb, KEVENT_CTL_READY, 0, NULL);
			if (n)
				unexpected("kevent_ctl(READY, 0) on the ring queue", n, errno);
			msleep(1 + rng_below(&rng, 5));
			continue;
		}
		OP(OP_WAIT);
		n = kevent_wait(qb, 0, rng_below(&rng, RING_B_SIZE),
				TSP(0, (1 + rng_below(&rng, 10)) * 1000000LL), 0);
		if (n < 0 && errno != EINTR)
			unexpected("kevent_wait(num 0)", n, errno);
		if (n > 0)
			unexpected("kevent_wait(num 0) moved events", n, 0);
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* Timer threads: one-shot timers by batch, periodic timers.        */

struct live {
	uint32_t idx;
	int fd;
	struct ukevent uk;
};

#define MAX_LIVE	512

struct timer_thread {
	int id;
	struct rng rng;
	struct live live[MAX_LIVE];
	unsigned int nlive;
	uint32_t periodic[2];
	unsigned int nperiodic;
	pthread_t th;
};

static struct timer_thread tthreads[2];

static int settled1(const struct reg *r)
{
	return LOAD(r->reports) + LOAD(r->removed) + LOAD(r->broken) +
	       LOAD(r->add_ready) + LOAD(r->add_fail) != 0;
}

static void live_prune(struct timer_thread *t)
{
	unsigned int i = 0;

	while (i < t->nlive) {
		if (settled1(&sh->regs[t->live[i].idx]))
			t->live[i] = t->live[--t->nlive];
		else
			i++;
	}
}

static uint32_t random_oneshot_flags(struct rng *rng)
{
	uint32_t f = KEVENT_REQ_ONESHOT;

	if (rng_chance(rng, 10))
		f |= KEVENT_REQ_WAKEUP_ALL;
	if (rng_chance(rng, 10))
		f |= KEVENT_REQ_LAST_CHECK;
	if (rng_chance(rng, 10))
		f |= KEVENT_REQ_ET;
	return f;
}

/* ADD num one-shot timers to fd (qid): short ones fire, long ones wait. */
static void timers_add(struct timer_thread *t, int fd, int qid,
		       unsigned int num, int long_ones)
{
	struct ukevent uk[64];
	unsigned int i, n = 0;
	uint32_t idx, sec, nsec;

	for (i = 0; i < num && t->nlive + n < MAX_LIVE; i++) {
		if (!reg_new(K_TIMER1, (uint8_t)qid, &idx))
			break;
		if (long_ones) {
			sec = 100;
			nsec = rng_below(&t->rng, 1000000000);
		} else {
			sec = 0;
			nsec = rng_below(&t->rng, 3000000);
		}
		uk[n] = reg_uk(idx, KEVENT_TIMER, timer_id(sec, nsec),
			       KEVENT_TIMER_FIRED, random_oneshot_flags(&t->rng));
		t->live[t->nlive + n].idx = idx;
		t->live[t->nlive + n].fd = fd;
		t->live[t->nlive + n].uk = uk[n];
		n++;
	}
	if (!n)
		return;
	add_regs(fd, uk, n, "ADD of one-shot timers", 0);
	t->nlive += n;
}

/* Up to max live registrations of queue fd, picked at random. */
static unsigned int live_pick(struct timer_thread *t, int fd, int long_only,
			      struct ukevent *uk, unsigned int max)
{
	unsigned int i, n = 0, start;

	if (!t->nlive)
		return 0;
	start = rng_below(&t->rng, t->nlive);
	for (i = 0; i < t->nlive && n < max; i++) {
		struct live *l = &t->live[(start + i) % t->nlive];

		if (l->fd != fd)
			continue;
		if (long_only && l->uk.id.raw[0] != 100)
			continue;
		uk[n++] = l->uk;
	}
	return n;
}

static void timers_ready(struct timer_thread *t, int fd, unsigned int max)
{
	struct ukevent uk[64];
	unsigned int n = live_pick(t, fd, 1, uk, max), i;
	int ret;

	if (!n)
		return;
	OP(OP_READY);
	ret = kevent_ctl(fd, KEVENT_CTL_READY, n, uk);
	if (ret < 0) {
		if (errno != EINVAL || n == 1)
			unexpected("kevent_ctl(READY)", ret, errno);
		return;
	}
	for (i = 0; i < (unsigned int)ret; i++)
		if (uk[i].ret_flags != (KEVENT_RET_BROKEN | KEVENT_RET_DONE) ||
		    (int)uk[i].ret_data[1] != -ENOENT)
			entry_unexpected("READY", &uk[i]);
}

static void timers_modify(struct timer_thread *t, int fd, unsigned int max)
{
	struct ukevent uk[64];
	unsigned int n = live_pick(t, fd, 0, uk, max), i;
	int ret;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		uk[i].req_flags = random_oneshot_flags(&t->rng);
	OP(OP_MODIFY);
	ret = kevent_ctl(fd, KEVENT_CTL_MODIFY, n, uk);
	if (ret < 0) {
		if (errno != EINVAL || n == 1)
			unexpected("kevent_ctl(MODIFY)", ret, errno);
		return;
	}
	if ((unsigned int)ret != n)
		unexpected("kevent_ctl(MODIFY) copied back fewer", ret, 0);
	for (i = 0; i < (unsigned int)ret; i++)
		if (uk[i].ret_flags != KEVENT_RET_DONE &&
		    (uk[i].ret_flags != (KEVENT_RET_BROKEN | KEVENT_RET_DONE) ||
		     (int)uk[i].ret_data[1] != -ENOENT))
			entry_unexpected("MODIFY", &uk[i]);
}

static void timers_remove(struct timer_thread *t, int fd, unsigned int max)
{
	struct ukevent uk[64];
	unsigned int n = live_pick(t, fd, 0, uk, max);

	if (n)
		remove_regs(fd, uk, n, "REMOVE of one-shot timers", 1);
}

static void periodic_add(struct timer_thread *t)
{
	struct periodic *p;
	struct ukevent uk;
	uint32_t idx, i = INC(nperiodic) - 1;

	if (i >= MAX_PERIODIC || !reg_new(K_PERIODIC, Q_A, &idx))
		return;
	p = &periodics[i];
	p->idx = idx;
	/*
	 * Not below the timer resolution: a shorter period counts one
	 * expiry per tick (hrtimer_forward() rounds the interval up), as
	 * timerfd does, and the guest may run on the jiffies clocksource.
	 */
	p->period_ns = timer_res_ns + rng_below(&t->rng, 3000000);
	sh->regs[idx].slot = i;
	uk = reg_uk(idx, KEVENT_TIMER, timer_id(0, p->period_ns),
		    KEVENT_TIMER_FIRED, 0);
	p->add_call = now_ns();
	if (add_one(qa, uk, "ADD of a periodic timer", 0) == 0)
		t->periodic[t->nperiodic++] = i;
	else
		sh->regs[idx].qdead = 1;
	p->add_ret = now_ns();
}

static void periodic_remove(struct timer_thread *t, unsigned int which)
{
	struct periodic *p = &periodics[t->periodic[which]];
	const struct reg *r = &sh->regs[p->idx];
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw_u64 = r->id;
	uk.type = KEVENT_TIMER;
	uk.event = KEVENT_TIMER_FIRED;
	uk.ptr = reg_ptr(p->idx);
	p->rm_call = now_ns();
	remove_regs(qa, &uk, 1, "REMOVE of a periodic timer", 0);
	p->rm_ret = now_ns();
	t->periodic[which] = t->periodic[--t->nperiodic];
}

static void *timer_main(void *arg)
{
	struct timer_thread *t = arg;
	unsigned int r, i;
	int fd, qid;

	while (!LOAD(sh->stop)) {
		live_prune(t);
		if (rng_chance(&t->rng, 60)) {
			fd = qa;
			qid = Q_A;
		} else {
			fd = qb;
			qid = Q_B;
		}
		r = rng_below(&t->rng, 100);
		if (r < 30) {
			timers_add(t, fd, qid, 1 + rng_below(&t->rng, 16),
				   rng_chance(&t->rng, 40));
		} else if (r < 45) {
			timers_ready(t, fd, 1 + rng_below(&t->rng, 8));
		} else if (r < 52) {
			OP(OP_KICK);
			if (kevent_ctl(fd, KEVENT_CTL_READY, 0, NULL))
				unexpected("kevent_ctl(READY, 0)", -1, errno);
		} else if (r < 67) {
			timers_modify(t, fd, 1 + rng_below(&t->rng, 8));
		} else if (r < 85) {
			timers_remove(t, fd, 1 + rng_below(&t->rng, 8));
		} else if (r < 92) {
			if (t->nperiodic < 2)
				periodic_add(t);
			else if (rng_chance(&t->rng, 20))
				periodic_remove(t, rng_below(&t->rng, 2));
		} else if (r < 95 && t->nlive + 32 <= MAX_LIVE) {
			/* More ready events at once than B's ring holds. */
			unsigned int before = t->nlive;
			struct ukevent uk[32];

			timers_add(t, qb, Q_B, 32, 1);
			for (i = before; i < t->nlive; i++)
				uk[i - before] = t->live[i].uk;
			if (t->nlive > before) {
				OP(OP_READY);
				if (kevent_ctl(qb, KEVENT_CTL_READY,
					       t->nlive - before, uk))
					unexpected("READY of a burst", -1, errno);
			}
		}
		if (rng_chance(&t->rng, 30))
			usleep(rng_below(&t->rng, 500));
	}
	/* Remove what is left; what was reported meanwhile is ENOENT. */
	live_prune(t);
	while (t->nlive) {
		struct ukevent uk[16];
		unsigned int n = 0;

		fd = t->live[0].fd;
		for (i = 0; i < t->nlive;) {
			if (t->live[i].fd == fd && n < 16) {
				uk[n++] = t->live[i].uk;
				t->live[i] = t->live[--t->nlive];
			} else {
				i++;
			}
		}
		remove_regs(fd, uk, n, "REMOVE at the end", 1);
	}
	while (t->nperiodic)
		periodic_remove(t, 0);
	return NULL;
}

/* ---------------------------------------------------------------- */
/* Signals: S holds NOMASK registrations, K sends to it.            */

#define SIG_RT_OFF	2
static pid_t sig_tid;
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t sig_reg[2];		/* SIGUSR1, SIGRTMIN+2 */
static uint32_t sig_sent[2 * 4096];	/* per registration, by S's order */
static uint32_t sig_nregs;
static uint32_t sig_regidx[2 * 4096];
static volatile sig_atomic_t sig_leaks;
static uint32_t sig_lost;

static void leak_handler(int sig)
{
	(void)sig;
	sig_leaks++;
}

static int sig_of(int which)
{
	return which ? SIGRTMIN + SIG_RT_OFF : SIGUSR1;
}

/* A new NOMASK registration for signal which; its number in sig_sent. */
static int sig_register(int which)
{
	struct ukevent uk;
	uint32_t idx, n;

	if (!reg_new(K_SIG, Q_A, &idx))
		return -1;
	n = sig_nregs;
	if (n >= sizeof(sig_sent) / sizeof(sig_sent[0]))
		return -1;
	sh->regs[idx].slot = n;
	uk = reg_uk(idx, KEVENT_SIGNAL,
		    (uint64_t)sig_of(which) | KEVENT_SIGNAL_NOMASK,
		    KEVENT_SIGNAL_DELIVERY, 0);
	if (add_one(qa, uk, "ADD of a NOMASK signal registration", 0)) {
		sh->regs[idx].qdead = 1;
		return -1;
	}
	sig_regidx[n] = idx;
	sig_nregs = n + 1;
	sig_reg[which] = n + 1;
	return 0;
}

/* Wait until every send to registration n was reported; 0 or -1. */
static int sig_settle(uint32_t n, long long limit_ns)
{
	const struct reg *r = &sh->regs[sig_regidx[n]];
	long long end = now_ns() + limit_ns;

	while (LOAD(r->count) != LOAD(sig_sent[n])) {
		if (now_ns() > end)
			return -1;
		usleep(200);
	}
	return 0;
}

static void sig_unregister(int which)
{
	uint32_t n = sig_reg[which] - 1;
	const struct reg *r = &sh->regs[sig_regidx[n]];
	struct ukevent uk;

	if (!sig_reg[which])
		return;
	if (sig_settle(n, 10000000000LL)) {
		if (sig_lost++ < 5)
			diag("signal %d: %u sends, %u reported after 10 s",
			     sig_of(which), LOAD(sig_sent[n]), LOAD(r->count));
	}
	memset(&uk, 0, sizeof(uk));
	uk.id.raw_u64 = r->id;
	uk.type = KEVENT_SIGNAL;
	uk.event = KEVENT_SIGNAL_DELIVERY;
	uk.ptr = reg_ptr(sig_regidx[n]);
	remove_regs(qa, &uk, 1, "REMOVE of a signal registration", 0);
	sig_reg[which] = 0;
}

static void *sig_owner_main(void *arg)
{
	struct rng rng;
	int which;

	(void)arg;
	rng_seed(&rng, seed, 31);
	pthread_mutex_lock(&sig_lock);
	sig_tid = gettid_();
	sig_register(0);
	sig_register(1);
	pthread_mutex_unlock(&sig_lock);
	while (!LOAD(sh->stop)) {
		msleep(50 + rng_below(&rng, 250));
		which = (int)rng_below(&rng, 2);
		pthread_mutex_lock(&sig_lock);
		sig_unregister(which);
		sig_register(which);
		pthread_mutex_unlock(&sig_lock);
	}
	pthread_mutex_lock(&sig_lock);
	sig_unregister(0);
	sig_unregister(1);
	sig_tid = 0;
	pthread_mutex_unlock(&sig_lock);
	return NULL;
}

static void *sig_sender_main(void *arg)
{
	struct rng rng;
	siginfo_t si;
	int which, how, ret;
	uint32_t n;

	(void)arg;
	rng_seed(&rng, seed, 32);
	while (!LOAD(sh->stop)) {
		which = (int)rng_below(&rng, 2);
		how = (int)rng_below(&rng, 3);
		pthread_mutex_lock(&sig_lock);
		if (!sig_tid || !sig_reg[which]) {
			pthread_mutex_unlock(&sig_lock);
			usleep(100);
			continue;
		}
		n = sig_reg[which] - 1;
		if (which) {
			memset(&si, 0, sizeof(si));
			si.si_signo = sig_of(which);
			si.si_code = SI_QUEUE;
			si.si_pid = getpid();
			si.si_uid = getuid();
			si.si_value.sival_int = (int)n;
			ret = (int)syscall(SYS_rt_tgsigqueueinfo, getpid(), sig_tid,
					   sig_of(which), &si);
		} else if (how == 0) {
			ret = kill(getpid(), SIGUSR1);
		} else {
			ret = (int)syscall(SYS_tgkill, getpid(), sig_tid, SIGUSR1);
		}
		if (ret)
			unexpected("sending a signal", ret, errno);
		else
			INC(sig_sent[n]);
		OP(OP_SIGNALS);
		pthread_mutex_unlock(&sig_lock);
		if (rng_chance(&rng, 50))
			usleep(rng_below(&rng, 300));
	}
	return NULL;
}

/* ---------------------------------------------------------------- */
/* POSIX timers with SIGEV_KEVENT.                                   */

struct ptimer {
	timer_t t;
	uint32_t idx;
	int live;
	uint32_t arms;		/* one-shot: arms; periodic: upper bound */
	long long period_ns, armed_at, life_end;
};

static uint32_t posix_oneshot_arms, posix_oneshot_lost;

static int ptimer_create(struct ptimer *p)
{
	struct sigevent sev;
	uint32_t idx;

	memset(p, 0, sizeof(*p));
	if (!reg_new(K_POSIX, Q_A, &idx))
		return -1;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_KEVENT;
	sev._sigev_un._tid = qa;
	sev.sigev_value.sival_ptr = (void *)(uintptr_t)(PTR_TAG | idx);
	sh->regs[idx].type = KEVENT_POSIX_TIMER;
	sh->regs[idx].event = KEVENT_MASK_ALL;
	if (timer_create(CLOCK_MONOTONIC, &sev, &p->t)) {
		unexpected("timer_create(SIGEV_KEVENT)", -1, errno);
		sh->regs[idx].qdead = 1;
		return -1;
	}
	{
		/* The registration's id is the timer id (glibc's timer_t is it). */
		struct kevent_id id;

		id.raw[0] = (uint32_t)(uintptr_t)p->t;
		id.raw[1] = 0;
		sh->regs[idx].id = id.raw_u64;
	}
	STORE(sh->regs[idx].added, 1);
	p->idx = idx;
	p->live = 1;
	OP(OP_POSIX_TIMERS);
	return 0;
}

static void ptimer_arm(struct ptimer *p, long long value_ns, long long period_ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = value_ns / 1000000000;
	its.it_value.tv_nsec = value_ns % 1000000000;
	its.it_interval.tv_sec = period_ns / 1000000000;
	its.it_interval.tv_nsec = period_ns % 1000000000;
	p->period_ns = period_ns;
	p->armed_at = now_ns();
	OP(OP_POSIX_ARMS);
	if (timer_settime(p->t, 0, &its, NULL))
		unexpected("timer_settime", -1, errno);
}

/* Delete; the expiries it can have had are bounded by its arming. */
static void ptimer_delete(struct ptimer *p)
{
	long long end;

	if (!p->live)
		return;
	if (timer_delete(p->t))
		unexpected("timer_delete", -1, errno);
	end = now_ns();
	if (p->period_ns)
		p->arms = (uint32_t)((end - p->armed_at) / p->period_ns + 2);
	sh->regs[p->idx].slot = p->arms;
	sh->regs[p->idx].gen = 1;	/* deleted: the bound in slot holds */
	p->live = 0;
}

static void *posix_main(void *arg)
{
	struct ptimer one, per, shortp;
	struct rng rng;
	long long reported_wait = 0;
	uint32_t idx_one;
	int have_one, have_per = 0;

	(void)arg;
	rng_seed(&rng, seed, 41);
	have_one = !ptimer_create(&one);
	idx_one = one.idx;
	while (!LOAD(sh->stop)) {
		/* One-shot: re-armed once its expiry was reported. */
		if (have_one && LOAD(sh->regs[idx_one].count) == one.arms) {
			ptimer_arm(&one, 200000 + rng_below(&rng, 2000000), 0);
			one.arms++;
			posix_oneshot_arms++;
			reported_wait = now_ns();
		} else if (have_one && now_ns() - reported_wait > 10000000000LL) {
			if (posix_oneshot_lost++ < 3)
				diag("POSIX one-shot timer: arm %u not reported in 10 s (%u reported)",
				     one.arms, LOAD(sh->regs[idx_one].count));
			have_one = 0;
		}
		/* Periodic: lives 100 ms to 1 s, then deleted. */
		if (!have_per) {
			have_per = !ptimer_create(&per);
			if (have_per) {
				ptimer_arm(&per, 1000000, 1000000 + rng_below(&rng, 2000000));
				per.life_end = now_ns() + 100000000 +
					       rng_below(&rng, 900000000);
			}
		} else if (now_ns() > per.life_end) {
			ptimer_delete(&per);
			have_per = 0;
		}
		/* Short-lived: deleted while it fires, or about then. */
		if (rng_chance(&rng, 30) && !ptimer_create(&shortp)) {
			if (rng_chance(&rng, 50)) {
				ptimer_arm(&shortp, 1 + rng_below(&rng, 300000), 0);
				shortp.arms = 1;
			} else {
				ptimer_arm(&shortp, 1 + rng_below(&rng, 300000),
					   100000 + rng_below(&rng, 200000));
			}
			usleep(rng_below(&rng, 400));
			ptimer_delete(&shortp);
		}
		usleep(100 + rng_below(&rng, 900));
	}
	if (have_one) {
		long long end = now_ns() + 10000000000LL;

		while (LOAD(sh->regs[idx_one].count) != one.arms && now_ns() < end)
			usleep(500);
		if (LOAD(sh->regs[idx_one].count) != one.arms &&
		    posix_oneshot_lost++ < 3)
			diag("POSIX one-shot timer: %u arms, %u expiries reported",
			     one.arms, LOAD(sh->regs[idx_one].count));
		ptimer_delete(&one);
	} else if (one.live) {
		ptimer_delete(&one);
	}
	if (have_per)
		ptimer_delete(&per);
	return NULL;
}

/* ---------------------------------------------------------------- */
/* Churn: objects registered, closed, their numbers reused.         */

struct object {
	int fds[2], nfds;
	int kind;
	uint32_t regs[8];
	struct ukevent uks[8];
	int nregs;
};

enum { OBJ_PIPE, OBJ_USTREAM, OBJ_UDGRAM, OBJ_EVENTFD, OBJ_TIMERFD,
       OBJ_QUEUE, OBJ_EPOLL, OBJ_NKINDS };

static int obj_make(struct rng *rng, struct object *o)
{
	int p[2];

	memset(o, 0, sizeof(*o));
	o->kind = (int)rng_below(rng, OBJ_NKINDS);
	switch (o->kind) {
	case OBJ_PIPE:
		if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
			return -1;
		break;
	case OBJ_USTREAM:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			       0, p))
			return -1;
		break;
	case OBJ_UDGRAM:
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			       0, p))
			return -1;
		break;
	case OBJ_EVENTFD:
		p[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		p[1] = -1;
		break;
	case OBJ_TIMERFD:
		p[0] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		p[1] = -1;
		if (p[0] >= 0) {
			struct itimerspec its = { { 0, 0 }, { 0, 200000 } };

			if (rng_chance(rng, 50))
				timerfd_settime(p[0], 0, &its, NULL);
		}
		break;
	case OBJ_QUEUE:
		p[0] = rng_chance(rng, 50) ?
		       kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC) :
		       open("/dev/kevent", O_RDWR | O_CLOEXEC);
		p[1] = -1;
		OP(OP_INIT);
		if (p[0] >= 0 && rng_chance(rng, 50)) {
			struct ukevent uk = timer_ukevent(0, 100000,
							  KEVENT_REQ_ONESHOT, 1);

			/* A queue with an event ready: POLLIN. */
			kevent_ctl(p[0], KEVENT_CTL_ADD, 1, &uk);
		}
		break;
	default:
		p[0] = epoll_create1(EPOLL_CLOEXEC);
		p[1] = -1;
		break;
	}
	if (p[0] < 0)
		return -1;
	o->fds[0] = p[0];
	o->fds[1] = p[1];
	o->nfds = p[1] < 0 ? 1 : 2;
	OP(OP_OBJECTS);
	return 0;
}

/* Register one descriptor of o: a registration of a fitting type. */
static void obj_register(struct rng *rng, struct object *o, int which)
{
	static const uint32_t flag_sets[] = {
		0, KEVENT_REQ_ONESHOT, KEVENT_REQ_ET, KEVENT_REQ_ALWAYS_QUEUE,
		KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE,
		KEVENT_REQ_ET | KEVENT_REQ_ALWAYS_QUEUE, KEVENT_REQ_LAST_CHECK,
		KEVENT_REQ_WAKEUP_ALL,
	};
	uint32_t idx, type, event;
	int fd = o->fds[which];

	if (o->nregs >= 8 || !reg_new(K_CHURN, Q_A, &idx))
		return;
	type = KEVENT_POLL;
	event = rng_chance(rng, 50) ? POLLIN : POLLOUT | POLLIN;
	if (rng_chance(rng, 60)) {
		if (o->kind == OBJ_PIPE) {
			type = KEVENT_PIPE;
			event = which ? KEVENT_SOCKET_SEND : KEVENT_SOCKET_RECV;
		} else if (o->kind == OBJ_USTREAM || o->kind == OBJ_UDGRAM) {
			type = KEVENT_SOCKET;
			event = rng_chance(rng, 50) ? KEVENT_SOCKET_RECV :
				KEVENT_SOCKET_SEND | KEVENT_SOCKET_RECV;
		}
	}
	o->uks[o->nregs] = reg_uk(idx, type, fd_id(fd), event,
				  rng_pick(rng, flag_sets));
	o->regs[o->nregs] = idx;
	add_one(qa, o->uks[o->nregs], "ADD of a churn registration", 0);
	o->nregs++;
}

static void obj_poke(struct rng *rng, struct object *o)
{
	uint64_t one = 1;
	char c = 'x', buf[64];
	ssize_t n = 0;

	switch (o->kind) {
	case OBJ_PIPE:
	case OBJ_USTREAM:
	case OBJ_UDGRAM:
		if (rng_chance(rng, 60))
			n = send(o->fds[1], &c, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			n = read(o->fds[0], buf, sizeof(buf));
		if (o->kind == OBJ_PIPE && n < 0 && errno == ENOTSOCK)
			n = write(o->fds[1], &c, 1);
		break;
	case OBJ_EVENTFD:
		if (rng_chance(rng, 60))
			n = write(o->fds[0], &one, sizeof(one));
		else
			n = read(o->fds[0], &one, sizeof(one));
		break;
	default:
		break;
	}
	(void)n;
}

static void obj_close(struct rng *rng, struct object *o)
{
	int i, first = (int)rng_below(rng, (uint32_t)o->nfds);

	for (i = 0; i < o->nfds; i++) {
		OP(OP_CLOSES);
		close(o->fds[(first + i) % o->nfds]);
	}
}

static void *churn_main(void *arg)
{
	struct object objs[8];
	int nobj = 0, i, j, fd, newfd;
	struct rng rng;
	struct ukevent uk;

	(void)arg;
	rng_seed(&rng, seed, 51);
	while (!LOAD(sh->stop)) {
		if (nobj < 8 && !obj_make(&rng, &objs[nobj])) {
			struct object *o = &objs[nobj++];

			for (i = 0; i < 1 + (int)rng_below(&rng, 3); i++)
				obj_register(&rng, o, (int)rng_below(&rng, (uint32_t)o->nfds));
		}
		if (!nobj)
			continue;
		i = (int)rng_below(&rng, (uint32_t)nobj);
		switch (rng_below(&rng, 6)) {
		case 0:
		case 1:
			obj_poke(&rng, &objs[i]);
			break;
		case 2:
			/* REMOVE one registration (gone already: ENOENT). */
			if (objs[i].nregs) {
				j = (int)rng_below(&rng, (uint32_t)objs[i].nregs);
				uk = objs[i].uks[j];
				remove_regs(qa, &uk, 1, "REMOVE of a churn registration", 1);
			}
			break;
		case 3:
			/* dup2() a new file over one of its numbers, register it. */
			fd = objs[i].fds[rng_below(&rng, (uint32_t)objs[i].nfds)];
			newfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			if (newfd < 0)
				break;
			OP(OP_DUP2);
			if (dup3(newfd, fd, O_CLOEXEC) < 0)
				unexpected("dup3", -1, errno);
			close(newfd);
			if (objs[i].nfds == 2 && objs[i].fds[1] == fd) {
				/* The object lost that end; the eventfd takes it. */
			}
			if (objs[i].nregs < 8) {
				uint32_t idx;

				if (reg_new(K_CHURN, Q_A, &idx)) {
					objs[i].uks[objs[i].nregs] =
						reg_uk(idx, KEVENT_POLL, fd_id(fd),
						       POLLIN, rng_chance(&rng, 50) ?
						       KEVENT_REQ_ET : 0);
					objs[i].regs[objs[i].nregs] = idx;
					add_one(qa, objs[i].uks[objs[i].nregs],
						"ADD on a reused number", 0);
					objs[i].nregs++;
				}
			}
			break;
		default:
			/* Close it: each registration is reported BROKEN once. */
			obj_close(&rng, &objs[i]);
			objs[i] = objs[--nobj];
			break;
		}
		if (rng_chance(&rng, 20))
			usleep(rng_below(&rng, 300));
	}
	for (i = 0; i < nobj; i++)
		obj_close(&rng, &objs[i]);
	return NULL;
}

/* ---------------------------------------------------------------- */
/* Racers: object death against REMOVE, close, harvest, MODIFY, ADD. */

enum { RACE_REMOVE, RACE_CLOSE_QUEUE, RACE_HARVEST, RACE_MODIFY,
       RACE_PIPE_ADD, RACE_UDP_ADD, RACE_NMODES };

static const char *const race_name[RACE_NMODES] = {
	"remove", "close-queue", "harvest", "modify", "pipe-add", "udp-add",
};

struct race {
	pthread_barrier_t b1, b2;
	int mode, q, qid, done;
	int p[2], s[2], u, e;
	struct ukevent uks[40];
	int nuks;
	uint32_t rounds[RACE_NMODES];
	struct sockaddr_in closed_port;
};

static struct race race;

/* A UDP port with nothing bound to it: sends there draw ICMP errors. */
static void race_closed_port(void)
{
	socklen_t len = sizeof(race.closed_port);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&race.closed_port, 0, sizeof(race.closed_port));
	race.closed_port.sin_family = AF_INET;
	race.closed_port.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&race.closed_port, len) ||
	    getsockname(fd, (struct sockaddr *)&race.closed_port, &len))
		bail_out("race: UDP port: %s", strerror(errno));
	close(fd);
}

static void race_reg(int fd, uint32_t type, uint32_t event, uint32_t flags)
{
	uint32_t idx;

	if (race.nuks >= 40 || !reg_new(K_RACE, (uint8_t)race.qid, &idx))
		return;
	race.uks[race.nuks++] = reg_uk(idx, type, fd_id(fd), event, flags);
}

static void race_drain(void)
{
	struct ukevent buf[64];
	int n;

	do {
		OP(OP_GET_EVENTS);
		n = kevent_get_events(race.q, 0, 64, TSP(0, 0), buf, 0);
		if (n < 0)
			unexpected("kevent_get_events on a racer queue", n, errno);
		else
			account(race.qid, buf, n);
	} while (n > 0);
}

/* Every registration of the round must have ended once, by now. */
static void race_verify(void)
{
	int i;

	for (i = 0; i < race.nuks; i++) {
		uint32_t idx;
		struct reg *r = reg_of(race.uks[i].ptr, &idx);
		uint32_t term = LOAD(r->broken) + LOAD(r->removed) +
				LOAD(r->add_ready) + LOAD(r->add_fail) +
				(r->oneshot ? LOAD(r->reports) : 0);

		if (term != 1 && INC(sh->race_fail) <= 5)
			diag("race %s: registration %u (type %u) ended %u times: broken %u removed %u reported %u ready at ADD %u failed %u",
			     race_name[race.mode], idx, r->type, term, r->broken,
			     r->removed, r->reports, r->add_ready, r->add_fail);
	}
}

static void *racer2_main(void *arg)
{
	struct ukevent uk[40], buf[64];
	struct rng rng;
	int i, n;
	char c = 'x';

	(void)arg;
	rng_seed(&rng, seed, 62);
	for (;;) {
		pthread_barrier_wait(&race.b1);
		if (race.done)
			break;
		switch (race.mode) {
		case RACE_REMOVE:
			for (i = race.nuks - 1; i >= 0; i--) {
				uk[0] = race.uks[i];
				remove_regs(race.q, uk, 1, "racing REMOVE", 1);
			}
			break;
		case RACE_CLOSE_QUEUE:
			usleep(rng_below(&rng, 50));
			OP(OP_CLOSE_QUEUE);
			close(race.q);
			break;
		case RACE_HARVEST:
			for (i = 0; i < 8; i++) {
				OP(OP_GET_EVENTS);
				n = kevent_get_events(race.q, 0, 64, TSP(0, 0), buf, 0);
				if (n < 0)
					unexpected("racing kevent_get_events", n, errno);
				else
					account(race.qid, buf, n);
			}
			break;
		case RACE_MODIFY:
			memcpy(uk, race.uks, sizeof(uk[0]) * (size_t)race.nuks);
			for (i = 0; i < race.nuks; i++)
				uk[i].req_flags ^= KEVENT_REQ_ET;
			OP(OP_MODIFY);
			n = kevent_ctl(race.q, KEVENT_CTL_MODIFY,
				       (unsigned int)race.nuks, uk);
			if (n < 0 && errno != EINVAL)
				unexpected("racing MODIFY", n, errno);
			break;
		case RACE_PIPE_ADD:
			/* pipe_set_size() notifies SEND while the ADDs run. */
			for (i = 0; i < 200; i++)
				fcntl(race.p[1], F_SETPIPE_SZ, i & 1 ? 4096 : 8192);
			break;
		case RACE_UDP_ADD:
			/* Each send draws an ICMP error: sk_err, sk_error_report. */
			for (i = 0; i < 100; i++)
				send(race.u, &c, 1, MSG_DONTWAIT);
			break;
		}
		pthread_barrier_wait(&race.b2);
	}
	return NULL;
}

static void race_round(struct rng *rng)
{
	int i, mode = (int)rng_below(rng, RACE_NMODES), ring = rng_chance(rng, 30);
	struct kevent_ring *r = NULL;
	size_t mapped = 0;
	char c = 'x';

	race.mode = mode;
	race.nuks = 0;
	race.qid = ring ? Q_X1 : Q_X2;
	if (ring)
		r = ring_alloc(4, &mapped);
	race.q = kevent_init(r, r ? 4 : 0, KEVENT_INIT_CLOEXEC);
	OP(OP_INIT);
	if (race.q < 0) {
		unexpected("kevent_init of a racer queue", race.q, errno);
		if (r)
			munmap(r, mapped);
		return;
	}
	/* One far-off anchor: REMOVE of one entry is never "too many". */
	{
		struct ukevent a = timer_ukevent(100000, 0, 0, 0xa9c4);

		kevent_ctl(race.q, KEVENT_CTL_ADD, 1, &a);
	}
	race.p[0] = race.p[1] = race.s[0] = race.s[1] = race.u = race.e = -1;
	switch (mode) {
	case RACE_PIPE_ADD:
		if (pipe2(race.p, O_NONBLOCK | O_CLOEXEC))
			bail_out("pipe2");
		close(race.p[0]);
		race.p[0] = -1;
		for (i = 0; i < 16; i++)
			race_reg(race.p[1], KEVENT_PIPE, KEVENT_SOCKET_SEND, 0);
		break;
	case RACE_UDP_ADD:
		race.u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (race.u < 0 || connect(race.u, (struct sockaddr *)&race.closed_port,
					  sizeof(race.closed_port)))
			bail_out("race: UDP connect: %s", strerror(errno));
		for (i = 0; i < 16; i++)
			race_reg(race.u, KEVENT_SOCKET, KEVENT_SOCKET_RECV, 0);
		break;
	default:
		if (pipe2(race.p, O_NONBLOCK | O_CLOEXEC) ||
		    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			       0, race.s))
			bail_out("race: pipe2/socketpair: %s", strerror(errno));
		race.e = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		for (i = 0; i < 16; i++)
			race_reg(race.p[0], KEVENT_PIPE, KEVENT_SOCKET_RECV,
				 rng_chance(rng, 30) ? KEVENT_REQ_ONESHOT : 0);
		for (i = 0; i < 8; i++)
			race_reg(race.s[0], KEVENT_SOCKET, KEVENT_SOCKET_RECV,
				 rng_chance(rng, 30) ? KEVENT_REQ_ET : 0);
		for (i = 0; i < 4; i++)
			race_reg(race.p[0], KEVENT_POLL, POLLIN, 0);
		for (i = 0; i < 4; i++)
			race_reg(race.e, KEVENT_POLL, POLLIN, 0);
		add_regs(race.q, race.uks, (unsigned int)race.nuks,
			 "ADD of racer registrations", 0);
		if (rng_chance(rng, 50)) {
			if (write(race.p[1], &c, 1) < 0 ||
			    send(race.s[1], &c, 1, MSG_NOSIGNAL) < 0)
				unexpected("racer write", -1, errno);
		}
		break;
	}
	pthread_barrier_wait(&race.b1);
	switch (mode) {
	case RACE_PIPE_ADD:
	case RACE_UDP_ADD:
		/* Each ADD fails with the object's error, or is kept. */
		for (i = 0; i < race.nuks; i++) {
			add_regs(race.q, &race.uks[i], 1, "racing ADD", 1);
			race_drain();
		}
		break;
	default:
		/* The last references: each object dies here. */
		OP(OP_CLOSES);
		close(race.p[0]);
		close(race.p[1]);
		close(race.s[0]);
		close(race.s[1]);
		close(race.e);
		break;
	}
	pthread_barrier_wait(&race.b2);
	OP(OP_RACES);
	race.rounds[mode]++;
	if (mode == RACE_CLOSE_QUEUE) {
		for (i = 0; i < race.nuks; i++)
			STORE(reg_of(race.uks[i].ptr, NULL)->qdead, 1);
	} else {
		if (mode == RACE_PIPE_ADD) {
			close(race.p[1]);
		} else if (mode == RACE_UDP_ADD) {
			close(race.u);
		}
		race_drain();
		race_verify();
		for (i = 0; i < race.nuks; i++) {
			struct reg *rg = reg_of(race.uks[i].ptr, NULL);

			/* A failed ADD leaves nothing to report later. */
			if (rg->add_fail && (rg->reports || rg->broken) &&
			    INC(sh->race_addfail_bad) <= 5)
				diag("race %s: registration failed at ADD (%d) was reported later",
				     race_name[mode], rg->err);
		}
		OP(OP_CLOSE_QUEUE);
		close(race.q);
	}
	if (r)
		munmap(r, mapped);
}

static void *racer1_main(void *arg)
{
	struct rng rng;

	(void)arg;
	rng_seed(&rng, seed, 61);
	while (!LOAD(sh->stop))
		race_round(&rng);
	race.done = 1;
	pthread_barrier_wait(&race.b1);
	return NULL;
}

/* ---------------------------------------------------------------- */
/* The fork-and-exec process.                                       */

static volatile sig_atomic_t fw_usr1, fw_usr2;

static void fw_handler(int sig)
{
	if (sig == SIGUSR1)
		fw_usr1++;
	else
		fw_usr2++;
}

struct fw_remove {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending, done;
	struct ukevent uk;
	unsigned int delay_us;
};

static struct fw_remove fwr = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0,
	{ .type = 0 }, 0,
};

static void *fw_remover_main(void *arg)
{
	struct ukevent uk;
	unsigned int delay;

	(void)arg;
	pthread_mutex_lock(&fwr.lock);
	for (;;) {
		while (!fwr.pending && !fwr.done)
			pthread_cond_wait(&fwr.cond, &fwr.lock);
		if (fwr.done)
			break;
		uk = fwr.uk;
		delay = fwr.delay_us;
		pthread_mutex_unlock(&fwr.lock);
		if (delay)
			usleep(delay);
		remove_regs(qf, &uk, 1, "REMOVE racing POLLFREE", 1);
		pthread_mutex_lock(&fwr.lock);
		fwr.pending = 0;
		pthread_cond_broadcast(&fwr.cond);
	}
	pthread_mutex_unlock(&fwr.lock);
	return NULL;
}

static void fw_child_harvest(unsigned int ms)
{
	struct ukevent buf[16];
	long long end = now_ns() + (long long)ms * 1000000;
	int n;

	while (now_ns() < end) {
		n = kevent_get_events(qf, 0, 16, TSP(0, 2000000), buf, 0);
		if (n < 0) {
			unexpected("kevent_get_events in a child (queue F)", n, errno);
			return;
		}
		account(Q_F, buf, n);
	}
}

/* A child adds a KEVENT_POLL of the signalfd and exits: POLLFREE. */
static void fw_pollfree(struct rng *rng, int sfd)
{
	struct ukevent uk, more[3];
	int sync[2], status, i, n = 0;
	uint32_t idx, idx2;
	pid_t pid;
	char c;

	if (!reg_new(K_POLLFREE, Q_F, &idx))
		return;
	uk = reg_uk(idx, KEVENT_POLL, fd_id(sfd), POLLIN, 0);
	/* And what else the child leaves: a signal registration, timers. */
	if (rng_chance(rng, 50) && reg_new(K_CHILDSIG, Q_F, &idx2))
		more[n++] = reg_uk(idx2, KEVENT_SIGNAL, SIGUSR2,
				   KEVENT_SIGNAL_DELIVERY, 0);
	for (i = 0; i < 2 && rng_chance(rng, 50); i++)
		if (reg_new(K_CHILD, Q_F, &idx2))
			more[n++] = reg_uk(idx2, KEVENT_TIMER,
					   timer_id(0, rng_below(rng, 2000000)),
					   KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT);
	if (pipe2(sync, O_CLOEXEC))
		return;
	OP(OP_FORKS);
	OP(OP_POLLFREE);
	pid = fork();
	if (pid < 0) {
		unexpected("fork", pid, errno);
		close(sync[0]);
		close(sync[1]);
		return;
	}
	if (!pid) {
		add_one(qf, uk, "ADD of a signalfd in a child", 0);
		if (n)
			add_regs(qf, more, (unsigned int)n, "ADD in a child", 0);
		if (rng_chance(rng, 30))
			fw_child_harvest(5);
		if (write(sync[1], "x", 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(sync[1]);
	if (read(sync[0], &c, 1) != 1)
		INC(sh->fork_fail);
	close(sync[0]);
	if (rng_chance(rng, 60)) {
		pthread_mutex_lock(&fwr.lock);
		fwr.uk = uk;
		fwr.delay_us = rng_below(rng, 300);
		fwr.pending = 1;
		pthread_cond_broadcast(&fwr.cond);
		pthread_mutex_unlock(&fwr.lock);
	}
	/* Reaping the child frees its sighand: wake_up_pollfree(). */
	status = wait_child(pid, 10000);
	if (status != 0 && INC(sh->fork_fail) <= 3)
		diag("POLLFREE child: status %#x", status);
	pthread_mutex_lock(&fwr.lock);
	while (fwr.pending)
		pthread_cond_wait(&fwr.cond, &fwr.lock);
	pthread_mutex_unlock(&fwr.lock);
}

/* A child registers SIGUSR2 with NOMASK, then execs this program. */
static void fw_exec(struct rng *rng)
{
	char *argv[12], qfs[16], qbs[16], ptrs[6][24];
	struct ukevent uk;
	uint32_t idx, t[4];
	int i, status;
	pid_t pid;

	if (!reg_new(K_EXECSIG, Q_F, &idx))
		return;
	uk = reg_uk(idx, KEVENT_SIGNAL, SIGUSR2 | KEVENT_SIGNAL_NOMASK,
		    KEVENT_SIGNAL_DELIVERY, 0);
	for (i = 0; i < 4; i++) {
		if (!reg_new(K_CHILD, Q_F, &t[i]))
			return;
		/* The program after exec adds these: 1 ms one-shot timers. */
		reg_uk(t[i], KEVENT_TIMER, timer_id(0, 1000000 + (uint32_t)i),
		       KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT);
		snprintf(ptrs[i], sizeof(ptrs[i]), "%llx",
			 (unsigned long long)reg_ptr(t[i]));
	}
	snprintf(qfs, sizeof(qfs), "%d", qf);
	snprintf(qbs, sizeof(qbs), "%d", qb);
	argv[0] = (char *)"stress";
	argv[1] = (char *)"--exec-child";
	argv[2] = qfs;
	argv[3] = qbs;
	for (i = 0; i < 4; i++)
		argv[4 + i] = ptrs[i];
	argv[8] = NULL;
	OP(OP_FORKS);
	OP(OP_EXECS);
	pid = fork();
	if (pid < 0) {
		unexpected("fork", pid, errno);
		return;
	}
	if (!pid) {
		if (add_one(qf, uk, "ADD of SIGUSR2 NOMASK before exec", 0))
			_exit(5);
		execv(self_exe, argv);
		_exit(6);
	}
	status = wait_child(pid, 10000);
	if (status == 0) {
		for (i = 0; i < 4; i++)
			STORE(sh->regs[t[i]].added, 1);
	} else if (INC(sh->exec_fail) <= 3) {
		diag("exec child: status %#x (3: its SIGUSR2 was taken by the registration made before exec; 7: kevent_wait on the ring queue did not fail with EPERM)",
		     status);
	}
	(void)rng;
}

/* Queue B has a ring in the main process: from here, EPERM. */
static struct ukevent *fw_noaccess;

static void fw_other_mm(struct rng *rng, int in_child)
{
	struct ukevent uk;
	uint32_t idx;
	int n;

	OP(OP_OTHER_MM);
	/*
	 * Into a buffer that faults: a kernel that lets this process harvest
	 * then fails with EFAULT instead of taking an event away from the
	 * main process's accounting; EPERM comes first.
	 */
	n = kevent_get_events(qb, 0, 1, TSP(0, 0), fw_noaccess, 0);
	if (n >= 0) {
		if (INC(sh->other_mm_bad) <= 3)
			diag("kevent_get_events on another process's ring queue returned %d, not EPERM",
			     n);
	} else if (errno != EPERM && INC(sh->other_mm_bad) <= 3) {
		diag("kevent_get_events on another process's ring queue: %s, not EPERM",
		     strerror(errno));
	}
	n = kevent_wait(qb, 0, 0, TSP(0, 0), 0);
	if (!(n == -1 && errno == EPERM) && INC(sh->other_mm_bad) <= 3)
		diag("kevent_wait on another process's ring queue returned %d (%s), not EPERM",
		     n, n < 0 ? strerror(errno) : "");
	/* A stale over: a kernel that does not check changes nothing either. */
	n = kevent_commit(qb, 0, 0x7fffffff);
	if (!(n == -1 && errno == EPERM) && INC(sh->other_mm_bad) <= 3)
		diag("kevent_commit on another process's ring queue returned %d (%s), not EPERM",
		     n, n < 0 ? strerror(errno) : "");
	/* kevent_ctl() works from anywhere. */
	if (kevent_ctl(qb, KEVENT_CTL_READY, 0, NULL))
		unexpected("READY(0) on another process's ring queue", -1, errno);
	if (reg_new(in_child ? K_CHILD : K_TIMER1, Q_B, &idx)) {
		uk = reg_uk(idx, KEVENT_TIMER, timer_id(0, rng_below(rng, 1000000)),
			    KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT);
		add_one(qb, uk, "ADD to another process's ring queue", 0);
	}
}

static void fw_main(void)
{
	struct sigaction sa;
	struct ukevent own;
	struct rng rng;
	pthread_t remover;
	uint32_t idx, i, stuck;
	long long end;
	int sfd, status, fails;
	sigset_t set;
	pid_t pid;

	rng_seed(&rng, seed, 91);
	fw_noaccess = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if (fw_noaccess == MAP_FAILED)
		_exit(1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fw_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		diag("fw: signalfd: %s", strerror(errno));
		_exit(1);
	}
	/* A live registration of this process's thread, for the forks. */
	if (!reg_new(K_FWSIG, Q_F, &idx))
		_exit(1);
	own = reg_uk(idx, KEVENT_SIGNAL, SIGUSR1 | KEVENT_SIGNAL_NOMASK,
		     KEVENT_SIGNAL_DELIVERY, 0);
	if (add_one(qf, own, "ADD of the fork process's SIGUSR1", 0))
		_exit(1);
	pthread_create(&remover, NULL, fw_remover_main, NULL);
	while (!LOAD(sh->stop)) {
		switch (rng_below(&rng, 10)) {
		case 0:
		case 1:
		case 2:
		case 3:
			fw_pollfree(&rng, sfd);
			break;
		case 4:
			fw_exec(&rng);
			break;
		case 5:
			fw_other_mm(&rng, 0);
			break;
		case 6:
			/* A child of ours is another address space too. */
			OP(OP_FORKS);
			pid = fork();
			if (!pid) {
				fw_other_mm(&rng, 1);
				_exit(0);
			}
			if (pid > 0 && wait_child(pid, 10000))
				INC(sh->fork_fail);
			break;
		case 7:
		case 8:
			/* Signal registrations are not inherited by a fork. */
			OP(OP_FORKS);
			pid = fork();
			if (!pid) {
				raise(SIGUSR1);
				_exit(fw_usr1 == 1 ? 0 : 8);
			}
			status = pid > 0 ? wait_child(pid, 10000) : -1;
			if (status && INC(sh->fork_fail) <= 3)
				diag("fork child: status %#x (8: its SIGUSR1 was taken by the parent's registration)",
				     status);
			break;
		default:
			/* A child harvests queue F with the main process. */
			OP(OP_FORKS);
			pid = fork();
			if (!pid) {
				fw_child_harvest(20);
				_exit(0);
			}
			if (pid > 0 && wait_child(pid, 10000))
				INC(sh->fork_fail);
			break;
		}
		usleep(rng_below(&rng, 2000));
	}
	pthread_mutex_lock(&fwr.lock);
	fwr.done = 1;
	pthread_cond_broadcast(&fwr.cond);
	pthread_mutex_unlock(&fwr.lock);
	pthread_join(remover, NULL);
	/*
	 * Every POLLFREE registration must have been reported BROKEN (or
	 * removed) while the signalfd is still open: not at its close.
	 */
	end = now_ns() + 10000000000LL;
	do {
		stuck = 0;
		for (i = 1; i < LOAD(sh->next_reg) && i < MAX_REGS; i++) {
			const struct reg *r = &sh->regs[i];

			if (r->kind == K_POLLFREE && LOAD(r->added) &&
			    !LOAD(r->broken) && !LOAD(r->removed))
				stuck++;
		}
		if (stuck)
			usleep(5000);
	} while (stuck && now_ns() < end);
	STORE(sh->pollfree_stuck, stuck);
	close(sfd);
	fails = remove_regs(qf, &own, 1, "REMOVE of the fork process's SIGUSR1", 0) != 1;
	if (fw_usr1)
		fails = 1;	/* nobody sends this process SIGUSR1 */
	_exit(fails);
}

/* After exec: the program that fw_exec() ran. */
static int exec_child_main(int argc, char **argv)
{
	struct sigaction sa;
	struct ukevent uk;
	int q, qring, i;

	if (argc < 8)
		return 9;
	q = atoi(argv[2]);
	qring = atoi(argv[3]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fw_handler;
	sigaction(SIGUSR2, &sa, NULL);
	/* The registration made before exec must not take this signal. */
	raise(SIGUSR2);
	if (fw_usr2 != 1)
		return 3;
	for (i = 0; i < 4; i++) {
		uk = timer_ukevent(0, 1000000 + (uint32_t)i, KEVENT_REQ_ONESHOT,
				   strtoull(argv[4 + i], NULL, 16));
		if (kevent_ctl(q, KEVENT_CTL_ADD, 1, &uk) != 0)
			return 4;
	}
	/* The same process, a new address space: the ring is not ours. */
	if (!(kevent_wait(qring, 0, 0, TSP(0, 0), 0) == -1 && errno == EPERM))
		return 7;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Verdicts.                                                        */

enum { V_SKIP, V_OPEN, V_OK, V_BAD };

static int verdict(uint32_t i, char *why, size_t len)
{
	const struct reg *r = &sh->regs[i];
	uint32_t term;

	why[0] = '\0';
	if (r->qdead)
		return V_SKIP;
	switch (r->kind) {
	case K_NONE:
	case K_ANCHOR:
		return V_SKIP;
	case K_PERIODIC:
		if (!r->added)
			return V_SKIP;
		if (!r->removed)
			return V_OPEN;
		snprintf(why, len, "removed %u broken %u", r->removed, r->broken);
		return r->removed == 1 && !r->broken && !r->bad ? V_OK : V_BAD;
	case K_SIG:
		if (!r->added)
			return V_SKIP;
		if (!r->removed)
			return V_OPEN;
		snprintf(why, len, "removed %u broken %u, %u sends counted of %u",
			 r->removed, r->broken, r->count, sig_sent[r->slot]);
		return r->removed == 1 && !r->broken && !r->bad &&
		       r->count == sig_sent[r->slot] ? V_OK : V_BAD;
	case K_POSIX:
		if (!r->added)
			return V_SKIP;
		if (!r->gen || !r->broken)
			return V_OPEN;
		snprintf(why, len, "broken %u removed %u, %u expiries reported, at most %u",
			 r->broken, r->removed, r->count, r->slot);
		return r->broken == 1 && !r->removed && !r->bad &&
		       r->count <= r->slot ? V_OK : V_BAD;
	case K_POLLFREE:
		if (!r->added)
			return V_SKIP;
		term = r->broken + r->removed;
		if (!term)
			return V_OPEN;
		snprintf(why, len, "broken %u (%d) removed %u", r->broken, r->err,
			 r->removed);
		return term == 1 && (!r->broken || r->err == -ESRCH) ? V_OK : V_BAD;
	case K_CHILDSIG:
	case K_EXECSIG:
		if (!r->added)
			return V_SKIP;
		if (!r->broken)
			return V_OPEN;
		snprintf(why, len, "broken %u (%d) removed %u reported %u",
			 r->broken, r->err, r->removed, r->reports);
		return r->broken == 1 && r->err == -ESRCH && !r->removed &&
		       !r->reports ? V_OK : V_BAD;
	case K_FWSIG:
		if (!r->removed)
			return V_OPEN;
		snprintf(why, len, "removed %u reported %u broken %u", r->removed,
			 r->reports, r->broken);
		return r->removed == 1 && !r->reports && !r->broken ? V_OK : V_BAD;
	default:
		break;
	}
	/* One-shot: one report, removal, BROKEN or ready at ADD; else no report counts. */
	snprintf(why, len, "reported %u broken %u (%d) removed %u ready at ADD %u failed %u%s",
		 r->reports, r->broken, r->err, r->removed, r->add_ready,
		 r->add_fail, r->oneshot ? ", one-shot" : "");
	if (r->add_fail)
		return r->reports + r->broken + r->removed + r->add_ready ?
		       V_BAD : V_OK;
	if (!r->added && !r->add_ready)
		return V_SKIP;
	term = r->broken + r->removed + r->add_ready +
	       (r->oneshot ? r->reports : 0);
	if (!term)
		return V_OPEN;
	if (r->kind == K_TIMER1 && r->broken)
		return V_BAD;
	return term == 1 && !r->bad ? V_OK : V_BAD;
}

struct kstat {
	uint32_t total, open, bad;
};

static struct kstat kstats[K_NR];

/* Scan the table; the number of registrations not settled yet. */
static uint32_t scan(int report)
{
	uint32_t i, n = LOAD(sh->next_reg), open = 0, shown[K_NR];
	char why[160];
	int v;

	memset(kstats, 0, sizeof(kstats));
	memset(shown, 0, sizeof(shown));
	if (n >= MAX_REGS)
		n = MAX_REGS - 1;
	for (i = 1; i <= n; i++) {
		const struct reg *r = &sh->regs[i];

		v = verdict(i, why, sizeof(why));
		if (v == V_SKIP)
			continue;
		kstats[r->kind].total++;
		if (v == V_OPEN) {
			kstats[r->kind].open++;
			open++;
		}
		if (v == V_BAD)
			kstats[r->kind].bad++;
		if (report && v != V_OK && shown[r->kind]++ < 4)
			diag("%s registration %u (type %u id %llx) %s: %s",
			     kind_name[r->kind], i, r->type,
			     (unsigned long long)r->id,
			     v == V_OPEN ? "never settled" : "settled wrongly", why);
	}
	return open;
}

static int kinds_ok(const char *what, const int *kinds)
{
	uint32_t total = 0, open = 0, bad = 0;
	int i;

	for (i = 0; kinds[i]; i++) {
		total += kstats[kinds[i]].total;
		open += kstats[kinds[i]].open;
		bad += kstats[kinds[i]].bad;
	}
	diag("%s: %u registrations, %u never settled, %u settled wrongly",
	     what, total, open, bad);
	return !open && !bad;
}

/* "kevents:" and "ready:" of a queue's fdinfo, or -1. */
static long fdinfo_kevents(int fd, long *ready)
{
	char buf[8192];

	*ready = -1;
	if (read_fdinfo(fd, buf, sizeof(buf)) < 0)
		return -1;
	*ready = fdinfo_value(buf, "ready");
	return fdinfo_value(buf, "kevents");
}

/*
 * Where the network stack dropped packets, for the UDP figures: the Udp
 * counters of /proc/net/snmp and, per CPU, the backlog drops and squeezes
 * of /proc/net/softnet_stat.  Nothing if they cannot be read.
 */
static void net_drops(void)
{
	char buf[8192], line[256], *p, *names = NULL, *vals = NULL;
	unsigned int processed, dropped, squeezed;
	size_t off = 0;
	int cpu = 0;

	if (read_text("/proc/net/snmp", buf, sizeof(buf)) > 0) {
		for (p = strtok(buf, "\n"); p; p = strtok(NULL, "\n")) {
			if (strncmp(p, "Udp: ", 5))
				continue;
			if (!names)
				names = p + 5;
			else
				vals = p + 5;
		}
		if (names && vals)
			diag("/proc/net/snmp Udp: %s: %s", names, vals);
	}
	if (read_text("/proc/net/softnet_stat", buf, sizeof(buf)) <= 0)
		return;
	line[0] = '\0';
	for (p = strtok(buf, "\n"); p && off < sizeof(line); p = strtok(NULL, "\n")) {
		if (sscanf(p, "%x %x %x", &processed, &dropped, &squeezed) != 3)
			continue;
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					"%scpu%d %u processed %u dropped %u squeezed",
					cpu ? ", " : "", cpu, processed, dropped,
					squeezed);
		cpu++;
	}
	diag("/proc/net/softnet_stat: %s", line);
}

/* ---------------------------------------------------------------- */
/* main                                                             */

#define ANCHORS	32

static void anchor(int fd, int qid)
{
	struct ukevent uk[ANCHORS];
	uint32_t idx;
	int i;

	for (i = 0; i < ANCHORS; i++) {
		if (!reg_new(K_ANCHOR, (uint8_t)qid, &idx))
			bail_out("anchor");
		uk[i] = reg_uk(idx, KEVENT_TIMER, timer_id(100000, (uint32_t)i),
			       KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT);
	}
	must(add_regs(fd, uk, ANCHORS, "ADD of anchors", 0) == 0, "anchors");
}

/* From the stop on: READY(0) on the shared queues, until the harvest stops. */
static void *drain_kicker_main(void *arg)
{
	(void)arg;
	while (!LOAD(sh->harvest_stop)) {
		kevent_ctl(qa, KEVENT_CTL_READY, 0, NULL);
		kevent_ctl(qb, KEVENT_CTL_READY, 0, NULL);
		kevent_ctl(qf, KEVENT_CTL_READY, 0, NULL);
		kevent_ctl(qd, KEVENT_CTL_READY, 0, NULL);
		msleep(20);
	}
	return NULL;
}

static void final_harvest(int fd, int qid)
{
	struct ukevent buf[64];
	int n, rounds = 0;

	do {
		n = kevent_get_events(fd, 0, 64, TSP(0, 0), buf, 0);
		if (n > 0)
			account(qid, buf, n);
	} while (n > 0 && ++rounds < 1000);
}

int main(int argc, char **argv)
{
	struct harvester hv[3];
	pthread_t t_ring, t_ringw, t_direct, t_sig, t_send, t_posix, t_churn, t_x1, t_x2;
	pthread_t t_kick;
	pthread_t *producers[16];
	const char *pnames[16];
	struct sigaction sa;
	struct rlimit rl;
	size_t mapped;
	long long teardown_end, join_end;
	int i, nprod = 0, stuck = 0, fw_status, settled, ok_all;
	uint32_t open_left, left;
	int limit_base, limit_err;
	long limit_was = 0;
	pid_t fw;
	long kev, ready;
	char why[160];

	if (argc > 1 && !strcmp(argv[1], "--exec-child"))
		return exec_child_main(argc, argv);
	run_seconds = start_run("stress", argc, argv, 15, 25, 45, &seed);

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = leak_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGRTMIN + SIG_RT_OFF, &sa, NULL);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	must(sh != MAP_FAILED, "mmap of the shared table: %s", strerror(errno));
	for (i = 0; i < MAX_CH; i++)
		pthread_mutex_init(&chans[i].lock, NULL);

	/*
	 * Queues A and F are plain, B has an 8-slot ring, D a 16-slot
	 * direct ring; none is CLOEXEC.
	 */
	qa = kevent_init(NULL, 0, 0);
	ring_b = ring_alloc(RING_B_SIZE, &mapped);
	must(ring_b != NULL, "ring");
	qb = kevent_init(ring_b, RING_B_SIZE, 0);
	qf = kevent_init(NULL, 0, 0);
	ring_d = mmap(NULL, KEVENT_DIRECT_RING_BYTES(RING_D_SIZE),
		      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	must(ring_d != MAP_FAILED, "mmap of the direct ring");
	qd = kevent_init(ring_d, RING_D_SIZE, KEVENT_INIT_DIRECT);
	must(qa >= 0 && qb >= 0 && qf >= 0 && qd >= 0, "kevent_init: %s",
	     strerror(errno));
	limit_base = limit_probe(&limit_err, &limit_was);
	anchor(qa, Q_A);
	anchor(qb, Q_B);
	anchor(qf, Q_F);
	anchor(qd, Q_D);

	{
		struct timespec res;

		if (!clock_getres(CLOCK_MONOTONIC, &res) && !res.tv_sec &&
		    res.tv_nsec > 1000000)
			timer_res_ns = (uint32_t)res.tv_nsec;
		diag("CLOCK_MONOTONIC resolution %ld ns", (long)res.tv_nsec);
	}
	t_begin = now_ns();
	t_stop = t_begin + (long long)run_seconds * 1000000000LL;

	/* The fork-and-exec process, before any thread or descriptor of ours. */
	fflush(stdout);
	fw = fork();
	must(fw >= 0, "fork: %s", strerror(errno));
	if (!fw)
		fw_main();

	rng_seed(&ring_rng, seed, 71);
	rng_seed(&direct_rng, seed, 73);
	for (i = 0; i < 2; i++) {
		struct writer *w = &writers[i];
		socklen_t len = sizeof(w->lsin);

		w->id = i;
		w->qid = i ? Q_W1 : Q_W0;
		rng_seed(&w->rng, seed, 11 + (uint64_t)i);
		w->qw = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
		w->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		memset(&w->lsin, 0, sizeof(w->lsin));
		w->lsin.sin_family = AF_INET;
		w->lsin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		must(w->qw >= 0 && w->listener >= 0 &&
		     !bind(w->listener, (struct sockaddr *)&w->lsin, len) &&
		     !getsockname(w->listener, (struct sockaddr *)&w->lsin, &len) &&
		     !listen(w->listener, 64), "writer setup: %s", strerror(errno));
		/* Its own queue: REMOVE of one entry is never "too many". */
		{
			struct ukevent a = timer_ukevent(100000, 0, 0, 0xa9c4);

			must(kevent_ctl(w->qw, KEVENT_CTL_ADD, 1, &a) == 0, "anchor");
		}
	}
	race_closed_port();
	must(!pthread_barrier_init(&race.b1, NULL, 2) &&
	     !pthread_barrier_init(&race.b2, NULL, 2), "barriers");

	for (i = 0; i < 3; i++) {
		hv[i].fd = i < 2 ? qa : qf;
		hv[i].qid = i < 2 ? Q_A : Q_F;
		rng_seed(&hv[i].rng, seed, 1 + (uint64_t)i);
		must(!pthread_create(&hv[i].th, NULL, harvester_main, &hv[i]),
		     "pthread_create");
		pthread_setname_np(hv[i].th, "harvester");
	}
	must(!pthread_create(&t_ring, NULL, ring_main, NULL) &&
	     !pthread_create(&t_ringw, NULL, ring_waiter_main, NULL) &&
	     !pthread_create(&t_direct, NULL, direct_main, NULL),
	     "pthread_create");
	/* Names for dump_tasks(), should a thread not stop. */
	pthread_setname_np(t_ring, "ring");
	pthread_setname_np(t_ringw, "ring waiter");
	pthread_setname_np(t_direct, "direct");
#define PRODUCER(th, fn, arg, name) do {				\
		must(!pthread_create(&(th), NULL, (fn), (arg)),		\
		     "pthread_create");					\
		pthread_setname_np((th), (name));			\
		producers[nprod] = &(th);				\
		pnames[nprod++] = (name);				\
	} while (0)
	for (i = 0; i < 2; i++) {
		tthreads[i].id = i;
		rng_seed(&tthreads[i].rng, seed, 21 + (uint64_t)i);
		PRODUCER(tthreads[i].th, timer_main, &tthreads[i], "timers");
		PRODUCER(writers[i].th, writer_main, &writers[i], "writer");
	}
	PRODUCER(t_sig, sig_owner_main, NULL, "signal owner");
	PRODUCER(t_send, sig_sender_main, NULL, "signal sender");
	PRODUCER(t_posix, posix_main, NULL, "posix timers");
	PRODUCER(t_churn, churn_main, NULL, "churn");
	PRODUCER(t_x1, racer1_main, NULL, "racer 1");
	PRODUCER(t_x2, racer2_main, NULL, "racer 2");

	while (now_ns() < t_stop)
		msleep(100);

	/*
	 * Stop the producers, then drain.  A harvester may wait for more
	 * events than are still to come, with no time limit: from now on a
	 * thread kicks the shared queues until the harvesters stop.
	 */
	STORE(sh->stop, 1);
	must(!pthread_create(&t_kick, NULL, drain_kicker_main, NULL), "pthread_create");
	pthread_setname_np(t_kick, "drain kicker");
	teardown_end = t_stop + 20000000000LL;
	join_end = t_stop + 17000000000LL;
	for (i = 0; i < nprod; i++) {
		if (timed_join(*producers[i], join_end)) {
			diag("the %s thread did not stop", pnames[i]);
			stuck++;
		}
	}
	fw_status = -1;
	do {
		int st;

		if (fw_status == -1 && waitpid(fw, &st, WNOHANG) == fw)
			fw_status = st;
		open_left = scan(0);
		if (!open_left && fw_status != -1)
			break;
		msleep(20);
	} while (now_ns() < teardown_end);
	if (fw_status == -1) {
		diag("the fork-and-exec process did not stop");
		kill(fw, SIGKILL);
		waitpid(fw, NULL, 0);
	}
	settled = !open_left;
	STORE(sh->harvest_stop, 1);
	for (i = 0; i < 3; i++) {
		while (timed_join(hv[i].th, now_ns() + 50000000)) {
			kevent_ctl(hv[i].fd, KEVENT_CTL_READY, 0, NULL);
			if (now_ns() > teardown_end + 5000000000LL) {
				stuck++;
				break;
			}
		}
	}
	if (timed_join(t_ring, now_ns() + 3000000000LL) ||
	    timed_join(t_ringw, now_ns() + 3000000000LL) ||
	    timed_join(t_direct, now_ns() + 3000000000LL) ||
	    timed_join(t_kick, now_ns() + 3000000000LL))
		stuck++;
	/* Anything still coming now is counted too: a second report shows. */
	msleep(100);
	final_harvest(qa, Q_A);
	final_harvest(qb, Q_B);
	final_harvest(qf, Q_F);
	final_harvest_direct();
	final_harvest(writers[0].qw, Q_W0);
	final_harvest(writers[1].qw, Q_W1);
	left = scan(1);

	/* The figures doc/reliability.md quotes. */
	{
		char line[1024];
		size_t off = 0;

		for (i = 0; i < OP_NR; i++)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
						"%s %u%s", op_name[i], sh->ops[i],
						i + 1 < OP_NR ? ", " : "");
		diag("ops in %d s: %s", run_seconds, line);
		diag("registrations: %u", LOAD(sh->next_reg));
		for (i = 0; i < CH_NKINDS; i++)
			diag("channels %s: %u opened, %u finished, %llu bytes written, %llu read",
			     ch_kind_name[i], kind_channels[i], kind_done[i],
			     (unsigned long long)kind_wbytes[i],
			     (unsigned long long)kind_rbytes[i]);
		diag("races: remove %u, close-queue %u, harvest %u, modify %u, pipe-add %u, udp-add %u",
		     race.rounds[0], race.rounds[1], race.rounds[2],
		     race.rounds[3], race.rounds[4], race.rounds[5]);
		diag("signals sent %u over %u registrations; POSIX one-shot arms %u; SEND readiness followed by EAGAIN %u",
		     sh->ops[OP_SIGNALS], sig_nregs, posix_oneshot_arms,
		     send_spurious);
		diag("udp: %llu datagrams never read (dropped, or late behind END), %llu read late, %u windows counted lost, %u END records sent again, %u channels whose END never came",
		     (unsigned long long)udp_unread,
		     (unsigned long long)udp_late, udp_resets, udp_resends,
		     udp_end_lost);
		net_drops();
	}

	/* Right after the point, so that the report shows it with the failure. */
	if (!is_int(stuck, 0, "every thread stopped within the time limit"))
		dump_tasks(getpid());
	ok(settled, "every registration settled before the drain deadline (%u left at the end)",
	   left);
	is_int(sh->dup_in_call, 0, "no registration was reported twice in one call");
	ok(!sh->malformed && !sh->wrong_queue && !sh->unknown_ptr,
	   "every report was well-formed, for a known registration, from its own queue (malformed %u, wrong queue %u, unknown %u)",
	   sh->malformed, sh->wrong_queue, sh->unknown_ptr);
	ok(kinds_ok("one-shot timers", (const int[]){ K_TIMER1, 0 }),
	   "one-shot timers: each reported exactly once, or removed");
	{
		uint32_t bad = 0, n = nperiodic < MAX_PERIODIC ? nperiodic : MAX_PERIODIC;

		for (i = 0; i < (int)n; i++) {
			if (!sh->regs[periodics[i].idx].added ||
			    !periodics[i].rm_ret)
				continue;
			if (!periodic_ok(&periodics[i], why, sizeof(why)) &&
			    bad++ < 4)
				diag("periodic timer %u: %s", periodics[i].idx, why);
		}
		ok(!bad && kinds_ok("periodic timers", (const int[]){ K_PERIODIC, 0 }),
		   "periodic timers: the expiries reported agree with the kernel's time of the latest (%u timers, %u wrong)",
		   n, bad);
	}
	is_int(sh->ring_bad, 0, "ring: ring_kidx and the slots agree with kevent_wait() and kevent_get_events()");
	ok(!chan_bad && !chan_unfinished,
	   "channels: every byte written was read, in order, on every kind (%u wrong, %u unfinished)",
	   chan_bad, chan_unfinished);
	ok(kinds_ok("channel registrations", (const int[]){ K_CHAN, 0 }),
	   "channel registrations: each one-shot reported once, each other one BROKEN once after close");
	ok(kinds_ok("SEND registrations", (const int[]){ K_SEND, 0 }),
	   "SEND registrations: each reported exactly once");
	ok(!sig_lost && kinds_ok("signal registrations", (const int[]){ K_SIG, 0 }),
	   "signals: every NOMASK send counted once in the reports (%u sends)",
	   sh->ops[OP_SIGNALS]);
	is_int(sig_leaks, 0, "signals: no NOMASK signal reached a handler");
	ok(!posix_oneshot_lost,
	   "POSIX timers: every expiry of the re-armed one-shot timer was reported (%u arms)",
	   posix_oneshot_arms);
	ok(kinds_ok("POSIX timers", (const int[]){ K_POSIX, 0 }),
	   "POSIX timers: expiries within bounds; each deleted timer reported BROKEN exactly once");
	ok(kinds_ok("churn registrations", (const int[]){ K_CHURN, 0 }),
	   "close and reuse: every registration of a closed descriptor settled exactly once");
	ok(!sh->race_fail && kinds_ok("race registrations", (const int[]){ K_RACE, 0 }),
	   "races of object death with REMOVE, close, harvest and MODIFY: each settled exactly once, at once");
	is_int(sh->race_addfail_bad, 0, "a failed ADD leaves nothing queued");
	ok(!sh->pollfree_stuck &&
	   kinds_ok("POLLFREE registrations", (const int[]){ K_POLLFREE, 0 }),
	   "POLLFREE: each signalfd registration of an exited child reported BROKEN with ESRCH once, while the file is open (%u not)",
	   sh->pollfree_stuck);
	ok(!sh->fork_fail &&
	   kinds_ok("child registrations", (const int[]){ K_CHILD, K_CHILDSIG, K_FWSIG, 0 }),
	   "fork: signal registrations are not inherited; registrations children made are reported once (%u failures)",
	   sh->fork_fail);
	ok(!sh->exec_fail && kinds_ok("exec registrations", (const int[]){ K_EXECSIG, 0 }),
	   "exec: the new program's signals are not taken; the registration is reported BROKEN with ESRCH once (%u failures)",
	   sh->exec_fail);
	is_int(sh->other_mm_bad, 0, "a ring queue used from another address space fails with EPERM");
	is_int(sh->unexpected, 0, "every system call returned a documented result");
	ok_all = 1;
	{
		const int fds[4] = { qa, qb, qf, qd };

		for (i = 0; i < 4; i++) {
			kev = fdinfo_kevents(fds[i], &ready);
			if (kev != ANCHORS || ready != 0) {
				diag("queue %c: fdinfo says kevents %ld ready %ld, expected %d and 0",
				     "ABFD"[i], kev, ready, ANCHORS);
				ok_all = 0;
			}
		}
	}
	ok(ok_all, "after teardown the shared queues hold only their anchors, nothing ready");
	ok(fw_status == 0, "the fork-and-exec process exited cleanly (status %#x)",
	   fw_status);
	close(qa);
	close(qb);
	close(qf);
	close(qd);
	for (i = 0; i < 2; i++) {
		close(writers[i].qw);
		close(writers[i].listener);
	}
	leak_point(limit_base, "the stress");
	return tap_done();
}
