// SPDX-License-Identifier: GPL-2.0
/*
 * kevent: KEVENT_PIPE, data and room in pipes and FIFOs.
 *
 * id.raw[0] holds a descriptor of a pipe or a FIFO, event
 * KEVENT_SOCKET_RECV (data to read), KEVENT_SOCKET_SEND (room to write)
 * or both.  The kevents of a pipe hang off a storage that the first ADD
 * allocates and pipe_inode_info.kevent points to, and the kevent holds
 * no reference to the pipe or its files: it watches the pipe until the
 * pipe goes away, when free_pipe_info() reports it broken with -EBADF.
 *
 * fs/pipe.c and fs/splice.c notify through pipe_kevent_notify() where
 * they wake the pipe's own waiters.  Readiness is decided here from the
 * ring's indexes and the counts of readers and writers, as pipe_poll()
 * decides it.  A pipe without writers breaks its RECV kevents once it is
 * empty, one without readers its SEND kevents at once (-EPIPE), as
 * read() returns 0 and write() fails with EPIPE then.  A pipe with both
 * is decided once per notification, for all its kevents.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/pipe_fs_i.h>

#include "kevent.h"
#include "sources.h"

#define KEVENT_PIPE_EVENTS	(KEVENT_SOCKET_RECV | KEVENT_SOCKET_SEND)

/**
 * struct kevent_pipe - the per-kevent data of KEVENT_PIPE
 * @pipe: the pipe; valid while the kevent is attached, under the
 *	storage lock
 * @w_counter: the f_version of the file the kevent was added with.  A
 *	FIFO opened for reading before any writer holds the pipe's writer
 *	count there, so that, as for poll(), the absence of writers breaks
 *	RECV only once a writer has come and gone.
 */
struct kevent_pipe {
	struct pipe_inode_info *pipe;
	unsigned int w_counter;
};

/*
 * Which of @asked, KEVENT_SOCKET_RECV and KEVENT_SOCKET_SEND, @pipe's
 * ring has: data, room.
 *
 * The ring's indexes are read without the pipe's locks, as pipe_poll()
 * reads them: each change of the pipe notifies after it, and that
 * notification, which finds a kevent attached once its check may run,
 * reads the indexes again.  F_SETPIPE_SZ renumbers both indexes at once,
 * so a read that overlaps it may pair an old one with a new one; it
 * notifies RECV and SEND afterwards, which decides every kevent of the
 * pipe anew.
 */
static u32 kevent_pipe_ready(const struct pipe_inode_info *pipe, u32 asked)
{
	unsigned int head = READ_ONCE(pipe->head);
	unsigned int tail = READ_ONCE(pipe->tail);
	u32 ready = 0;

	if ((asked & KEVENT_SOCKET_RECV) && !pipe_empty(head, tail))
		ready |= KEVENT_SOCKET_RECV;
	if ((asked & KEVENT_SOCKET_SEND) &&
	    !pipe_full(head, tail, READ_ONCE(pipe->max_usage)))
		ready |= KEVENT_SOCKET_SEND;
	return ready;
}

/*
 * Is @k ready?  Under the storage lock, which keeps the pipe alive, or
 * at the ADD, under the reference to the pipe's file.
 */
static int kevent_pipe_state(struct kevent *k)
{
	const struct kevent_pipe *p = kevent_priv(k);
	struct pipe_inode_info *pipe = p->pipe;
	u32 event = READ_ONCE(k->uk.event);
	u32 ready = kevent_pipe_ready(pipe, event);

	if ((event & KEVENT_SOCKET_RECV) && !(ready & KEVENT_SOCKET_RECV) &&
	    !READ_ONCE(pipe->writers) &&
	    READ_ONCE(pipe->w_counter) != p->w_counter)
		return -EPIPE;
	if ((event & KEVENT_SOCKET_SEND) && !READ_ONCE(pipe->readers))
		return -EPIPE;
	return !!ready;
}

static int kevent_pipe_event(struct kevent *k, void *hint)
{
	return kevent_pipe_state(k);
}

static int kevent_pipe_check(struct kevent *k)
{
	return kevent_storage_call(k, kevent_pipe_state);
}

static int kevent_pipe_validate(const struct ukevent *uk)
{
	if (!uk->event || (uk->event & ~KEVENT_PIPE_EVENTS))
		return -EINVAL;
	return 0;
}

/*
 * Whoever changes the pipe looks for kevents afterwards
 * (pipe_kevent_notify()), and takes the storage lock if there is one:
 * attaching under that lock means it either sees this kevent or the
 * check that follows sees the change.  Only the first kevent of a pipe
 * also takes the pipe's mutex, under which a change tests the storage
 * pointer.  That mutex may be held for long, by a splice into a full
 * socket: if it is busy, the first kevent waits for it in
 * kevent_pipe_prepare(), without the queue's mutex (LOCKING in
 * kevent.c), and the ADD runs again.
 */
