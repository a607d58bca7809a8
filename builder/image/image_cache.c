/* The image cache's one transaction, driving every flavor (image_flavor.h): load the input, key
 * it, find the entry; if it is missing, build what it needs first, lock, find it again (another
 * zbench may have built it meanwhile), build it in a temporary directory, rename it into place,
 * open it. Entries are content-addressed, so a hit costs a few hashes and one small file read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/log.h"
#include "core/util.h"
#include "image.h"
#include "image_flavor.h"
#include "image_stage.h"
#include "recipe_trust.h"

/* Every flavor, in probe order: an import takes a .qcow2 file, the cloud flavor a recipe with a
 * "base", the appliance every other recipe. */
static const struct image_flavor *const image_flavors[] = {
	&image_flavor_import,
	&image_flavor_cloud,
	&image_flavor_appliance,
};

int image_flavor_check(const struct image_flavor *f, struct zb_error *err)
{
	if (!f->name || !f->context || !f->probe || !f->load || !f->key || !f->build || !f->release)
		return error_set(err, EINVAL, "image flavor '%s' lacks a mandatory hook",
				 f->name ? f->name : "?");
	return 0;
}

/* Every table is checked once, before the first job uses one. */
static int flavors_check(struct zb_error *err)
{
	static int checked;

	for (size_t i = 0; !checked && i < ARRAY_SIZE(image_flavors); i++) {
		if (image_flavor_check(image_flavors[i], err) < 0)
			return -1;
	}
	checked = 1;
	return 0;
}

const struct image_flavor *image_flavor_of(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(image_flavors); i++) {
		if (image_flavors[i]->probe(path))
			return image_flavors[i];
	}
	return &image_flavor_appliance;
}

/* --- the transaction --------------------------------------------------------------------- */

static void job_release(struct image_job *job)
{
	if (job->state)
		job->flavor->release(job);
	free(job->state);
	free(job->cache);
	job->state = NULL;
	job->cache = NULL;
}

/* The entry `dir`, unless a rebuild was asked for: 0 (`out` filled), 1 (missing) or -1. */
static int job_find(const struct image_job *job, const char *dir, struct image *out,
		    struct zb_error *err)
{
	if (job->flags & (IMAGE_REBUILD | IMAGE_REBUILD_ROOT))
		return 1;
	return image_open(dir, job->hash, out, err);
}

/* A missing entry is built only when the caller asked for it, and as root if the flavor needs
 * root; otherwise the message says how to build it. */
static int job_may_build(const struct image_job *job, struct zb_error *err)
{
	if (!(job->flags & (IMAGE_BUILD_IF_MISSING | IMAGE_REBUILD | IMAGE_REBUILD_ROOT)))
		return error_set(err, IMAGE_NOT_CACHED,
				 "'%s' %.12s is not in the cache '%s': build it with 'sudo zbench "
				 "image build %s'",
				 job->name, job->hash, job->cache, job->path);
	if (job->flags & IMAGE_NO_AUTHOR_CODE) {
		const char *why;
		int rc = recipe_runs_code(job->path, &why, err);

		if (rc < 0)
			return -1;
		if (rc > 0)
			return error_set(err, EPERM,
					 "'%s' runs code when built (%s), and a file named it: "
					 "build it yourself with 'sudo zbench image build %s', or "
					 "name it with -i",
					 job->path, why, job->path);
	}
	if (job->flavor->needs_root && geteuid() != 0)
		return error_set(err, EPERM,
				 "building image '%s' needs root (%s): run 'sudo zbench image "
				 "build %s'",
				 job->name, job->flavor->needs_root, job->path);
	return 0;
}

/* The image this one is built from (the cloud flavor's base): cached, or built as usual. */
static int job_build_base(const struct image_job *job, struct zb_error *err)
{
	const char *base = job->flavor->base ? job->flavor->base(job) : NULL;
	struct image img;

	if (!base)
		return 0;
	if (image_get(base, job->cache,
		      IMAGE_BUILD_IF_MISSING | (job->flags & IMAGE_NO_AUTHOR_CODE), &img, err) < 0)
		return error_wrap(err, "base image");
	image_release(&img);
	return 0;
}

/* Create the cache directory if missing and make job->cache absolute; `*dir` follows. */
static int job_cache_absolute(struct image_job *job, char **dir, struct zb_error *err)
{
	char *abs;

	if (mkdir_p(job->cache, 0755, err) < 0)
		return -1;
	abs = realpath(job->cache, NULL);
	if (!abs)
		return error_sys(err, errno, "resolving '%s'", job->cache);
	free(job->cache);
	job->cache = abs;
	free(*dir);
	*dir = xasprintf("%s/images/%s", job->cache, job->hash);
	return 0;
}

/* Take an exclusive flock on `path`, waiting with a note if another zbench holds it. */
static int lock_file(const char *path, int *fd_out, struct zb_error *err)
{
	cleanup_close int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return error_sys(err, errno, "opening lock file '%s'", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		log_progress(LOG_NEWLINE, "waiting for another zbench build (lock '%s') ...", path);
		if (flock(fd, LOCK_EX) < 0)
			return error_sys(err, errno, "locking '%s'", path);
	}
	*fd_out = fd;
	fd = -1;
	return 0;
}

