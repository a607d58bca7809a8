/* newc cpio writer (see initramfs.h). */
#include "initramfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/util.h"

/* Entry paths relative to the staging directory, collected recursively. */
struct pathlist {
	char **v;
	size_t n;
};

static int collect(const char *staging, const char *rel, struct pathlist *pl, struct zb_error *err)
{
	char *dir = rel ? xasprintf("%s/%s", staging, rel) : xstrdup(staging);
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		error_sys(err, errno, "listing '%s'", dir);
		free(dir);
		return -1;
	}
	while ((de = readdir(d)) && rc == 0) {
		char *child;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		pl->v = xrealloc(pl->v, (pl->n + 1) * sizeof(*pl->v));
		pl->v[pl->n++] = child;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			rc = error_sys(err, errno, "inspecting '%s/%s'", dir, de->d_name);
		else if (S_ISDIR(st.st_mode))
			rc = collect(staging, child, pl, err);
	}
	closedir(d);
	free(dir);
	return rc;
}

/* Sort by path component: "a" < "a/b" < "a-b", so a directory always precedes its contents
 * (the kernel does not create missing parents) and stays next to them. */
static int cmp_path(const void *pa, const void *pb)
{
	const unsigned char *a = *(const unsigned char *const *)pa;
	const unsigned char *b = *(const unsigned char *const *)pb;

	for (; *a && *a == *b; a++, b++)
		;
	if (*a == *b)
		return 0;
	if (*a == '\0' || *a == '/')
		return -1; /* a parent, or a sibling of a parent, comes first */
	if (*b == '\0' || *b == '/')
		return 1;
	return *a < *b ? -1 : 1;
}

struct writer {
	FILE *f;
	const char *path;
	size_t bytes;
	unsigned ino;
};

static int put(struct writer *w, const void *buf, size_t len, struct zb_error *err)
{
	if (len && fwrite(buf, 1, len, w->f) != len)
		return error_sys(err, errno, "writing '%s'", w->path);
	w->bytes += len;
	return 0;
}

static int pad4(struct writer *w, struct zb_error *err)
{
	static const char zeros[4];

	return put(w, zeros, (4 - w->bytes % 4) % 4, err);
}

static int header(struct writer *w, const char *name, unsigned mode, unsigned nlink,
		  size_t filesize, unsigned rmaj, unsigned rmin, struct zb_error *err)
{
	char h[128];

	if (filesize > 0xffffffffu)
		return error_set(err, EFBIG, "'%s' is too large for a newc cpio archive", name);
	snprintf(h, sizeof(h), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 w->ino++, mode, 0u, 0u, nlink, (unsigned)INITRAMFS_MTIME, (unsigned)filesize, 0u,
		 0u, rmaj, rmin, (unsigned)(strlen(name) + 1), 0u);
	if (put(w, h, 110, err) < 0 || put(w, name, strlen(name) + 1, err) < 0)
		return -1;
	return pad4(w, err);
}

static int write_entry(struct writer *w, const char *staging, const char *rel, struct zb_error *err)
{
	char *full = xasprintf("%s/%s", staging, rel);
	struct stat st;
	int rc = -1;

	if (lstat(full, &st) < 0) {
		error_sys(err, errno, "inspecting '%s'", full);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = header(w, rel, S_IFDIR | (st.st_mode & 07777), 2, 0, 0, 0, err);
	} else if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(full, target, sizeof(target));

		if (n < 0 || n == (ssize_t)sizeof(target)) {
			error_sys(err, n < 0 ? errno : ENAMETOOLONG, "reading link '%s'", full);
			goto out;
		}
		if (header(w, rel, S_IFLNK | 0777, 1, (size_t)n, 0, 0, err) < 0 ||
		    put(w, target, (size_t)n, err) < 0)
			goto out;
		rc = pad4(w, err);
	} else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
		rc = header(w, rel, (st.st_mode & S_IFMT) | (st.st_mode & 07777), 1, 0,
			    major(st.st_rdev), minor(st.st_rdev), err);
	} else if (S_ISREG(st.st_mode)) {
		char buf[1 << 16];
		size_t left = (size_t)st.st_size;
		int fd = open(full, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			error_sys(err, errno, "opening '%s'", full);
			goto out;
		}
		if (header(w, rel, S_IFREG | (st.st_mode & 07777), 1, left, 0, 0, err) < 0) {
			close(fd);
			goto out;
		}
		while (left > 0) {
			ssize_t r = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				error_sys(err, r < 0 ? errno : EIO, "reading '%s' (changed size?)",
					  full);
				close(fd);
				goto out;
			}
			if (put(w, buf, (size_t)r, err) < 0) {
				close(fd);
				goto out;
			}
			left -= (size_t)r;
		}
		close(fd);
		rc = pad4(w, err);
	} else {
		error_set(err, EINVAL, "'%s': cannot put a socket or fifo in an initramfs", full);
	}
out:
	free(full);
	return rc;
}

int initramfs_write_dir(const char *staging, const char *out_path, struct initramfs_stats *stats,
			struct zb_error *err)
{
	struct pathlist pl = { NULL, 0 };
	struct writer w = { .path = out_path, .ino = 1 };
	int rc = -1;

	if (collect(staging, NULL, &pl, err) < 0)
		goto out;
	qsort(pl.v, pl.n, sizeof(*pl.v), cmp_path);
	w.f = fopen(out_path, "we");
	if (!w.f) {
		error_sys(err, errno, "creating '%s'", out_path);
		goto out;
	}
	for (size_t i = 0; i < pl.n; i++) {
		if (write_entry(&w, staging, pl.v[i], err) < 0)
			goto out;
	}
	if (header(&w, "TRAILER!!!", 0, 1, 0, 0, 0, err) < 0)
		goto out;
	if (fflush(w.f) != 0 || fsync(fileno(w.f)) < 0) {
		error_sys(err, errno, "writing '%s'", out_path);
		goto out;
	}
	if (stats) {
		stats->entries = pl.n;
		stats->bytes = w.bytes;
	}
	rc = 0;
out:
	if (w.f && fclose(w.f) != 0 && rc == 0)
		rc = error_sys(err, errno, "closing '%s'", out_path);
	for (size_t i = 0; i < pl.n; i++)
		free(pl.v[i]);
	free(pl.v);
	return rc;
}
