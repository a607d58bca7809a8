/* Internals shared by the image builder's files: image.c (recipe, cache, orchestration),
 * image_root.c (the debootstrap'd root with the kernel and DKMS modules) and image_appliance.c
 * (the kernel and initramfs assembled from that root). Not for other callers: use image.h. */
#ifndef ZB_IMAGE_BUILD_H
#define ZB_IMAGE_BUILD_H

#include <jansson.h>

#include "error.h"
#include "image.h"

/* Bump when the root build steps change what ends up in a root: every cached root is rebuilt. */
#define IMAGE_ROOT_VERSION 1
/* Bump when the appliance assembly changes: every cached image is reassembled (seconds). */
#define IMAGE_APPLIANCE_VERSION 1

/* A loaded recipe (images/NAME.json). The string and array members borrow from `json`. */
struct recipe {
	json_t *json;
	char *path;
	const char *name;
	const char *distro;
	const char *suite;
	const char *mirror;	 /* "host" or a URI */
	json_t *components;	 /* array of strings */
	int backports;		 /* add SUITE-backports to the root's apt sources (not a default) */
	json_t *kernel_packages; /* installed first: the kernel and its headers for DKMS */
	json_t *packages;	 /* then these (zfs-dkms builds its modules here) */
	json_t *modules;	 /* kernel module names; their dependencies are added */
	json_t *optional_modules; /* the same, skipped with a note if the kernel lacks them */
	json_t *files;		  /* paths in the root copied into the initramfs (+ libraries) */
	json_t *optional_files;	  /* the same, skipped if absent */
	json_t *trees;		  /* directories copied recursively */
	json_t *exclude;	  /* paths left out of trees */
	const char *compression;  /* initramfs: "none" or "gzip" */
	char hash[65];		  /* the whole recipe, canonical JSON */
	char root_hash[65];	  /* the keys that shape the root, plus IMAGE_ROOT_VERSION */
};

#define RECIPE_FILE_MAX	   (1u << 20)  /* bytes of a recipe file */
#define IMAGE_MANIFEST_MAX (16u << 20) /* bytes of a cached image's manifest.json */

/* Load and check a recipe, computing both hashes. recipe_release() frees what it holds. A
 * recipe may be someone else's: every value is checked before it reaches a command line. */
int recipe_load(const char *path, struct recipe *r, struct zb_error *err);
/* The same from `len` bytes of text; `path` names it in messages (tests/fuzz/fuzz_recipe.c). */
int recipe_load_buffer(const char *path, const char *text, size_t len, struct recipe *r,
		       struct zb_error *err);

/* Read a cache entry's manifest.json text into `out` (the paths of its files under `dir`, its
 * flavor, its boot arguments; every file name a plain name in `dir`), without looking at the
 * files. 0, or -1 with err (out is then empty). image_release() frees what it holds. */
int image_manifest_parse(const char *dir, const char *hash, const char *text, size_t len,
			 struct image *out, struct zb_error *err);
void recipe_release(struct recipe *r);

/* One build: its progress line counter, its log, its step timings. */
struct build {
	const char *log_path;
	int step, nsteps;
	double step_t0, t0;
	const char *step_name;
	json_t *steps; /* [{"name", "seconds"}] */
};

/* Progress: "[k/n] name ..." on stderr, then the elapsed time at step_end(); a marker in the log.
 */
