/* Staging an initramfs tree from a root: paths resolved inside the root as if it were "/", each
 * copied with every symbolic link on its way (so merged-/usr and split layouts come out as they
 * are in the root), dynamic ELF programs with their loader and libraries (read from their ELF
 * headers), whole trees, and the skeleton an init needs. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"
#include "elf_deps.h"
#include "image_stage.h"

#define SYMLINK_MAX 40

/* --- paths inside a root ----------------------------------------------------------------- */

/* One existing component met by root_walk(). */
struct root_component {
	const char *request; /* the path being walked, as asked for */
	const char *path;    /* the component's in-root path, e.g. /usr/lib */
	const char *full;    /* the same on the host: ROOT/usr/lib */
	const struct stat *st;
	const char *target; /* a symbolic link's target, else NULL */
	const char *rest;   /* the part of the path still to walk */
};

/* Walk `path` inside `root` as if `root` were "/", one component at a time: "." and ".." are
 * taken lexically, symbolic links are followed (at most SYMLINK_MAX). visit() (if not NULL) sees
 * every component that exists, links included, before the walk goes on. Returns 0 with the
 * resolved in-root path in `out`, 1 when a component is missing (`out`: the resolved part and the
 * unresolved rest), or -1. */
static int root_walk(const char *root, const char *path,
		     int (*visit)(void *ctx, const struct root_component *c, struct zb_error *err),
		     void *ctx, char *out, size_t len, struct zb_error *err)
{
	char rest[2 * PATH_MAX], resolved[PATH_MAX] = "", full[2 * PATH_MAX];
	int links = 0;

	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
	for (char *p = rest;;) {
		char comp[NAME_MAX + 1], candidate[PATH_MAX], target[PATH_MAX], next[2 * PATH_MAX];
		struct root_component c = { .request = path, .path = candidate, .full = full };
		struct stat st;
		ssize_t t;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX)
			return error_set(err, ENAMETOOLONG, "'%s': a component is too long", path);
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(resolved, '/');

			if (slash)
				*slash = '\0';
			continue;
		}
		if (snprintf(candidate, sizeof(candidate), "%s/%s", resolved, comp) >=
		    (int)sizeof(candidate))
			return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
		snprintf(full, sizeof(full), "%s%s", root, candidate);
		if (lstat(full, &st) < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				return error_sys(err, errno, "inspecting '%s'", full);
			/* Missing: the rest is appended unresolved. */
			if (snprintf(out, len, "%s%s", candidate, p) >= (int)len)
				return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
			return 1;
		}
		c.st = &st;
		c.rest = p;
		if (!S_ISLNK(st.st_mode)) {
			if (visit && visit(ctx, &c, err) < 0)
				return -1;
			memcpy(resolved, candidate, sizeof(resolved));
			continue;
		}
		t = readlink(full, target, sizeof(target) - 1);
		if (t < 0)
			return error_sys(err, errno, "reading link '%s'", full);
		target[t] = '\0';
		c.target = target;
		if (visit && visit(ctx, &c, err) < 0)
			return -1;
		if (++links > SYMLINK_MAX)
			return error_set(err, ELOOP, "'%s': too many symbolic links", path);
		if (target[0] == '/')
			resolved[0] = '\0';
		if (snprintf(next, sizeof(next), "%s/%s", target, p) >= (int)sizeof(next))
			return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
		memcpy(rest, next, sizeof(rest));
		p = rest;
	}
	if (snprintf(out, len, "%s", resolved[0] ? resolved : "/") >= (int)len)
		return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
	return 0;
}

int root_resolve(const char *root, const char *path, char *out, size_t len, struct zb_error *err)
{
	return root_walk(root, path, NULL, NULL, out, len, err);
}

/* --- staging: copying paths from the root, symlinks kept --------------------------------- */

void stager_release(struct stager *s)
{
	for (size_t i = 0; i < s->ndone; i++)
		free(s->done[i]);
	free(s->done);
	s->done = NULL;
	s->ndone = 0;
}

