/* libaio: Linux native AIO (io_submit/io_getevents) through libaio, iodepth I/Os in flight.
 * queue() only prepares an iocb; commit() submits everything prepared since the last commit;
 * getevents() reaps into an array that event() reads. Really asynchronous only with O_DIRECT
 * (direct=1), as with fio: buffered AIO completes inside io_submit. */
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>

#include "ioengine.h"

struct libaio_data {
	io_context_t ctx;
	struct iocb *iocbs;	 /* one per io_u slot (io_u.index) */
	struct iocb **pending;	 /* prepared, not yet submitted, in order */
	struct io_event *events; /* the last getevents() batch */
	unsigned npending, depth;
};

static int libaio_init(struct ioengine_thread *t)
{
	struct libaio_data *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	d->depth = t->iodepth;
	d->iocbs = calloc(d->depth, sizeof(*d->iocbs));
	d->pending = calloc(d->depth, sizeof(*d->pending));
	d->events = calloc(d->depth, sizeof(*d->events));
	if (!d->iocbs || !d->pending || !d->events) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = io_setup((int)d->depth, &d->ctx); /* returns -errno */
	if (ret < 0)
		goto fail;
	t->priv = d;
	return 0;
fail:
	free(d->iocbs);
	free(d->pending);
	free(d->events);
	free(d);
	return ret;
}

static void libaio_cleanup(struct ioengine_thread *t)
{
	struct libaio_data *d = t->priv;

	if (!d)
		return;
	io_destroy(d->ctx);
	free(d->iocbs);
	free(d->pending);
	free(d->events);
	free(d);
	t->priv = NULL;
}

static enum ioengine_q libaio_queue(struct ioengine_thread *t, struct io_u *io)
{
	struct libaio_data *d = t->priv;
	struct iocb *cb = &d->iocbs[io->index];

	if (d->npending == d->depth)
		return IOENGINE_Q_BUSY;
	if (io->ddir == IO_DDIR_READ)
		io_prep_pread(cb, t->file->fd, io->buf, io->len, (long long)io->offset);
	else if (io->ddir == IO_DDIR_WRITE)
		io_prep_pwrite(cb, t->file->fd, io->buf, io->len, (long long)io->offset);
	else {
		io->result = -EOPNOTSUPP;
		return IOENGINE_Q_COMPLETED;
	}
	cb->data = io;
	d->pending[d->npending++] = cb;
	return IOENGINE_Q_QUEUED;
}

static int libaio_commit(struct ioengine_thread *t)
{
	struct libaio_data *d = t->priv;
	unsigned done = 0;

	while (done < d->npending) {
		int ret = io_submit(d->ctx, (long)(d->npending - done), d->pending + done);

		if (ret == -EINTR || ret == -EAGAIN)
			continue; /* the ring is bounded by iodepth: EAGAIN is transient */
		if (ret < 0)
			return ret;
		done += (unsigned)ret;
	}
	d->npending = 0;
	return 0;
}

static int libaio_getevents(struct ioengine_thread *t, unsigned min, unsigned max,
			    const struct timespec *timeout)
{
	struct libaio_data *d = t->priv;
	struct timespec ts, *tp = NULL;
	int ret;

	if (max > d->depth)
		max = d->depth;
	do {
		if (timeout) { /* io_getevents may modify it */
			ts = *timeout;
			tp = &ts;
		}
		ret = io_getevents(d->ctx, (long)min, (long)max, d->events, tp);
	} while (ret == -EINTR);
	return ret;
}

static struct io_u *libaio_event(struct ioengine_thread *t, unsigned i)
{
	struct libaio_data *d = t->priv;
	struct io_event *ev = &d->events[i];
	struct io_u *io = ev->data;

	/* res is bytes or -errno; res2 is unused by the block and file paths. */
	io->result = (ssize_t)(long)ev->res;
	return io;
}

const struct ioengine_ops ioengine_libaio = {
	.name = "libaio",
	.version = IOENGINE_VERSION,
	.flags = IOENGINE_RAWIO,
	.init = libaio_init,
	.cleanup = libaio_cleanup,
	.open_file = ioengine_generic_open,
	.close_file = ioengine_generic_close,
	.queue = libaio_queue,
	.commit = libaio_commit,
	.getevents = libaio_getevents,
	.event = libaio_event,
	.sync = ioengine_generic_sync,
	.datasync = ioengine_generic_datasync,
};
