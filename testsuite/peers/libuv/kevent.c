/* Copyright libuv contributors. All rights reserved.
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to
 * deal in the Software without restriction, including without limitation the
 * rights to use, copy, modify, merge, publish, distribute, sublicense, and/or
 * sell copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
 * FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS
 * IN THE SOFTWARE.
 */

/* A backend for Linux kernels with kevent, the generic kernel event
 * mechanism of the kevent series for Linux 6.1 (see kevent(7)).  Written
 * for the kevent project, under libuv's licence so that it can go into
 * libuv's tree; libuv-kevent.patch makes linux-core.c and epoll.c call it.
 *
 * Every watcher is one KEVENT_POLL registration of its file descriptor,
 * level-triggered, with the watcher's pevents as its mask: the readiness
 * model of the epoll backend, so that uv__io_t, uv_poll_t and the stream
 * code see the same events in the same order.  What differs from epoll:
 *
 * - A registration is named by (type, fd, ptr); ptr holds a generation
 *   number, new for each ADD.  A file closed without a REMOVE leaves the
 *   queue at once but is still reported once, broken with -EBADF; the
 *   generation tells such a report, or any report of a registration that
 *   was replaced since, from one about the file that has the number now.
 * - Changes are batched: uv__io_poll() sends all REMOVEs, then all
 *   MODIFYs, then all ADDs of an iteration as one kevent_ctl() call each.
 *   Every ADD and MODIFY carries KEVENT_REQ_ALWAYS_QUEUE, so that a file
 *   ready when it is added is queued, as epoll queues it, instead of
 *   being handed back by kevent_ctl().
 * - Signals, timers and the async handle stay libuv's own (the signal
 *   pipe, the timer heap, the eventfd): they are already file descriptors
 *   or need none, and libuv's fork and thread rules for them hold as they
 *   are.
 *
 * The loop uses epoll instead when kevent_probe() says the kernel has no
 * kevent at the numbers of <kevent.h>, or when UV_NOKEVENT is set in the
 * environment.  UV_NOEPOLL forbids that fallback: uv_loop_init() then
 * fails with UV_ENOSYS rather than run on epoll, so that a test run meant
 * for kevent cannot pass on epoll by accident.
 */

#include "uv.h"
#include "internal.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kevent.h>

/* The ptr of uv__io_check_fd()'s probe: never a generation, which is 32
 * bits wide. */
#define UV__KEVENT_PROBE_PTR ((uint64_t) -1)

/* Marks an event that uv__platform_invalidate_fd() took back. */
#define UV__KEVENT_INVALID KEVENT_MAX

#define UV__KEVENT_NEVENTS 1024

typedef struct {
  struct ukevent* ev;
  unsigned int n;
  unsigned int size;
} uv__kevent_batch_t;

typedef struct {
  /* Per file descriptor: the generation of its registration (0: none)
   * and the mask it was registered with. */
  uint32_t* gen;
  uint32_t* mask;
  unsigned int nfds;
  uint32_t next_gen;
  uv__kevent_batch_t remove;
  uv__kevent_batch_t modify;
  uv__kevent_batch_t add;
  struct ukevent events[UV__KEVENT_NEVENTS];
} uv__kevent_t;


static uv__kevent_t* uv__kevent(uv_loop_t* loop) {
  return (uv__kevent_t*) uv__get_internal_fields(loop)->kevent;
}


int uv__kevent_active(uv_loop_t* loop) {
  return uv__kevent(loop) != NULL;
}


int uv__kevent_init(uv_loop_t* loop) {
  uv__kevent_t* kq;
  int fd;

  uv__get_internal_fields(loop)->kevent = NULL;

  if (getenv("UV_NOKEVENT") != NULL)
    return UV_ENOSYS;

  /* Before any kevent system call: on a kernel without kevent their
   * numbers may belong to other calls. */
  if (kevent_probe(NULL))
    return UV__ERR(errno);

  kq = uv__calloc(1, sizeof(*kq));
  if (kq == NULL)
    return UV_ENOMEM;

  fd = kevent_init(NULL, 0, KEVENT_INIT_CLOEXEC);
  if (fd == -1) {
    fd = UV__ERR(errno);
    uv__free(kq);
    return fd;
  }

  loop->backend_fd = fd;
  uv__get_internal_fields(loop)->kevent = kq;
  return 0;
}