/* Two locks: the cache-wide one only while the flavor builds something images share (a root:
 * debootstrap, apt and the shared .deb cache are not safe to run twice at once), and one per
 * image, so assembling an image whose root is cached never waits behind another recipe's root
 * build (minutes). */
static int job_lock(const struct image_job *job, int *cache_fd, int *image_fd, struct zb_error *err)
{
	cleanup_free char *images = xasprintf("%s/images", job->cache);
	cleanup_free char *builds = xasprintf("%s/builds", job->cache);
	cleanup_free char *cache_lock = xasprintf("%s/lock", job->cache);
	cleanup_free char *image_lock = xasprintf("%s/images/%s.lock", job->cache, job->hash);

	if (mkdir_p(images, 0755, err) < 0 || mkdir_p(builds, 0755, err) < 0)
		return -1;
	if (job->flavor->needs_cache_lock && job->flavor->needs_cache_lock(job) &&
	    lock_file(cache_lock, cache_fd, err) < 0)
		return -1;
	return lock_file(image_lock, image_fd, err);
}

/* build_entry()'s callback: the build log (truncated), then the flavor's build into `tmp`. */
static int job_build_in(void *ctx, const char *tmp, struct zb_error *err)
{
	struct image_job *job = ctx;
	cleanup_free char *log = xasprintf("%s/builds/%s.log", job->cache, job->hash);
	struct build b = { .log_path = log };
	int rc;

	if (truncate(log, 0) < 0 && errno != ENOENT)
		return error_sys(err, errno, "truncating '%s'", log);
	b.steps = json_array();
	b.t0 = job->build_t0 = now_monotonic();
	rc = job->flavor->build(job, tmp, &b, err);
	build_release(&b);
	return rc;
}

static void job_announce(const struct image_job *job, const char *dir)
{
	char dur[32];

	if (job->flavor->announce) {
		job->flavor->announce(job, dir);
		return;
	}
	log_progress(LOG_NEWLINE, "image '%s' %.12s ready in %s: %s", job->name, job->hash,
		     format_duration(now_monotonic() - job->build_t0, dur, sizeof(dur)), dir);
}

/* Everything after load: 0 with `out` filled, or -1. */
static int job_transact(struct image_job *job, const char *cache_dir, struct image *out,
			struct zb_error *err)
{
	const struct image_flavor *f = job->flavor;
	cleanup_close int cache_lock = -1;
	cleanup_close int image_lock = -1;
	cleanup_free char *dir = NULL;
	int rc;

	if (f->key(job, err) < 0)
		return -1;
	job->cache = xstrdup(cache_dir ? cache_dir : image_cache_dir_default());
	dir = xasprintf("%s/images/%s", job->cache, job->hash);
	rc = job_find(job, dir, out, err);
	if (rc == 0 && f->cached_note)
		log_progress(LOG_NEWLINE, "%s: %s (cached)", f->cached_note, dir);
	if (rc <= 0)
		return rc;
	if (job_may_build(job, err) < 0 || job_build_base(job, err) < 0)
		return -1;
	if ((f->flags & IMAGE_FLAVOR_ABSOLUTE_CACHE) && job_cache_absolute(job, &dir, err) < 0)
		return -1;
	if (job_lock(job, &cache_lock, &image_lock, err) < 0)
		return -1;
	/* Another build may have finished it while we waited for the lock. */
	rc = job_find(job, dir, out, err);
	if (rc <= 0)
		return rc;
	if (build_entry(dir, 0, job_build_in, job, err) < 0)
		return -1;
	job_announce(job, dir);
	rc = image_open(dir, job->hash, out, err);
	if (rc > 0)
		return error_set(err, ENOENT, "image '%s' vanished after its build", dir);
	return rc;
}

/* The whole transaction for `job` (flavor, path, flags and overlay set). */
static int job_run(struct image_job *job, const char *cache_dir, struct image *out,
		   struct zb_error *err)
{
	const struct image_flavor *f = job->flavor;
	int rc;

	memset(out, 0, sizeof(*out));
	job->t0 = now_monotonic();
	if (flavors_check(err) < 0)
		return -1;
	if (f->load(job, err) < 0) {
		job_release(job);
		if (f->load_context)
			return error_wrap(err, "%s", f->load_context);
		return error_wrap(err, "%s '%s'", f->context, job->path);
	}
	rc = job_transact(job, cache_dir, out, err);
	job_release(job);
	if (rc < 0)
		return error_wrap(err, "%s '%s'", f->context, job->path);
	return 0;
}

/* --- the entry points (image.h) ---------------------------------------------------------- */

int image_get(const char *recipe_path, const char *cache_dir, unsigned flags, struct image *out,
	      struct zb_error *err)
{
	struct image_job job = { .flavor = image_flavor_of(recipe_path),
				 .path = recipe_path,
				 .flags = flags };

	/* A user's cloud image: imported (a cache hit after the first time) and booted as a cloud
	 * image (docs/images.md, "Importing a cloud image"). */
	if (job.flavor == &image_flavor_import)
		return image_import(recipe_path, cache_dir, flags, 0, out, err);
	return job_run(&job, cache_dir, out, err);
}

