// SPDX-License-Identifier: MIT
/*
 * Workload 2: registration churn.  N descriptors that are never ready
 * (the read ends of empty pipes, one end of idle AF_UNIX stream pairs,
 * or eventfds at 0) are registered for reading and removed again, in
 * cycles, for a given time; the rate is in registrations added and
 * removed per second (one add plus one remove counts once).  kevent_ctl()
 * one entry a call, or B entries a call, with the type that suits the
 * descriptor (KEVENT_PIPE, KEVENT_SOCKET, KEVENT_POLL for an eventfd) or
 * with KEVENT_POLL;
 * epoll_ctl() one call each; io_uring B POLL_ADD SQEs per submit, then B
 * POLL_REMOVE per submit, waiting for their completions.  Every call is
 * checked: an entry copied back by KEVENT_CTL_ADD (an error), a REMOVE
 * entry that is not DONE, an epoll_ctl() error, a completion that is
 * missing or not what was asked, each fail the run.
 */
#include <getopt.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>

#include "kbench.h"

#define URING_REMOVE	(~0ULL)

/*
 * A kevent variant's type: the source of the descriptor's kind, or
 * KEVENT_POLL whatever the kind.
 */
#define TYPE_OF_KIND	(-1)

struct variant {
	const char *name;
	int how;	/* 'k': kevent_ctl, 'e': epoll_ctl, 'u': io_uring */
	int batch;
	int type;	/* TYPE_OF_KIND or KEVENT_POLL */
};

static const struct variant variants[] = {
	{ "kevent-1", 'k', 1, TYPE_OF_KIND },
	{ "kevent-64", 'k', 64, TYPE_OF_KIND },
	{ "kevent-1024", 'k', 1024, TYPE_OF_KIND },
	{ "kevent-poll-64", 'k', 64, KEVENT_POLL },
	{ "epoll", 'e', 1, 0 },
	{ "uring-64", 'u', 64, 0 },
};

/* The descriptors churned, and the kevent source of each kind. */
enum { KIND_PIPE, KIND_UNIX, KIND_EVENTFD, NKINDS };

static const struct {
	const char *name;
	int type;
} kinds[NKINDS] = {
	[KIND_PIPE]	= { "pipe", KEVENT_PIPE },
	[KIND_UNIX]	= { "unix", KEVENT_SOCKET },
	[KIND_EVENTFD]	= { "eventfd", KEVENT_POLL },
};

#define NVARIANTS	(int)(sizeof(variants) / sizeof(variants[0]))

static void kevent_cycle(int kfd, const struct variant *v, int type,
			 const int *fds, int n, struct ukevent *uk)
{
	int i, k, b, ret;

	for (int cmd = KEVENT_CTL_ADD; cmd <= KEVENT_CTL_REMOVE; cmd++) {
		for (i = 0; i < n; i += b) {
			b = n - i < v->batch ? n - i : v->batch;
			for (k = 0; k < b; k++) {
				memset(&uk[k], 0, sizeof(uk[k]));
				uk[k].type = type;
				uk[k].id.raw[0] = fds[i + k];
				uk[k].event = type == KEVENT_POLL ?
					      KEVENT_POLL_POLLIN :
					      KEVENT_SOCKET_RECV;
				uk[k].req_flags = KEVENT_REQ_ALWAYS_QUEUE;
				uk[k].ptr = i + k;
			}
			ret = kevent_ctl(kfd, cmd, b, uk);
			if (cmd == KEVENT_CTL_ADD && ret != 0)
				fail("churn %s: ADD of %d: %d back (%s)",
				     v->name, b, ret, ret < 0 ? strerror(errno) :
				     strerror(-(int)uk[0].ret_data[1]));
			if (cmd == KEVENT_CTL_REMOVE && ret != b)
				fail("churn %s: REMOVE of %d: %d", v->name, b,
				     ret);
			if (cmd == KEVENT_CTL_REMOVE)
				for (k = 0; k < b; k++)
					if (uk[k].ret_flags != KEVENT_RET_DONE)
						fail("churn %s: REMOVE entry "
						     "%d: flags %#x", v->name,
						     k, uk[k].ret_flags);
		}
	}
}

static void epoll_cycle(int epfd, const int *fds, int n)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int i;

	for (i = 0; i < n; i++) {
		ev.data.u64 = i;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &ev))
			fail("churn epoll: ADD: %s", strerror(errno));
	}
	for (i = 0; i < n; i++)
		if (epoll_ctl(epfd, EPOLL_CTL_DEL, fds[i], NULL))
			fail("churn epoll: DEL: %s", strerror(errno));
}