static int stager_seen(struct stager *s, const char *path)
{
	for (size_t i = 0; i < s->ndone; i++) {
		if (!strcmp(s->done[i], path))
			return 1;
	}
	s->done = xrealloc(s->done, (s->ndone + 1) * sizeof(*s->done));
	s->done[s->ndone++] = xstrdup(path);
	return 0;
}

/* root_walk()'s visitor for stage_path(): the same link, the directory with its mode, or a copy
 * of the file, in the staging tree. */
static int stage_component(void *ctx, const struct root_component *c, struct zb_error *err)
{
	struct stager *s = ctx;
	cleanup_free char *dst = xasprintf("%s%s", s->staging, c->path);

	if (c->target) {
		if (symlink(c->target, dst) < 0 && errno != EEXIST)
			return error_sys(err, errno, "creating link '%s'", dst);
	} else if (S_ISDIR(c->st->st_mode)) {
		if (mkdir(dst, c->st->st_mode & 07777) < 0 && errno != EEXIST)
			return error_sys(err, errno, "creating directory '%s'", dst);
	} else if (S_ISREG(c->st->st_mode)) {
		if (*c->rest && strspn(c->rest, "/") != strlen(c->rest))
			return error_set(err, ENOTDIR, "'%s': '%s' is not a directory", c->request,
					 c->path);
		if (!path_exists(dst) && copy_file(c->full, dst, err) < 0)
			return -1;
	} else {
		return error_set(err, EINVAL,
				 "'%s' in the root is not a file, directory or symlink", c->path);
	}
	return 0;
}

int stage_path(struct stager *s, const char *path, char *resolved, size_t len, struct zb_error *err)
{
	return root_walk(s->root, path, stage_component, s, resolved, len, err);
}

static const char *const lib_dirs[] = { "/lib/x86_64-linux-gnu",
					"/usr/lib/x86_64-linux-gnu",
					"/lib64",
					"/usr/lib64",
					"/lib",
					"/usr/lib" };

/* Find a DT_NEEDED library the way the dynamic loader would: RUNPATH (with $ORIGIN), then the
 * system directories. */
static int stage_library(struct stager *s, const char *needer, const struct elf_deps *d,
			 const char *name, struct zb_error *err)
{
	char origin[PATH_MAX], probe[2 * PATH_MAX + NAME_MAX], res[PATH_MAX];
	char *slash;
	int rc;

	if (strchr(name, '/'))
		return stage_file(s, name, 0, err);
	snprintf(origin, sizeof(origin), "%s", needer);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < d->nrunpath + ARRAY_SIZE(lib_dirs); i++) {
		const char *dir = i < d->nrunpath ? d->runpath[i] : lib_dirs[i - d->nrunpath];
		char expanded[PATH_MAX];

		if (!strncmp(dir, "$ORIGIN", 7))
			snprintf(expanded, sizeof(expanded), "%s%s", origin, dir + 7);
		else if (!strncmp(dir, "${ORIGIN}", 9))
			snprintf(expanded, sizeof(expanded), "%s%s", origin, dir + 9);
		else
			snprintf(expanded, sizeof(expanded), "%s", dir);
		snprintf(probe, sizeof(probe), "%s/%s", expanded, name);
		rc = root_resolve(s->root, probe, res, sizeof(res), err);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return stage_file(s, probe, 0, err);
	}
	return error_set(err, ENOENT, "'%s' needs '%s', which is not in the root", needer, name);
}

int stage_file(struct stager *s, const char *path, int optional, struct zb_error *err)
{
	char resolved[PATH_MAX], full[2 * PATH_MAX];
	struct elf_deps d;
	struct stat st;
	int rc = stage_path(s, path, resolved, sizeof(resolved), err);

	if (rc < 0)
		return error_wrap(err, "copying '%s'", path);
	if (rc > 0) {
		if (optional) {
			build_log(s->b, "optional '%s' is not in the root: skipped", path);
			return 0;
		}
		return error_set(err, ENOENT, "'%s' is not in the root", path);
	}
	snprintf(full, sizeof(full), "%s%s", s->root, resolved);
	if (stat(full, &st) < 0 || !S_ISREG(st.st_mode) || stager_seen(s, resolved))
		return 0;
	rc = elf_read_deps(full, &d, err);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return 0;
	rc = 0;
	if (d.interp)
		rc = stage_file(s, d.interp, 0, err);
	for (size_t i = 0; i < d.nneeded && rc == 0; i++)
		rc = stage_library(s, resolved, &d, d.needed[i], err);
	elf_deps_release(&d);
	return rc;
}