int image_resolve(const char *recipe_path, const char *cache_dir, int build_if_missing,
		  struct image *out, struct zb_error *err)
{
	return image_get(recipe_path, cache_dir, build_if_missing ? IMAGE_BUILD_IF_MISSING : 0, out,
			 err);
}

int image_import(const char *file, const char *cache_dir, unsigned flags, int overlay,
		 struct image *out, struct zb_error *err)
{
	/* Asking for an import is asking for it to be built; an import has no root to rebuild. */
	struct image_job job = {
		.flavor = &image_flavor_import,
		.path = file,
		.flags = (flags & ~(unsigned)IMAGE_REBUILD_ROOT) | IMAGE_BUILD_IF_MISSING,
		.overlay = overlay,
	};

	return job_run(&job, cache_dir, out, err);
}

/* The cached import of the loaded `job`'s file, flattened or kept an overlay: 0 (`out` filled),
 * 1 if neither is there, or -1. */
static int import_find(struct image_job *job, const char *cache, struct image *out,
		       struct zb_error *err)
{
	for (job->overlay = 0; job->overlay <= 1; job->overlay++) {
		cleanup_free char *dir = NULL;
		int rc;

		if (job->flavor->key(job, err) < 0)
			return -1;
		dir = xasprintf("%s/images/%s", cache, job->hash);
		rc = image_open(dir, job->hash, out, err);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

int image_import_lookup(const char *file, const char *cache_dir, struct image *out,
			struct zb_error *err)
{
	struct image_job job = { .flavor = &image_flavor_import, .path = file };
	const char *cache = cache_dir ? cache_dir : image_cache_dir_default();
	int rc;

	memset(out, 0, sizeof(*out));
	rc = flavors_check(err);
	if (rc == 0)
		rc = job.flavor->load(&job, err);
	if (rc == 0)
		rc = import_find(&job, cache, out, err);
	if (rc > 0)
		rc = error_set(err, IMAGE_NOT_CACHED,
			       "not imported into '%s' yet: run 'zbench image import %s'", cache,
			       file);
	job_release(&job);
	return rc < 0 ? error_wrap(err, "image '%s'", file) : 0;
}

int image_key(const char *path, int overlay, char out[65], struct zb_error *err)
{
	struct image_job job = { .flavor = image_flavor_of(path),
				 .path = path,
				 .overlay = overlay };
	int rc = flavors_check(err);

	if (rc == 0)
		rc = job.flavor->load(&job, err);
	if (rc == 0)
		rc = job.flavor->key(&job, err);
	if (rc == 0)
		memcpy(out, job.hash, 65);
	job_release(&job);
	return rc;
}

/* --- other recipes --------------------------------------------------------------------------- */

/* Whether the recipe at `path` gives an image with every bus in `buses`: its cached image says
 * so, or, not built yet, it lists their modules. Sets *same when its packages (so its OpenZFS)
 * are those of `self`. */
static int recipe_has_buses(const char *path, const char *cache_dir, const char *const *buses,
			    size_t n, const struct recipe *self, int *same)
{
	struct zb_error e = { 0 };
	struct image img;
	struct recipe r;
	int ok = 1;

	if (recipe_load(path, &r, &e) < 0)
		return 0;
	*same = self && json_equal(r.packages, self->packages);
	if (image_get(path, cache_dir, 0, &img, &e) == 0) {
		for (size_t i = 0; i < n; i++)
			ok &= image_has_bus(&img, buses[i]);
		image_release(&img);
	} else {
		for (size_t i = 0; i < n; i++)
			ok &= recipe_lists_bus(&r, buses[i]);
	}
	recipe_release(&r);
	return ok;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *image_recipe_with_buses(const char *recipe_path, const char *cache_dir,
			      const char *const *buses, size_t nbuses)
{
	char *dir = xstrdup(recipe_path), *slash = strrchr(dir, '/'), *found = NULL;
	char self_real[PATH_MAX] = "", **names = NULL;
	struct zb_error e = { 0 };
	struct recipe self;
	int have_self, found_same = 0;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if (slash)
		slash[1] = '\0';
	else
		dir[0] = '\0';
	if (!realpath(recipe_path, self_real))
		self_real[0] = '\0';
	have_self = recipe_load(recipe_path, &self, &e) == 0;
	d = opendir(dir[0] ? dir : ".");
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".json")) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xasprintf("%s%s", dir, de->d_name);
		}
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_cstr);
	/* In name order; one with the same packages (the same OpenZFS) first. */
	for (size_t i = 0; i < n && !found_same; i++) {
		char real[PATH_MAX];
		int same = 0;

		if (realpath(names[i], real) && !strcmp(real, self_real))
			continue;
		if (!recipe_has_buses(names[i], cache_dir, buses, nbuses, have_self ? &self : NULL,
				      &same))
			continue;
		if (!found || same) {
			free(found);
			found = xstrdup(names[i]);
			found_same = same;
		}
	}
	if (have_self)
		recipe_release(&self);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
	return found;
}
