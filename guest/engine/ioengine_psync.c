/* psync: one pread(2)/pwrite(2) per I/O, completed inside queue(); iodepth is always 1. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "ioengine.h"

static int psync_open(struct ioengine_thread *t, struct ioengine_file *f)
{
	f->fd = open(f->path, f->open_flags | O_CLOEXEC, 0644);
	return f->fd < 0 ? -errno : 0;
}

static int psync_close(struct ioengine_thread *t, struct ioengine_file *f)
{
	int ret = 0;

	if (f->fd >= 0 && close(f->fd) < 0)
		ret = -errno;
	f->fd = -1;
	return ret;
}

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

static int psync_sync(struct ioengine_thread *t, struct ioengine_file *f)
{
	return fsync(f->fd) < 0 ? -errno : 0;
}

const struct ioengine_ops ioengine_psync = {
    .name = "psync",
    .version = IOENGINE_VERSION,
    .flags = IOENGINE_SYNC | IOENGINE_RAWIO,
    .open_file = psync_open,
    .close_file = psync_close,
    .queue = psync_queue,
    .sync = psync_sync,
};