void build_step_begin(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void build_step_end(struct build *b);
/* Turn a failed step's error into "step 'name' failed: cause; log tail". Returns -1. */
int build_step_fail(struct build *b, struct zb_error *err);
/* Append a line to the build log (notes that are not a command's output). */
void build_log(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run argv with its output into the log; a nonzero exit status is an error naming argv[0..1]. */
int build_run(struct build *b, const char *const argv[], struct zb_error *err);

/* The Debian mirror URI for `suite` from the host's apt configuration (deb822 .sources first,
 * then sources.list), skipping security archives. Malloc'd into *out. */
int image_host_mirror(const char *suite, char **out, struct zb_error *err);

/* Mounts for chroot builds happen in a private mount namespace when the kernel allows it, so a
 * killed build leaves no mounts behind on the host; called once before the first mount. */
void image_private_mounts(void);

/* Resolve `path` (absolute, inside `root`) following symlinks as if `root` were "/"; writes the
 * resolved in-root path to `out`. A missing final component is not an error (ENOENT is returned
 * as 1 with `out` set). Returns 0, 1, or -1 with err set (loops, too long). */
int root_resolve(const char *root, const char *path, char *out, size_t len, struct zb_error *err);

/* Build the root of `r` into `dir` (a fresh temporary directory): dir/root and dir/root.json. */
int root_build(const struct recipe *r, const char *cache, const char *dir, struct build *b,
	       struct zb_error *err);
int root_nsteps(void);

/* Derive a root from a built one (the cloud flavor): copy `base_root` (a roots/<hash>/root
 * directory) to dir/root, apt-get install r->packages in it, rebuild its initramfs-tools initrd,
 * and write dir/root.json as root_build() does. Only r->packages, r->suite and r->root_hash are
 * used. */
int root_derive(const struct recipe *r, const char *base_root, const char *cache, const char *dir,
		struct build *b, struct zb_error *err);
int root_derive_nsteps(void);

/* Assemble the appliance from a finished root into `dir` (a fresh temporary directory): vmlinux,
 * bzImage, initramfs.img and manifest.json. `info` is root.json; `agent`/`engine` are the guest
 * binaries with their hashes; `image_hash` goes into the manifest. */
struct appliance_inputs {
	const struct recipe *recipe;
	const char *root_dir; /* roots/<hash> */
	json_t *root_info;
	const char *agent, *engine;
	const char *agent_sha, *engine_sha;
	const char *image_hash;
};
int appliance_build(const struct appliance_inputs *in, const char *dir, struct build *b,
		    struct zb_error *err);
int appliance_nsteps(void);

/* The cache entry helpers of image.c, for image_cloud.c and
 * image_import.c. image_cache_open() fills `out` from a
 * finished entry (1 if there is none); image_cache_lock() flocks `path` (and frees it). */
int image_cache_open(const char *dir, const char *hash, struct image *out, struct zb_error *err);
int image_cache_lock(char *path, int *fd_out, struct zb_error *err);
/* The entry `cache`/images/`hash` when it is there and no rebuild was asked for (0, `out`
 * filled); else 1 when the caller may build it (asked to, and root: `root_for` says why it needs
 * root), or -1 with a message saying how to build it. */
int image_cache_find(const char *cache, const char *hash, unsigned flags, const char *name,
		     const char *recipe_path, const char *root_for, struct image *out,
		     struct zb_error *err);
/* Creates the cache directory `*cache` if missing and replaces it by its absolute path (chroots
 * and bind mounts need one), `*img_dir` by `*cache`/images/`img_hash` to match. */
int image_cache_absolute(char **cache, char **img_dir, const char *img_hash, struct zb_error *err);
/* files[name] = {sha256, size} of the file at path. */
int image_file_entry(json_t *files, const char *name, const char *path, struct zb_error *err);

/* The cloud flavor (image_cloud.c): a recipe with a "base" key is a cloud recipe, built into a
 * qcow2 disk from a root derived from the base recipe's root. image_get() hands those over. */
int image_recipe_is_cloud(const char *path);
int cloud_image_get(const char *recipe_path, const char *cache_dir, unsigned flags,
		    struct image *out, struct zb_error *err);

/* Whether a kernel drives disks on `bus` (disk.c's names): every config symbol the bus needs is
 * =y in `config` (the text of /boot/config-VER; NULL: unknown, every symbol counts as =m), or =m
 * and staged(module) says the module is in the initramfs. Returns 1, or 0 with *missing set to
 * the first symbol that is not. The image's manifest "buses" comes from this. */
int appliance_kernel_has_bus(const char *config, const char *bus,
			     int (*staged)(const char *module, void *arg), void *arg,
			     const char **missing);

#endif