/* Whether the loop may run on epoll when uv__kevent_init() failed. */
int uv__kevent_epoll_allowed(void) {
  return getenv("UV_NOEPOLL") == NULL;
}


static void uv__kevent_batch_free(uv__kevent_batch_t* b) {
  uv__free(b->ev);
  b->ev = NULL;
  b->n = 0;
  b->size = 0;
}


/* The backend descriptor itself is closed by the caller, as epoll's. */
void uv__kevent_delete(uv_loop_t* loop) {
  uv__kevent_t* kq;

  kq = uv__kevent(loop);
  if (kq == NULL)
    return;

  uv__kevent_batch_free(&kq->remove);
  uv__kevent_batch_free(&kq->modify);
  uv__kevent_batch_free(&kq->add);
  uv__free(kq->gen);
  uv__free(kq->mask);
  uv__free(kq);
  uv__get_internal_fields(loop)->kevent = NULL;
}


static struct ukevent* uv__kevent_push(uv__kevent_batch_t* b) {
  struct ukevent* ev;
  unsigned int size;

  if (b->n == b->size) {
    size = b->size ? 2 * b->size : 64;
    ev = uv__reallocf(b->ev, size * sizeof(*ev));
    if (ev == NULL)
      abort();  /* As epoll_ctl() failing with ENOMEM would. */
    b->ev = ev;
    b->size = size;
  }

  ev = &b->ev[b->n++];
  memset(ev, 0, sizeof(*ev));
  return ev;
}


static void uv__kevent_grow(uv__kevent_t* kq, int fd) {
  unsigned int n;
  uint32_t* gen;
  uint32_t* mask;

  if ((unsigned int) fd < kq->nfds)
    return;

  n = kq->nfds ? kq->nfds : 64;
  while (n <= (unsigned int) fd)
    n *= 2;

  gen = uv__reallocf(kq->gen, n * sizeof(*gen));
  if (gen == NULL)
    abort();
  kq->gen = gen;
  mask = uv__reallocf(kq->mask, n * sizeof(*mask));
  if (mask == NULL)
    abort();
  kq->mask = mask;

  memset(gen + kq->nfds, 0, (n - kq->nfds) * sizeof(*gen));
  memset(mask + kq->nfds, 0, (n - kq->nfds) * sizeof(*mask));
  kq->nfds = n;
}


static void uv__kevent_entry(struct ukevent* ev,
                             int fd,
                             uint32_t mask,
                             uint64_t ptr) {
  ev->id.raw[0] = (uint32_t) fd;
  ev->type = KEVENT_POLL;
  ev->event = mask;
  ev->req_flags = KEVENT_REQ_ALWAYS_QUEUE;
  ev->ptr = ptr;
}


static void uv__kevent_add(uv__kevent_t* kq, int fd, uint32_t mask) {
  /* Generation 0 means "not registered". */
  if (++kq->next_gen == 0)
    kq->next_gen = 1;

  kq->gen[fd] = kq->next_gen;
  kq->mask[fd] = mask;
  uv__kevent_entry(uv__kevent_push(&kq->add), fd, mask, kq->gen[fd]);
}


/* Forget the registration of fd and remove it at the next flush. */
static void uv__kevent_forget(uv__kevent_t* kq, int fd) {
  if ((unsigned int) fd >= kq->nfds || kq->gen[fd] == 0)
    return;

  uv__kevent_entry(uv__kevent_push(&kq->remove), fd, 0, kq->gen[fd]);
  kq->gen[fd] = 0;
  kq->mask[fd] = 0;
}


