/* psync: one pread(2)/pwrite(2) per I/O, completed inside queue(); iodepth is always 1. */
#include <errno.h>
#include <unistd.h>

#include "ioengine.h"

static enum ioengine_q psync_queue(struct ioengine_thread *t, struct io_u *io)
{
	int fd = t->file->fd;
	ssize_t n;

	do {
		if (io->ddir == IO_DDIR_READ)
			n = pread(fd, io->buf, io->len, (off_t)io->offset);
		else if (io->ddir == IO_DDIR_WRITE)
			n = pwrite(fd, io->buf, io->len, (off_t)io->offset);
		else
			n = -1, errno = EOPNOTSUPP;
	} while (n < 0 && errno == EINTR);
	io->result = n < 0 ? -errno : n;
	return IOENGINE_Q_COMPLETED;
}

const struct ioengine_ops ioengine_psync = {
	.name = "psync",
	.version = IOENGINE_VERSION,
	.flags = IOENGINE_SYNC | IOENGINE_RAWIO,
	.open_file = ioengine_generic_open,
	.close_file = ioengine_generic_close,
	.queue = psync_queue,
	.sync = ioengine_generic_sync,
	.datasync = ioengine_generic_datasync,
};