static int json_has(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach (arr, i, v) {
		if (!strcmp(json_string_value(v), s))
			return 1;
	}
	return 0;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int stage_tree(struct stager *s, const char *path, json_t *exclude, struct zb_error *err)
{
	char resolved[PATH_MAX], full[2 * PATH_MAX];
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *dir;
	int rc;

	rc = stage_path(s, path, resolved, sizeof(resolved), err);
	if (rc != 0)
		return rc < 0 ? error_wrap(err, "copying '%s'", path)
			      : error_set(err, ENOENT, "tree '%s' is not in the root", path);
	snprintf(full, sizeof(full), "%s%s", s->root, resolved);
	dir = opendir(full);
	if (!dir)
		return error_sys(err, errno, "listing '%s'", full);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), cmp_cstr);
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *child = xasprintf("%s/%s", path, names[i]);
		char *child_full = xasprintf("%s%s/%s", s->root, resolved, names[i]);
		struct stat st;

		if (rc == 0 && !json_has(exclude, child)) {
			if (lstat(child_full, &st) == 0 && S_ISDIR(st.st_mode))
				rc = stage_tree(s, child, exclude, err);
			else
				rc = stage_file(s, child, 0, err);
		}
		free(child);
		free(child_full);
		free(names[i]);
	}
	free(names);
	return rc;
}

int stage_host_file(struct stager *s, const char *src, const char *path, mode_t mode,
		    struct zb_error *err)
{
	char resolved[PATH_MAX], *dst, *parent, *slash;
	int rc;

	if (root_resolve(s->staging, path, resolved, sizeof(resolved), err) < 0)
		return -1;
	dst = xasprintf("%s%s", s->staging, resolved);
	parent = xstrdup(dst);
	slash = strrchr(parent, '/');
	*slash = '\0';
	rc = mkdir_p(parent, 0755, err);
	if (rc == 0)
		rc = copy_file(src, dst, err);
	if (rc == 0 && chmod(dst, mode) < 0)
		rc = error_sys(err, errno, "chmod '%s'", dst);
	free(parent);
	free(dst);
	return rc;
}

int stage_skeleton(struct stager *s, struct zb_error *err)
{
	static const struct {
		const char *path;
		mode_t mode;
	} dirs[] = {
		{ "/dev", 0755 },  { "/proc", 0555 },	  { "/sys", 0555 },  { "/run", 0755 },
		{ "/tmp", 01777 }, { "/mnt", 0755 },	  { "/etc", 0755 },  { "/etc/zfs", 0755 },
		{ "/var", 0755 },  { "/var/tmp", 01777 }, { "/root", 0700 },
	};
	char resolved[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		cleanup_free char *p = NULL;

		if (root_resolve(s->staging, dirs[i].path, resolved, sizeof(resolved), err) < 0)
			return -1;
		p = xasprintf("%s%s", s->staging, resolved);
		if ((mkdir(p, dirs[i].mode) < 0 && errno != EEXIST) || chmod(p, dirs[i].mode) < 0)
			return error_sys(err, errno, "creating '%s'", p);
	}
	{
		/* The kernel opens /dev/console for /init's stdio before anything mounts
		 * devtmpfs. */
		cleanup_free char *console = xasprintf("%s/dev/console", s->staging);
		cleanup_free char *mtab = xasprintf("%s/etc/mtab", s->staging);

		if (mknod(console, S_IFCHR | 0600, makedev(5, 1)) < 0 && errno != EEXIST)
			return error_sys(err, errno, "creating '%s'", console);
		if (symlink("../proc/self/mounts", mtab) < 0 && errno != EEXIST)
			return error_sys(err, errno, "creating '%s'", mtab);
	}
	return 0;
}