static int kevent_pipe_attach(struct pipe_inode_info *pipe, struct kevent *k)
{
	/*
	 * Acquire: what the pipe's mutex ordered before the first kevent
	 * set the pointer is seen by the check of a kevent that did not
	 * take the mutex.
	 */
	struct kevent_storage *st = smp_load_acquire(&pipe->kevent);
	int err;

	if (st)
		return kevent_storage_attach(st, k);
	if (!mutex_trylock(&pipe->mutex))
		return -EAGAIN;
	st = kevent_storage_get(&pipe->kevent);
	err = st ? kevent_storage_attach(st, k) : -ENOMEM;
	pipe_unlock(pipe);
	return err;
}

/* The storage of a busy pipe, made once its mutex is free, killably. */
static int kevent_pipe_prepare(const struct ukevent *uk)
{
	struct fd f = fdget(uk->id.raw[0]);
	struct pipe_inode_info *pipe;
	int err = 0;

	/* Gone meanwhile: the ADD, run again, says what is wrong. */
	if (!f.file)
		return 0;
	pipe = get_pipe_info(f.file, true);
	if (pipe && !READ_ONCE(pipe->kevent)) {
		if (mutex_lock_killable(&pipe->mutex)) {
			err = -EINTR;
		} else {
			if (!kevent_storage_get(&pipe->kevent))
				err = -ENOMEM;
			pipe_unlock(pipe);
		}
	}
	fdput(f);
	return err;
}

static int kevent_pipe_enqueue(struct kevent *k)
{
	struct kevent_pipe *p = kevent_priv(k);
	struct fd f = fdget(k->uk.id.raw[0]);
	struct pipe_inode_info *pipe;
	int err = 0;

	/* No reference is kept, so none is taken where the table is ours. */
	if (!f.file)
		return -EBADF;
	/*
	 * As for splice, notification pipes are refused: their data come
	 * from post_one_notification(), which tells no kevent.
	 */
	pipe = get_pipe_info(f.file, true);
	if (!pipe) {
		err = -EINVAL;
		goto out;
	}
	p->pipe = pipe;
	p->w_counter = f.file->f_version;

	err = kevent_pipe_attach(pipe, k);
	if (err)
		goto out;
	/*
	 * A pipe broken already is reported as the entry's error.  The
	 * file's reference keeps the pipe alive: no need of the storage
	 * lock, as kevent_pipe_check() takes it.
	 */
	err = kevent_pipe_state(k);
	if (err < 0)
		kevent_storage_detach(k);
out:
	fdput(f);
	return err;
}

/**
 * kevent_pipe_notify - a watched pipe changed
 * @pipe: the pipe
 * @event: KEVENT_SOCKET_RECV if data were added, KEVENT_SOCKET_SEND if
 *	data were consumed or room made, both if the last reader or writer
 *	went away
 *
 * Called by pipe_kevent_notify() for a pipe that kevents watch, from
 * process context, with or without pipe->mutex held.
 */
void kevent_pipe_notify(struct pipe_inode_info *pipe, u32 event)
{
	struct kevent_storage *st = pipe->kevent;
	u32 ready;

	/* The read that empties a pipe without writers breaks RECV. */
	if ((event & KEVENT_SOCKET_SEND) && !READ_ONCE(pipe->writers) &&
	    pipe_empty(READ_ONCE(pipe->head), READ_ONCE(pipe->tail)))
		event |= KEVENT_SOCKET_RECV;
	if (!kevent_storage_asked(st, event))
		return;
	/*
	 * With readers and writers no kevent of the pipe is broken, and
	 * what is ready is the same for all: decided once, not by each.
	 */
	if (READ_ONCE(pipe->readers) && READ_ONCE(pipe->writers)) {
		ready = kevent_pipe_ready(pipe, KEVENT_PIPE_EVENTS);
		__kevent_storage_notify_ready(st, event, ready);
	} else {
		__kevent_storage_notify(st, event, NULL);
	}
}

/**
 * kevent_pipe_release - a watched pipe goes away
 * @pipe: the pipe, from free_pipe_info()
 *
 * Each kevent watching @pipe is reported broken, once, and detached.
 */
void kevent_pipe_release(struct pipe_inode_info *pipe)
{
	kevent_storage_release(pipe->kevent, -EBADF);
}

const struct kevent_callbacks kevent_pipe_callbacks = {
	.validate	= kevent_pipe_validate,
	.enqueue	= kevent_pipe_enqueue,
	.prepare	= kevent_pipe_prepare,
	.dequeue	= kevent_storage_detach,
	.event		= kevent_pipe_event,
	.check		= kevent_pipe_check,
	.priv_size	= sizeof(struct kevent_pipe),
	.name		= "kevent_pipe",
};
