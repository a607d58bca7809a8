/* I/O engines: how one thread of a job submits I/O. Each engine is a `const struct ioengine_ops`
 * (one file per engine, designated initialisers, optional hooks NULL) listed in the one static
 * registry in ioengines.c; ioengine_ops_check() validates a table before it is used.
 *
 * The workload runner (workload.c) owns files, buffers, offsets and timing; an engine only moves
 * bytes. Sync engines complete each I/O inside queue(); async engines (libaio, io_uring) return
 * IOENGINE_Q_QUEUED and hand completions back through commit/getevents/event. */
#ifndef ZB_ENGINE_IOENGINE_H
#define ZB_ENGINE_IOENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Bump when struct ioengine_ops changes shape; engines state the version they were written for. */
#define IOENGINE_VERSION 2

enum io_ddir {
	IO_DDIR_READ,
	IO_DDIR_WRITE,
	IO_DDIR_TRIM,
	IO_DDIR_COUNT,
};

/* One I/O unit: filled by the runner, completed by the engine. */
struct io_u {
	enum io_ddir ddir;
	uint64_t offset;
	void *buf;
	size_t len;
	ssize_t result;	     /* set on completion: bytes moved, or -errno */
	uint64_t start_ns;   /* monotonic time queue() was called (lat and slat start here) */
	uint64_t issue_ns;   /* when the kernel got it (after commit); clat starts here */
	uint64_t arrival_ns; /* rate_iops: the scheduled arrival (open-loop latency) */
	void *engine_data;   /* the engine's per-unit state */
	unsigned index;	     /* position in the thread's io_u array */
};

/* The file a thread works on. */
struct ioengine_file {
	const char *path;
	int fd;		/* -1 while closed */
	int open_flags; /* O_RDWR/O_RDONLY plus O_DIRECT/O_SYNC/O_DSYNC as the job asks */
};

/* Per-thread engine context. */
struct ioengine_thread {
	const struct ioengine_ops *ops;
	void *priv; /* set by init(), freed by cleanup() */
	unsigned iodepth;
	struct ioengine_file *file;
};

enum ioengine_q {
	IOENGINE_Q_COMPLETED, /* done inside queue(): io_u->result is set */
	IOENGINE_Q_QUEUED,    /* accepted; completes later through getevents()/event() */
	IOENGINE_Q_BUSY,      /* cannot take more now: reap completions, then retry */
};

enum ioengine_flags {
	IOENGINE_SYNC = 1 << 0,	   /* queue() always completes the I/O (no getevents/event) */
	IOENGINE_RAWIO = 1 << 1,   /* fine on block devices */
	IOENGINE_NOFSYNC = 1 << 2, /* has no meaningful fsync */
};

struct ioengine_ops {
	const char *name;
	int version; /* IOENGINE_VERSION */
	unsigned flags;
	/* Per thread, before any file is opened / after the last is closed. Optional. 0 or -errno.
	 */
	int (*init)(struct ioengine_thread *t);
	void (*cleanup)(struct ioengine_thread *t);
	/* Open f->path with f->open_flags into f->fd; close it. Required. 0 or -errno. */
	int (*open_file)(struct ioengine_thread *t, struct ioengine_file *f);
	int (*close_file)(struct ioengine_thread *t, struct ioengine_file *f);
	/* Submit one I/O. Required. See enum ioengine_q. */
	enum ioengine_q (*queue)(struct ioengine_thread *t, struct io_u *io);
	/* Async engines only (NULL for IOENGINE_SYNC): push queued I/Os to the kernel; wait for
	 * between min and max completions (timeout NULL: forever), returning how many or -errno;
	 * then event(i) returns the i-th completed io_u with its result set. */
	int (*commit)(struct ioengine_thread *t);
	int (*getevents)(struct ioengine_thread *t, unsigned min, unsigned max,
			 const struct timespec *timeout);
	struct io_u *(*event)(struct ioengine_thread *t, unsigned i);
	/* Make written data durable (fsync). Required. 0 or -errno. Called with nothing in
	 * flight. */
	int (*sync)(struct ioengine_thread *t, struct ioengine_file *f);
	/* fdatasync. Optional: NULL falls back to sync. */
	int (*datasync)(struct ioengine_thread *t, struct ioengine_file *f);
};

/* open(2)/close(2)/fsync(2)/fdatasync(2) of f->path, for engines that need nothing more. */
int ioengine_generic_open(struct ioengine_thread *t, struct ioengine_file *f);
int ioengine_generic_close(struct ioengine_thread *t, struct ioengine_file *f);
int ioengine_generic_sync(struct ioengine_thread *t, struct ioengine_file *f);
int ioengine_generic_datasync(struct ioengine_thread *t, struct ioengine_file *f);

/* The engine called `name`, or NULL. Only tables that pass ioengine_ops_check() are returned. */
const struct ioengine_ops *ioengine_find(const char *name);
/* "psync, ..." for messages and --version. */
const char *ioengine_names(void);
/* 0 if the table is usable, else -1 with the reason in msg. */
int ioengine_ops_check(const struct ioengine_ops *ops, char *msg, size_t len);

extern const struct ioengine_ops ioengine_psync;
extern const struct ioengine_ops ioengine_libaio;
extern const struct ioengine_ops ioengine_io_uring;

#endif