/* REMOVE and MODIFY write every entry back in place; a call that names
 * more registrations than the queue holds fails as a whole with EINVAL,
 * which happens when registrations left with their files: then the
 * entries go one at a time. */
static void uv__kevent_ctl_each(int kfd, int cmd, uv__kevent_batch_t* b) {
  unsigned int i;

  if (b->n == 0)
    return;

  if (kevent_ctl(kfd, cmd, b->n, b->ev) != -1)
    return;

  if (errno != EINVAL)
    abort();

  for (i = 0; i < b->n; i++)
    if (kevent_ctl(kfd, cmd, 1, &b->ev[i]) == -1)
      abort();
}


static void uv__kevent_flush(uv_loop_t* loop, uv__kevent_t* kq) {
  struct ukevent* ev;
  unsigned int i;
  int n;
  int fd;

  /* Removals first: a REMOVE of a generation never matches a registration
   * added later, whatever the order, but the queue is smaller for the
   * ADDs. */
  uv__kevent_ctl_each(loop->backend_fd, KEVENT_CTL_REMOVE, &kq->remove);
  kq->remove.n = 0;

  uv__kevent_ctl_each(loop->backend_fd, KEVENT_CTL_MODIFY, &kq->modify);
  for (i = 0; i < kq->modify.n; i++) {
    ev = &kq->modify.ev[i];
    if (!(ev->ret_flags & KEVENT_RET_BROKEN))
      continue;

    /* The file was closed and the number given to another one, without
     * libuv knowing (the user closed the descriptor of a uv_poll_t):
     * register the file that has the number now, as epoll's ADD would. */
    fd = (int) ev->id.raw[0];
    if (-(int) ev->ret_data[1] != ENOENT || kq->gen[fd] != (uint32_t) ev->ptr)
      abort();
    uv__kevent_add(kq, fd, kq->mask[fd]);
  }
  kq->modify.n = 0;

  if (kq->add.n == 0)
    return;

  n = kevent_ctl(loop->backend_fd, KEVENT_CTL_ADD, kq->add.n, kq->add.ev);
  if (n == -1)
    abort();

  /* With KEVENT_REQ_ALWAYS_QUEUE an entry handed back is an error.  epoll
   * aborts when EPOLL_CTL_ADD fails; so does this backend: libuv checks
   * descriptors with uv__io_check_fd() before it watches them. */
  if (n != 0)
    abort();

  kq->add.n = 0;
}


void uv__kevent_invalidate_fd(uv_loop_t* loop, int fd) {
  struct ukevent* events;
  uintptr_t nfds;
  uintptr_t i;

  assert(loop->watchers != NULL);
  assert(fd >= 0);

  events = (struct ukevent*) loop->watchers[loop->nwatchers];
  nfds = (uintptr_t) loop->watchers[loop->nwatchers + 1];
  if (events != NULL)
    for (i = 0; i < nfds; i++)
      if (events[i].type == KEVENT_POLL && events[i].id.raw[0] == (uint32_t) fd)
        events[i].type = UV__KEVENT_INVALID;

  /* The same file may stay open in another process, or the descriptor be
   * reused for another file before the next flush; the generation keeps
   * either from being taken for this one. */
  uv__kevent_forget(uv__kevent(loop), fd);
}


int uv__kevent_check_fd(uv_loop_t* loop, int fd) {
  struct ukevent ev;
  int err;
  int n;

  memset(&ev, 0, sizeof(ev));
  uv__kevent_entry(&ev, fd, POLLIN, UV__KEVENT_PROBE_PTR);

  n = kevent_ctl(loop->backend_fd, KEVENT_CTL_ADD, 1, &ev);
  if (n == -1)
    return UV__ERR(errno);

  if (n == 1) {
    err = -(int) ev.ret_data[1];
    /* KEVENT_POLL refuses a file without a poll method with EINVAL where
     * epoll_ctl() says EPERM; libuv's callers expect epoll's answer. */
    if (err == EINVAL)
      err = EPERM;
    return UV__ERR(err);
  }

  uv__kevent_entry(&ev, fd, POLLIN, UV__KEVENT_PROBE_PTR);
  if (kevent_ctl(loop->backend_fd, KEVENT_CTL_REMOVE, 1, &ev) != 1)
    abort();

  return 0;
}