static void uring_cycle(struct io_uring *ring, const struct variant *v,
			const int *fds, int n)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int i, k, b, ret, removed, cancelled;

	for (i = 0; i < n; i += b) {
		b = n - i < v->batch ? n - i : v->batch;
		for (k = 0; k < b; k++) {
			sqe = io_uring_get_sqe(ring);
			io_uring_prep_poll_multishot(sqe, fds[i + k], POLLIN);
			io_uring_sqe_set_data64(sqe, i + k);
		}
		ret = io_uring_submit(ring);
		if (ret != b)
			fail("churn %s: submit of %d POLL_ADD: %d", v->name, b,
			     ret);
	}
	for (i = 0; i < n; i += b) {
		b = n - i < v->batch ? n - i : v->batch;
		for (k = 0; k < b; k++) {
			sqe = io_uring_get_sqe(ring);
			io_uring_prep_poll_remove(sqe, (uint64_t)(i + k));
			io_uring_sqe_set_data64(sqe, URING_REMOVE);
		}
		ret = io_uring_submit_and_wait(ring, 2 * b);
		if (ret != b)
			fail("churn %s: submit of %d POLL_REMOVE: %d", v->name,
			     b, ret);
		removed = cancelled = 0;
		while (removed + cancelled < 2 * b) {
			ret = io_uring_wait_cqe(ring, &cqe);
			if (ret)
				fail("churn %s: wait: %s", v->name,
				     strerror(-ret));
			if (cqe->user_data == URING_REMOVE && cqe->res == 0)
				removed++;
			else if (cqe->user_data < (uint64_t)n &&
				 cqe->res == -ECANCELED)
				cancelled++;
			else
				fail("churn %s: completion %llu res %d",
				     v->name,
				     (unsigned long long)cqe->user_data,
				     cqe->res);
			io_uring_cqe_seen(ring, cqe);
		}
		if (removed != b)
			fail("churn %s: %d of %d removed", v->name, removed, b);
	}
}

/*
 * A variant by its name: the table's, or any batch size of the same
 * forms ("kevent-8", "kevent-poll-1", "uring-8").
 */
static int parse_variant(const char *name, struct variant *v)
{
	const char *num = NULL;

	for (int i = 0; i < NVARIANTS; i++) {
		if (!strcmp(name, variants[i].name)) {
			*v = variants[i];
			return 0;
		}
	}
	memset(v, 0, sizeof(*v));
	if (!strncmp(name, "kevent-poll-", 12)) {
		v->how = 'k';
		v->type = KEVENT_POLL;
		num = name + 12;
	} else if (!strncmp(name, "kevent-", 7)) {
		v->how = 'k';
		v->type = TYPE_OF_KIND;
		num = name + 7;
	} else if (!strncmp(name, "uring-", 6)) {
		v->how = 'u';
		num = name + 6;
	}
	if (!num || (v->batch = atoi(num)) < 1 || v->batch > 1024)
		return -1;
	v->name = name;
	return 0;
}

/* N descriptors of a kind, never ready; the others they need in @keep. */
static void make_fds(int kind, int n, int *fds, int *keep)
{
	int i, p[2];

	for (i = 0; i < n; i++) {
		if (kind == KIND_EVENTFD) {
			fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			keep[i] = -1;
			if (fds[i] < 0)
				die("eventfd: %s", strerror(errno));
			continue;
		}
		if (kind == KIND_PIPE ? pipe2(p, O_CLOEXEC | O_NONBLOCK) :
		    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
			       SOCK_NONBLOCK, 0, p))
			die("%s: %s", kinds[kind].name, strerror(errno));
		/* The other ends stay open: nothing is broken. */
		fds[i] = p[0];
		keep[i] = p[1];
	}
}

/*
 * kbench churn [-n N] [-k pipe|unix|eventfd] [-v VARIANT,...] [-C CYCLES]
 *
 * -C: the counted bench, CYCLES cycles between two markers for each
 * variant, instead of cycles for a given time.
 */
