/* Image flavors: how one kind of input (a recipe, a user's qcow2 file) becomes a cache entry
 * images/<hash>/ (docs/images.md). Each flavor is a const table of hooks; image_cache.c lists
 * them in one array, checks each once, picks one by probe() and drives it through the one cache
 * transaction: load, key, find, lock, find again, build in a temporary directory, rename, open.
 */
#ifndef ZB_IMAGE_FLAVOR_H
#define ZB_IMAGE_FLAVOR_H

#include "core/error.h"
#include "image.h"
#include "image_build.h"

/* One image asked for: what the transaction knows, and the flavor's own state. */
struct image_job {
	const struct image_flavor *flavor;
	const char *path; /* the recipe or the file, as the caller named it */
	char *cache;	  /* the cache directory; absolute once IMAGE_FLAVOR_ABSOLUTE_CACHE asks */
	unsigned flags;	  /* enum image_flags */
	int overlay;	  /* import: keep the cached disk an overlay backed by the file */
	const char *name; /* the image's name in messages (set by load) */
	char hash[65];	  /* the cache key (set by key) */
	double t0;	  /* when the transaction started (before hashing anything) */
	double build_t0;  /* when the build started, once it has */
	void *state;	  /* the flavor's: set by load, freed by release */
};

enum image_flavor_flags {
	/* The build wants an absolute cache path (debootstrap, chroot and bind mounts do). */
	IMAGE_FLAVOR_ABSOLUTE_CACHE = 1 << 0,
};

struct image_flavor {
	const char *name;
	unsigned flags; /* enum image_flavor_flags */
	/* Why building needs root ("debootstrap, chroot, mounts"), or NULL if it does not. */
	const char *needs_root;
	/* Errors of a job are introduced as "CONTEXT 'PATH': ..." ("image", "importing"). */
	const char *context;
	/* A load failure is introduced by this instead ("loading image recipe"), or NULL. */
	const char *load_context;
	/* When the first look finds the entry, "NOTE: DIR (cached)" goes to stderr; NULL: nothing.
	 */
	const char *cached_note;

	/* Whether `path` is this flavor's input. Asked in table order: the first yes wins. */
	int (*probe)(const char *path);
	/* Set job->state (a calloc'd struct of the flavor's) first, then read and check the input
	 * and set job->name. release() runs even if this fails. */
	int (*load)(struct image_job *job, struct zb_error *err);
	/* Compute job->hash from the loaded input, job->overlay and what goes into the image. */
	int (*key)(struct image_job *job, struct zb_error *err);
	/* Optional: a recipe whose image must be in the cache before this one builds (built if
	 * missing), or NULL. */
	const char *(*base)(const struct image_job *job);
	/* Optional: whether this build also takes the cache-wide lock (it builds something shared
	 * between images, like a root); NULL: never. */
	int (*needs_cache_lock)(const struct image_job *job);
	/* Build the entry into `dir` (a fresh temporary directory) under the locks, with `b` set
	 * up (its log truncated, t0 set): every file image_open() needs, manifest.json last. */
	int (*build)(struct image_job *job, const char *dir, struct build *b, struct zb_error *err);
	/* Optional: the line saying the entry `dir` is ready; NULL: "image NAME HASH ready in ...".
	 */
	void (*announce)(const struct image_job *job, const char *dir);
	/* Free what job->state holds (the transaction frees the state itself); called once load()
	 * has set it, whatever happened after. */
	void (*release)(struct image_job *job);
};

extern const struct image_flavor image_flavor_appliance;
extern const struct image_flavor image_flavor_cloud;
extern const struct image_flavor image_flavor_import;

/* Whether a flavor table has what the transaction calls: 0, or -1 naming the missing hook. */
int image_flavor_check(const struct image_flavor *f, struct zb_error *err);

/* The flavor of `path` (the first in the table whose probe() says yes). */
const struct image_flavor *image_flavor_of(const char *path);

/* The cache key image_get() would compute for `path` (and `overlay`, for an import), without
 * looking in the cache: 0 and `out` set, or -1. For tests (the key must not change by accident:
 * every cached image would be rebuilt). */
int image_key(const char *path, int overlay, char out[65], struct zb_error *err);

/* The cloud flavor's probe: a recipe with a "base" key. */
int image_recipe_is_cloud(const char *path);

#endif
