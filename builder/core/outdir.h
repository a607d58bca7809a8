/* Directories held by a file descriptor: the one way zbench writes under an output or run
 * directory, and reads a run directory (docs/security.md, "Run directories").
 *
 * A run directory, or the directory a report goes to, may have been made by someone else: a
 * symlink planted in it must never redirect a write or a read. The directory the command line
 * names is trusted (its path is resolved as usual: `runs/latest` may be a symlink); below it
 * every file and subdirectory is opened relative to the directory's fd with O_NOFOLLOW, a name is
 * one component, a write goes to an O_EXCL temporary that is renamed into place, and only regular
 * files are read (without blocking on a FIFO or opening a device).
 */
#ifndef ZB_OUTDIR_H
#define ZB_OUTDIR_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct outdir {
	int fd;	    /* O_DIRECTORY; -1 when closed */
	char *path; /* for messages: the path as given, or PARENT/NAME */
};

enum {
	OUTDIR_CREATE = 1, /* create it (outdir_open: and its parents) when missing */
	OUTDIR_NEW = 2,	   /* it must not exist yet: create it (implies OUTDIR_CREATE) */
};

/* Open the directory at `path`, a path the command line chose (followed as usual). With
 * OUTDIR_NEW the last component is created here and opened with O_NOFOLLOW. */
int outdir_open(struct outdir *d, const char *path, int flags, mode_t mode, struct zb_error *err);
/* Open the subdirectory `name` of `parent`: one component, never a symlink (ELOOP, with a
 * message that says so). */
int outdir_sub(const struct outdir *parent, const char *name, int flags, mode_t mode,
	       struct outdir *out, struct zb_error *err);
void outdir_close(struct outdir *d);

/* `name` is one component zbench may open or create: not empty, not "." or "..", no '/', at
 * most NAME_MAX bytes. */
int outdir_name_ok(const char *name);
/* A file name made of text from a record or manifest (an axis name): bytes outside
 * [A-Za-z0-9+-._] become '_', so does a leading '.', and it is cut at 64 bytes; "_" for "".
 * Always passes outdir_name_ok(). malloc'd. */
char *outdir_name_from(const char *text);

/* Write `len` bytes to `name` all or nothing: a fresh temporary (O_CREAT|O_EXCL|O_NOFOLLOW,
 * random name) written and fsync'd, then renamed over `name` (which replaces a symlink there
 * instead of following it), then the directory fsync'd. */
int outdir_write(const struct outdir *d, const char *name, const void *buf, size_t len, mode_t mode,
		 struct zb_error *err);
/* outdir_write() of what can be read from `in` (named `what` in messages). */
int outdir_write_from(const struct outdir *d, const char *name, int in, const char *what,
		      mode_t mode, struct zb_error *err);
/* Create `name`, which must not exist (O_EXCL: not even as a dangling symlink); a write fd. */
int outdir_create(const struct outdir *d, const char *name, mode_t mode, struct zb_error *err);
/* Open the regular file `name` with O_APPEND (read-write when `rdwr`), creating it when
 * `create`: never through a symlink. */
int outdir_open_append(const struct outdir *d, const char *name, int create, int rdwr, mode_t mode,
		       struct zb_error *err);
/* Open the regular file `name` for reading: not a symlink (ELOOP), not a FIFO, device or
 * directory (EINVAL); ENOENT when it is not there. */
int outdir_open_read(const struct outdir *d, const char *name, struct zb_error *err);
/* Read the regular file `name` whole (at most `max` bytes, else EFBIG), NUL-terminated. */
int outdir_read(const struct outdir *d, const char *name, size_t max, char **out, size_t *len,
		struct zb_error *err);
/* Hard-link the regular file `name` of `src` into `dst` under the same name, or copy it where
 * links do not work (another file system); a symlink or anything but a regular file is refused
 * (ELOOP, EINVAL). EEXIST when `dst` already has the name. */
int outdir_link_or_copy(const struct outdir *src, const char *name, const struct outdir *dst,
			struct zb_error *err);
/* Make `name` a symlink to `target` (one component: a sibling of `name`), replacing a symlink
 * there atomically (a temporary link renamed over it: the old link is never followed); EEXIST
 * when `name` is anything but a symlink. */
int outdir_symlink(const struct outdir *d, const char *name, const char *target,
		   struct zb_error *err);
/* Remove `name` (a file, a symlink itself, or a directory tree: see remove_tree_at()). */
int outdir_remove(const struct outdir *d, const char *name, struct zb_error *err);

#endif
