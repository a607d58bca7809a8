/* Directories held by a file descriptor (builder/core/outdir.h). */
#include "outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int outdir_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= NAME_MAX && strcmp(name, ".") && strcmp(name, "..") &&
	       !strchr(name, '/');
}

char *outdir_name_from(const char *text)
{
	size_t n = strnlen(text, 64);
	char *s;

	if (n == 0)
		return xstrdup("_");
	s = xmalloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == '_';

		s[i] = keep ? c : '_';
	}
	s[n] = '\0';
	if (s[0] == '.')
		s[0] = '_';
	return s;
}

/* An error about `name` in `d`, saying plainly when it was a symlink or not the kind wanted. */
static int name_error(struct zb_error *err, int e, const struct outdir *d, const char *name,
		      const char *doing)
{
	struct stat st;

	/* O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR */
	if (e == ENOTDIR && fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		e = ELOOP;
	if (e == ELOOP)
		return error_set(err, ELOOP, "'%s/%s' is a symlink: not following it", d->path,
				 name);
	return error_sys(err, e, "%s '%s/%s'", doing, d->path, name);
}

static int name_check(const struct outdir *d, const char *name, struct zb_error *err)
{
	if (!outdir_name_ok(name))
		return error_set(err, EINVAL, "'%s/%s': not a single file name", d->path, name);
	return 0;
}

/* mkdir `path`, which must not exist yet; its parents as mkdir -p (with the same mode). */
static int mkdir_new(const char *path, mode_t mode, struct zb_error *err)
{
	char *p = xstrdup(path), *slash;
	size_t n = strlen(p);
	int rc;

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	rc = mkdir(p, mode);
	if (rc < 0 && errno == ENOENT && (slash = strrchr(p, '/')) && slash != p) {
		*slash = '\0';
		rc = mkdir_p(p, mode, err);
		*slash = '/';
		if (rc < 0) {
			free(p);
			return -1;
		}
		rc = mkdir(p, mode);
	}
	if (rc < 0)
		rc = errno == EEXIST ? error_set(err, EEXIST, "'%s' already exists", path)
				     : error_sys(err, errno, "creating directory '%s'", path);
	free(p);
	return rc;
}

int outdir_open(struct outdir *d, const char *path, int flags, mode_t mode, struct zb_error *err)
{
	int oflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;

	d->fd = -1;
	d->path = NULL;
	if (flags & OUTDIR_NEW) {
		if (mkdir_new(path, mode, err) < 0)
			return -1;
		oflags |= O_NOFOLLOW; /* we made it: nobody may have swapped it since */
	} else if ((flags & OUTDIR_CREATE) && mkdir_p(path, mode, err) < 0) {
		return -1;
	}
	d->fd = open(path, oflags);
	if (d->fd < 0)
		return error_sys(err, errno, "opening directory '%s'", path);
	d->path = xstrdup(path);
	return 0;
}

int outdir_sub(const struct outdir *parent, const char *name, int flags, mode_t mode,
	       struct outdir *out, struct zb_error *err)
{
	out->fd = -1;
	out->path = NULL;
	if (name_check(parent, name, err) < 0)
		return -1;
	if ((flags & (OUTDIR_CREATE | OUTDIR_NEW)) && mkdirat(parent->fd, name, mode) < 0 &&
	    (errno != EEXIST || (flags & OUTDIR_NEW)))
		return name_error(err, errno, parent, name, "creating directory");
	out->fd = openat(parent->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (out->fd < 0)
		return name_error(err, errno, parent, name, "opening directory");
	out->path = xasprintf("%s/%s", parent->path, name);
	return 0;
}

void outdir_close(struct outdir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	d->fd = -1;
	d->path = NULL;
}

/* A fresh temporary beside `name`: ".NAME.tmp.<random>", created O_EXCL|O_NOFOLLOW so nothing
 * planted under any name can receive the write. */
static int tmp_create(const struct outdir *d, const char *name, mode_t mode, char **tmp,
		      struct zb_error *err)
{
	static uint64_t counter;

	for (int i = 0; i < 64; i++) {
		uint64_t r;
		char *t;
		int fd;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 32 ^
			    ++counter;
		t = xasprintf(".%.200s.tmp.%016llx", name, (unsigned long long)r);
		fd = openat(d->fd, t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0) {
			*tmp = t;
			return fd;
		}
		free(t);
		if (errno != EEXIST)
			return name_error(err, errno, d, name, "creating a temporary file for");
	}
	return error_set(err, EEXIST, "creating a temporary file for '%s/%s': every name taken",
			 d->path, name);
}

/* fsync and close the temporary, rename it to `name`, fsync the directory. Frees tmp. */
static int tmp_commit(const struct outdir *d, int fd, char *tmp, const char *name,
		      struct zb_error *err)
{
	int rc = 0;

	if (fsync(fd) < 0)
		rc = name_error(err, errno, d, tmp, "syncing");
	if (close(fd) < 0 && rc == 0)
		rc = name_error(err, errno, d, tmp, "closing");
	if (rc == 0 && renameat(d->fd, tmp, d->fd, name) < 0)
		rc = name_error(err, errno, d, name, "renaming a temporary file to");
	if (rc < 0)
		unlinkat(d->fd, tmp, 0);
	else
		fsync(d->fd); /* the rename itself durable; EINVAL on some file systems: harmless */
	free(tmp);
	return rc;
}

static void tmp_abandon(const struct outdir *d, int fd, char *tmp)
{
	close(fd);
	unlinkat(d->fd, tmp, 0);
	free(tmp);
}

/* Write `name` all or nothing: a fresh O_EXCL temporary that fill() writes, then fsync and rename
 * over `name`. fill returns < 0 with err set (naming the file) on failure. */
static int write_through_tmp(const struct outdir *d, const char *name, mode_t mode,
			     int (*fill)(int fd, const struct outdir *d, const char *name,
					 const void *arg, struct zb_error *err),
			     const void *arg, struct zb_error *err)
{
	char *tmp = NULL;
	int fd;

	if (name_check(d, name, err) < 0)
		return -1;
	fd = tmp_create(d, name, mode, &tmp, err);
	if (fd < 0)
		return -1;
	if (fill(fd, d, name, arg, err) < 0) {
		tmp_abandon(d, fd, tmp);
		return -1;
	}
	return tmp_commit(d, fd, tmp, name, err);
}

struct buffer {
	const void *buf;
	size_t len;
};

static int fill_buffer(int fd, const struct outdir *d, const char *name, const void *arg,
		       struct zb_error *err)
{
	const struct buffer *b = arg;

	if (write_all(fd, b->buf, b->len) < 0)
		return name_error(err, errno, d, name, "writing");
	return 0;
}

int outdir_write(const struct outdir *d, const char *name, const void *buf, size_t len, mode_t mode,
		 struct zb_error *err)
{
	struct buffer b = { buf, len };

	return write_through_tmp(d, name, mode, fill_buffer, &b, err);
}

struct source {
	int in;
	const char *what;
};

/* Copy everything the source descriptor holds. */
static int fill_copy(int fd, const struct outdir *d, const char *name, const void *arg,
		     struct zb_error *err)
{
	const struct source *src = arg;
	char buf[1 << 16];
	ssize_t r;

	while ((r = read(src->in, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return error_sys(err, errno, "reading '%s'", src->what);
		if (write_all(fd, buf, (size_t)r) < 0)
			return name_error(err, errno, d, name, "writing");
	}
	return 0;
}

int outdir_write_from(const struct outdir *d, const char *name, int in, const char *what,
		      mode_t mode, struct zb_error *err)
{
	struct source src = { in, what };

	return write_through_tmp(d, name, mode, fill_copy, &src, err);
}

int outdir_symlink(const struct outdir *d, const char *name, const char *target,
		   struct zb_error *err)
{
	struct stat st;

	if (name_check(d, name, err) < 0)
		return -1;
	if (!outdir_name_ok(target))
		return error_set(err, EINVAL, "linking '%s/%s': target '%s' is not one name",
				 d->path, name, target);
	/* only a symlink or nothing may be replaced: never a file or directory of someone's */
	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode))
		return name_error(err, EEXIST, d, name, "linking (not a symlink)");
	for (int i = 0; i < 64; i++) {
		uint64_t r;
		char *t;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 32 ^
			    (uint64_t)i;
		t = xasprintf(".%.200s.tmp.%016llx", name, (unsigned long long)r);
		if (symlinkat(target, d->fd, t) < 0) {
			int e = errno;

			free(t);
			if (e == EEXIST)
				continue;
			return name_error(err, e, d, name, "linking");
		}
		/* rename replaces a symlink at `name` itself, never what it points at */
		if (renameat(d->fd, t, d->fd, name) < 0) {
			int e = errno;

			unlinkat(d->fd, t, 0);
			free(t);
			return name_error(err, e, d, name, "linking");
		}
		free(t);
		fsync(d->fd);
		return 0;
	}
	return error_set(err, EEXIST, "linking '%s/%s': every temporary name taken", d->path, name);
}

int outdir_create(const struct outdir *d, const char *name, mode_t mode, struct zb_error *err)
{
	int fd;

	if (name_check(d, name, err) < 0)
		return -1;
	fd = openat(d->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return name_error(err, errno, d, name, "creating");
	return fd;
}

/* Before opening an existing `name`: a regular file, not a symlink (ELOOP) nor a FIFO or device
 * whose open alone could block or act (EINVAL). 1 when it is absent (errno ENOENT). */
static int precheck(const struct outdir *d, const char *name, struct stat *st, struct zb_error *err)
{
	if (name_check(d, name, err) < 0)
		return -1;
	if (fstatat(d->fd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 1;
		return name_error(err, errno, d, name, "inspecting");
	}
	if (S_ISLNK(st->st_mode))
		return name_error(err, ELOOP, d, name, "opening");
	if (!S_ISREG(st->st_mode))
		return error_set(err, EINVAL, "'%s/%s' is not a regular file", d->path, name);
	return 0;
}

/* After the open: still the regular file precheck() saw; O_NONBLOCK (which kept a FIFO swapped
 * in meanwhile from blocking the open) cleared. */
static int postcheck(const struct outdir *d, const char *name, int fd, const struct stat *before,
		     struct zb_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		name_error(err, errno, d, name, "inspecting");
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) ||
	    (before && (st.st_dev != before->st_dev || st.st_ino != before->st_ino))) {
		close(fd);
		return error_set(err, EINVAL, "'%s/%s' is not a regular file", d->path, name);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int outdir_open_append(const struct outdir *d, const char *name, int create, int rdwr, mode_t mode,
		       struct zb_error *err)
{
	int flags =
	    (rdwr ? O_RDWR : O_WRONLY) | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;
	int absent = precheck(d, name, &st, err), fd;

	if (absent < 0)
		return -1;
	if (absent && !create)
		return name_error(err, ENOENT, d, name, "opening");
	fd = openat(d->fd, name, flags | (absent ? O_CREAT | O_EXCL : 0), mode);
	if (fd < 0)
		return name_error(err, errno, d, name, "opening");
	return postcheck(d, name, fd, absent ? NULL : &st, err);
}

int outdir_open_read(const struct outdir *d, const char *name, struct zb_error *err)
{
	struct stat st;
	int absent = precheck(d, name, &st, err), fd;

	if (absent < 0)
		return -1;
	if (absent)
		return name_error(err, ENOENT, d, name, "opening");
	fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return name_error(err, errno, d, name, "opening");
	return postcheck(d, name, fd, &st, err);
}

int outdir_read(const struct outdir *d, const char *name, size_t max, char **out, size_t *len,
		struct zb_error *err)
{
	int fd = outdir_open_read(d, name, err), rc;
	char *what;

	if (fd < 0)
		return -1;
	what = xasprintf("%s/%s", d->path, name);
	rc = read_fd(fd, what, max, out, len, err);
	free(what);
	close(fd);
	return rc;
}

int outdir_link_or_copy(const struct outdir *src, const char *name, const struct outdir *dst,
			struct zb_error *err)
{
	struct stat st;
	int absent = precheck(src, name, &st, err), in, out, rc;
	char *what;

	if (absent < 0)
		return -1;
	if (absent)
		return name_error(err, ENOENT, src, name, "opening");
	if (name_check(dst, name, err) < 0)
		return -1;
	if (linkat(src->fd, name, dst->fd, name, 0) == 0)
		return 0;
	if (errno == EEXIST)
		return name_error(err, EEXIST, dst, name, "linking");
	in = outdir_open_read(src, name, err);
	if (in < 0)
		return -1;
	out = outdir_create(dst, name, st.st_mode & 0777, err);
	if (out < 0) {
		close(in);
		return -1;
	}
	what = xasprintf("%s/%s", src->path, name);
	rc = fill_copy(out, dst, name, &(struct source){ in, what }, err);
	free(what);
	close(in);
	if (close(out) < 0 && rc == 0)
		rc = name_error(err, errno, dst, name, "closing");
	return rc;
}

int outdir_remove(const struct outdir *d, const char *name, struct zb_error *err)
{
	if (name_check(d, name, err) < 0)
		return -1;
	return remove_tree_at(d->fd, name, err);
}