int wl_churn(int argc, char **argv)
{
	int n = 1024, ch, rep, i, *rfd, *keep, kind = KIND_PIPE, type, nvar = 0;
	char *only = NULL, *tok, *save;
	struct variant var_list[32];
	struct io_uring_params up;
	struct io_uring ring;
	struct ukevent *uk;
	unsigned long cycles, count = 0;
	uint64_t start, ns = 0, limit, cmin;
	int fd = -1, ret;

	while ((ch = getopt(argc, argv, "n:k:v:C:")) != -1) {
		switch (ch) {
		case 'n': n = atoi(optarg); break;
		case 'k':
			for (kind = 0; kind < NKINDS; kind++)
				if (!strcmp(optarg, kinds[kind].name))
					break;
			if (kind == NKINDS)
				die("churn: unknown kind %s", optarg);
			break;
		case 'v': only = optarg; break;
		case 'C': count = strtoul(optarg, NULL, 0); break;
		default: die("usage: churn [-n N] [-k pipe|unix|eventfd] "
			     "[-v VARIANT,...] [-C CYCLES]");
		}
	}
	if (only) {
		for (tok = strtok_r(only, ",", &save); tok && nvar < 32;
		     tok = strtok_r(NULL, ",", &save))
			if (parse_variant(tok, &var_list[nvar++]))
				die("churn: unknown variant %s", tok);
	} else {
		for (nvar = 0; nvar < NVARIANTS; nvar++)
			var_list[nvar] = variants[nvar];
	}
	raise_nofile(2L * n + 64);
	rfd = xcalloc(n, sizeof(int));
	keep = xcalloc(n, sizeof(int));
	make_fds(kind, n, rfd, keep);
	uk = xcalloc(1024, sizeof(*uk));
	limit = (uint64_t)(opt.secs * 1e9);
	for (rep = 1; rep <= opt.reps; rep++) {
		for (int v = 0; v < nvar; v++) {
			const struct variant *var = &var_list[v];

			switch (var->how) {
			case 'k':
				fd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
				break;
			case 'e':
				fd = epoll_create1(EPOLL_CLOEXEC);
				break;
			case 'u':
				memset(&up, 0, sizeof(up));
				up.flags = IORING_SETUP_SINGLE_ISSUER |
					   IORING_SETUP_DEFER_TASKRUN |
					   IORING_SETUP_CQSIZE;
				up.cq_entries = 4 * var->batch;
				ret = io_uring_queue_init_params(var->batch,
								 &ring, &up);
				if (ret)
					die("io_uring_queue_init: %s",
					    strerror(-ret));
				fd = 0;
				break;
			}
			if (fd < 0)
				die("churn %s: %s", var->name, strerror(errno));
			type = var->type == TYPE_OF_KIND ? kinds[kind].type :
							    var->type;
			cycles = 0;
			cmin = UINT64_MAX;
			if (count) {
				settle();
				MARK(MARK_BEGIN);
			}
			start = now_ns();
			do {
				uint64_t tc = count ? 0 : now_ns();

				if (var->how == 'k')
					kevent_cycle(fd, var, type, rfd, n, uk);
				else if (var->how == 'e')
					epoll_cycle(fd, rfd, n);
				else
					uring_cycle(&ring, var, rfd, n);
				cycles++;
				if (count)
					continue;
				tc = now_ns() - tc;
				if (tc < cmin)
					cmin = tc;
			} while (count ? cycles < count :
				 (ns = now_ns() - start) < limit || cycles < 2);
			if (count) {
				MARK(MARK_END);
				counted("wl=churn kind=%s n=%d mech=%s rep=%d "
					"events=%lu cycles=%lu",
					kinds[kind].name, n, var->name, rep,
					cycles * n, cycles);
			}
			if (var->how == 'u')
				io_uring_queue_exit(&ring);
			else
				close(fd);
			if (opt.smoke) {
				tap_ok("churn %s, %s: %lu registrations added "
				       "and removed, every entry checked",
				       var->name, kinds[kind].name, cycles * n);
				continue;
			}
			if (count)
				continue;
			result("wl=churn n=%d mech=%s rep=%d ops=%.0f "
			       "nspo=%.1f cycles=%lu minnspo=%.1f", n,
			       var->name, rep, cycles * n * 1e9 / ns,
			       (double)ns / (cycles * n), cycles,
			       (double)cmin / n);
		}
	}
	for (i = 0; i < n; i++) {
		close(rfd[i]);
		if (keep[i] >= 0)
			close(keep[i]);
	}
	free(rfd);
	free(keep);
	free(uk);
	return 0;
}
