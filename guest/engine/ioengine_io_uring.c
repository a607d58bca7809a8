/* io_uring through liburing: queue() fills a submission queue entry, commit() submits them all
 * with one io_uring_enter, getevents() waits for completions and copies a batch of CQEs out so
 * event() can read them; the batch is released from the ring at the next getevents().
 *
 * The ring is set up as fio 3.33 sets up its own (engines/io_uring.c): a completion queue of
 * iodepth entries, COOP_TASKRUN, and SINGLE_ISSUER|DEFER_TASKRUN, each dropped when the kernel
 * refuses it. Without them (liburing's defaults) every completion queues its task work with a
 * signal-style notification that interrupts the worker (or wakes it) once per I/O; with
 * DEFER_TASKRUN the completions wait until the worker enters the kernel to get events. So
 * commit() enters with IORING_ENTER_GETEVENTS, as fio's commit does: the one io_uring_enter per
 * submission also posts what has completed, and getevents() mostly finds it in the ring
 * without a system call (docs/engine.md, "Cost per I/O against fio"). */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

#include "ioengine.h"

struct uring_data {
	struct io_uring ring;
	struct io_uring_cqe **cqes; /* the last batch */
	unsigned nseen;		    /* CQEs of the last batch still to advance past */
	unsigned depth;
};

/* fio's ring flags, most first; each refused one (EINVAL on an older kernel) is dropped. The
 * worker that sets the ring up is the only one that submits to it (SINGLE_ISSUER). 0 or -errno. */
static int uring_setup(struct uring_data *d)
{
	static const unsigned tries[] = {
		IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
		    IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_CQSIZE,
	};
	int ret = -EINVAL;

	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]) && ret == -EINVAL; i++) {
		struct io_uring_params p = { .flags = tries[i], .cq_entries = d->depth };

		ret = io_uring_queue_init_params(d->depth, &d->ring, &p); /* -errno */
	}
	return ret;
}

static int uring_init(struct ioengine_thread *t)
{
	struct uring_data *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	d->depth = t->iodepth;
	d->cqes = calloc(d->depth, sizeof(*d->cqes));
	if (!d->cqes) {
		free(d);
		return -ENOMEM;
	}
	ret = uring_setup(d);
	if (ret < 0) {
		free(d->cqes);
		free(d);
		return ret;
	}
	t->priv = d;
	return 0;
}

static void uring_cleanup(struct ioengine_thread *t)
{
	struct uring_data *d = t->priv;

	if (!d)
		return;
	io_uring_queue_exit(&d->ring);
	free(d->cqes);
	free(d);
	t->priv = NULL;
}

static enum ioengine_q uring_queue(struct ioengine_thread *t, struct io_u *io)
{
	struct uring_data *d = t->priv;
	struct io_uring_sqe *sqe;

	if (io->ddir != IO_DDIR_READ && io->ddir != IO_DDIR_WRITE) {
		io->result = -EOPNOTSUPP;
		return IOENGINE_Q_COMPLETED;
	}
	sqe = io_uring_get_sqe(&d->ring);
	if (!sqe)
		return IOENGINE_Q_BUSY;
	if (io->ddir == IO_DDIR_READ)
		io_uring_prep_read(sqe, t->file->fd, io->buf, (unsigned)io->len, io->offset);
	else
		io_uring_prep_write(sqe, t->file->fd, io->buf, (unsigned)io->len, io->offset);
	io_uring_sqe_set_data(sqe, io);
	return IOENGINE_Q_QUEUED;
}

static int uring_commit(struct ioengine_thread *t)
{
	struct uring_data *d = t->priv;
	int ret;

	/* one io_uring_enter, with GETEVENTS so deferred completions are posted (see the top) */
	do
		ret = io_uring_submit_and_get_events(&d->ring);
	while (ret == -EINTR || ret == -EAGAIN);
	return ret < 0 ? ret : 0;
}

static int uring_getevents(struct ioengine_thread *t, unsigned min, unsigned max,
			   const struct timespec *timeout)
{
	struct uring_data *d = t->priv;
	struct __kernel_timespec kts, *kp = NULL;
	struct io_uring_cqe *cqe;
	unsigned n;
	int ret;

	io_uring_cq_advance(&d->ring, d->nseen);
	d->nseen = 0;
	if (max > d->depth)
		max = d->depth;
	if (timeout) {
		kts.tv_sec = timeout->tv_sec;
		kts.tv_nsec = timeout->tv_nsec;
		kp = &kts;
	}
	n = io_uring_peek_batch_cqe(&d->ring, d->cqes, max);
	if (n < min) {
		ret = io_uring_wait_cqes(&d->ring, &cqe, min, kp, NULL);
		if (ret < 0 && ret != -ETIME && ret != -EINTR)
			return ret;
		n = io_uring_peek_batch_cqe(&d->ring, d->cqes, max);
	}
	d->nseen = n;
	return (int)n;
}

static struct io_u *uring_event(struct ioengine_thread *t, unsigned i)
{
	struct uring_data *d = t->priv;
	struct io_u *io = io_uring_cqe_get_data(d->cqes[i]);

	io->result = d->cqes[i]->res;
	return io;
}

const struct ioengine_ops ioengine_io_uring = {
	.name = "io_uring",
	.version = IOENGINE_VERSION,
	.flags = IOENGINE_RAWIO,
	.init = uring_init,
	.cleanup = uring_cleanup,
	.open_file = ioengine_generic_open,
	.close_file = ioengine_generic_close,
	.queue = uring_queue,
	.commit = uring_commit,
	.getevents = uring_getevents,
	.event = uring_event,
	.sync = ioengine_generic_sync,
	.datasync = ioengine_generic_datasync,
};