void uv__kevent_poll(uv_loop_t* loop, int timeout) {
  uv__kevent_t* kq;
  struct __kernel_timespec ts;
  struct __kernel_timespec* tsp;
  struct ukevent* ev;
  QUEUE* q;
  uv__io_t* w;
  sigset_t sigset;
  uint64_t base;
  uint32_t revents;
  int have_signals;
  int nevents;
  int count;
  int nfds;
  int fd;
  int i;
  int real_timeout;
  int user_timeout;
  int reset_timeout;
  int block_sigprof;

  kq = uv__kevent(loop);

  if (loop->nfds == 0) {
    assert(QUEUE_EMPTY(&loop->watcher_queue));
    /* Stopped watchers may still be registered: leave nothing behind that
     * would make the queue poll readable for an embedder. */
    uv__kevent_flush(loop, kq);
    return;
  }

  while (!QUEUE_EMPTY(&loop->watcher_queue)) {
    q = QUEUE_HEAD(&loop->watcher_queue);
    QUEUE_REMOVE(q);
    QUEUE_INIT(q);

    w = QUEUE_DATA(q, uv__io_t, watcher_queue);
    assert(w->pevents != 0);
    assert(w->fd >= 0);
    assert(w->fd < (int) loop->nwatchers);

    uv__kevent_grow(kq, w->fd);
    if (kq->gen[w->fd] == 0) {
      uv__kevent_add(kq, w->fd, w->pevents);
    } else if (kq->mask[w->fd] != w->pevents) {
      kq->mask[w->fd] = w->pevents;
      uv__kevent_entry(uv__kevent_push(&kq->modify),
                       w->fd,
                       w->pevents,
                       kq->gen[w->fd]);
    }

    w->events = w->pevents;
  }

  uv__kevent_flush(loop, kq);

  block_sigprof = 0;
  if (loop->flags & UV_LOOP_BLOCK_SIGPROF) {
    sigemptyset(&sigset);
    sigaddset(&sigset, SIGPROF);
    block_sigprof = 1;
  }

  assert(timeout >= -1);
  base = loop->time;
  count = 48; /* As the epoll backend: a bound on non-blocking rounds. */
  real_timeout = timeout;

  if (uv__get_internal_fields(loop)->flags & UV_METRICS_IDLE_TIME) {
    reset_timeout = 1;
    user_timeout = timeout;
    timeout = 0;
  } else {
    reset_timeout = 0;
    user_timeout = 0;
  }

  for (;;) {
    if (timeout != 0)
      uv__metrics_set_provider_entry_time(loop);

    tsp = NULL;
    if (timeout != -1) {
      ts.tv_sec = timeout / 1000;
      ts.tv_nsec = (timeout % 1000) * 1000000;
      tsp = &ts;
    }

    /* kevent_get_events() takes no signal mask: block SIGPROF around the
     * wait, as the kqueue backend does around kevent(). */
    if (block_sigprof)
      if (pthread_sigmask(SIG_BLOCK, &sigset, NULL))
        abort();

    nfds = kevent_get_events(loop->backend_fd,
                             1,
                             ARRAY_SIZE(kq->events),
                             tsp,
                             kq->events,
                             0);

    if (block_sigprof)
      if (pthread_sigmask(SIG_UNBLOCK, &sigset, NULL))
        abort();

    /* Update loop->time unconditionally: the process may have been
     * rescheduled inside the system call, however short its timeout. */
    SAVE_ERRNO(uv__update_time(loop));

    if (nfds == -1 && errno != EINTR)
      abort();

    /* Nothing came, or a signal interrupted the wait. */
    if (nfds <= 0) {
      assert(nfds == -1 || timeout != -1);

      if (reset_timeout != 0) {
        timeout = user_timeout;
        reset_timeout = 0;
      }

      if (timeout == -1)
        continue;

      if (timeout == 0)
        return;

      goto update_timeout;
    }

    have_signals = 0;
    nevents = 0;

    assert(loop->watchers != NULL);
    loop->watchers[loop->nwatchers] = (void*) kq->events;
    loop->watchers[loop->nwatchers + 1] = (void*) (uintptr_t) nfds;

    for (i = 0; i < nfds; i++) {
      ev = kq->events + i;

      /* Taken back by uv__platform_invalidate_fd(). */
      if (ev->type != KEVENT_POLL)
        continue;

      fd = (int) ev->id.raw[0];
      assert(fd >= 0);

      if ((unsigned int) fd >= kq->nfds || kq->gen[fd] != (uint32_t) ev->ptr) {
        /* A registration replaced or forgotten since: not about the file
         * that has the number now.  If it is still in the queue (its
         * file open elsewhere), remove it, or it comes back for ever. */
        if (!(ev->ret_flags & KEVENT_RET_BROKEN))
          uv__kevent_entry(uv__kevent_push(&kq->remove), fd, 0, ev->ptr);
        continue;
      }

      if (ev->ret_flags & KEVENT_RET_BROKEN) {
        /* Gone from the queue.  -EBADF: its file was closed under the
         * watcher, which epoll forgets silently too.  Anything else (a
         * wait queue gone before its file) is reported as a hangup. */
        kq->gen[fd] = 0;
        kq->mask[fd] = 0;
        if (-(int) ev->ret_data[1] == EBADF)
          continue;
        revents = POLLERR | POLLHUP;
      } else {
        revents = ev->ret_data[0];
      }

      w = loop->watchers[fd];

      if (w == NULL) {
        /* A descriptor no longer watched: remove its registration. */
        uv__kevent_forget(kq, fd);
        continue;
      }

      /* Only the events the watcher wants now: an earlier callback of
       * this round may have stopped some of them. */
      revents &= w->pevents | POLLERR | POLLHUP;

      /* An error or hangup alone: hand the watcher the events it waits
       * for, so that its read or write finds the error, as the epoll
       * backend does. */
      if (revents == POLLERR || revents == POLLHUP)
        revents |=
          w->pevents & (POLLIN | POLLOUT | UV__POLLRDHUP | UV__POLLPRI);

      if (revents != 0) {
        /* Signal watchers run last, as with epoll: child process
         * watchers depend on them. */
        if (w == &loop->signal_io_watcher) {
          have_signals = 1;
        } else {
          uv__metrics_update_idle_time(loop);
          w->cb(loop, w, revents);
        }

        nevents++;
      }
    }

    if (reset_timeout != 0) {
      timeout = user_timeout;
      reset_timeout = 0;
    }

    if (have_signals != 0) {
      uv__metrics_update_idle_time(loop);
      loop->signal_io_watcher.cb(loop, &loop->signal_io_watcher, POLLIN);
    }

    loop->watchers[loop->nwatchers] = NULL;
    loop->watchers[loop->nwatchers + 1] = NULL;

    if (have_signals != 0)
      return;  /* The loop should cycle now, as with epoll. */

    if (nevents != 0) {
      if (nfds == ARRAY_SIZE(kq->events) && --count != 0) {
        /* Take the rest without blocking. */
        uv__kevent_flush(loop, kq);
        timeout = 0;
        continue;
      }
      return;
    }

    if (timeout == 0)
      return;

    /* Nothing for the watchers (stale or stopped registrations only):
     * apply the removals before waiting again. */
    uv__kevent_flush(loop, kq);

    if (timeout == -1)
      continue;

update_timeout:
    assert(timeout > 0);

    real_timeout -= (loop->time - base);
    if (real_timeout <= 0)
      return;

    timeout = real_timeout;
  }
}
