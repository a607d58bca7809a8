/* Internals shared by the image builder's files; other callers use image.h. The files form three
 * layers, each using only the layers below it:
 *
 *   image_cache.c      the flavor table and the one cache transaction (image_flavor.h)
 *   image_appliance.c, image_cloud.c, image_import.c     the flavors, each a table of steps;
 *   image_root.c       with the roots two of them build on (debootstrap, or derived from another)
 *   image.c (recipes, manifests, guest files), image_steps.c (progress, logs, the step runner),
 *   image_stage.c, image_modules.c (the appliance's initramfs), image_inspect.c,
 *   guestfs_util.c (libguestfs), sandbox.c (the import's unprivileged child), initramfs.c,
 *   elf_deps.c, vmlinux.c     shared helpers
 *
 * This header declares the helpers and the root builds.
 */
#ifndef ZB_IMAGE_BUILD_H
#define ZB_IMAGE_BUILD_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"
#include "image.h"

/* Bump when the root build steps change what ends up in a root: every cached root is rebuilt. */
#define IMAGE_ROOT_VERSION 2
/* Bump when the appliance assembly changes: every cached image is reassembled (seconds). */
#define IMAGE_APPLIANCE_VERSION 1

/* --- recipes and cache entries (image.c) ------------------------------------------------- */

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
	json_t *zfs_source; /* OpenZFS built from source (builder/image/image_zfs_src.h), or NULL */
	char hash[65];	    /* the whole recipe, canonical JSON */
	char root_hash[65]; /* the keys that shape the root, plus IMAGE_ROOT_VERSION */
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

/* Fill `out` from the finished cache entry `dir` (its manifest.json, whose boot files must all
 * be there). Returns 0, 1 if there is no entry, or -1 with err set for a broken one. */
int image_open(const char *dir, const char *hash, struct image *out, struct zb_error *err);

/* The files zbench puts into every image, and their SHA-256s (part of every image's key). */
struct guest_files {
	char *agent, *engine, *unit; /* image_guest_binary() and image_unit_path() */
	char agent_sha[65], engine_sha[65], unit_sha[65];
};

/* Find the three files (nothing is read); guest_files_release() frees the paths. */
void guest_files_init(struct guest_files *g);
/* Hash all three. The caller says how to build what is missing. */
int guest_files_hash(struct guest_files *g, struct zb_error *err);
/* files.agent, files.engine (and files.unit when `unit`) = {source, sha256}, for a manifest. */
void guest_files_record(const struct guest_files *g, int unit, json_t *files);
void guest_files_release(struct guest_files *g);

/* files[name] = {sha256, size} of the file at path. */
int image_file_entry(json_t *files, const char *name, const char *path, struct zb_error *err);
/* The same for the kernels in `dir` (vmlinux when it is `boot_kernel`, bzImage), then for each
 * of `names` (NULL-terminated; NULL: none) in `dir`. */
int image_file_entries(json_t *files, const char *dir, const char *boot_kernel,
		       const char *const *names, struct zb_error *err);
/* Write a manifest (indented, keys sorted, so two builds diff well) to `path`, atomically. */
int image_manifest_write(const char *path, json_t *manifest, struct zb_error *err);
/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ", the manifests' "built". */
void image_date_now(char buf[32]);

/* --- progress, logs and steps (image_steps.c) -------------------------------------------- */

/* One build: its progress line counter, its log, its step timings. */
struct build {
	const char *log_path;
	int step, nsteps;
	double step_t0, t0;
	const char *step_name;
	json_t *steps;	   /* [{"name", "seconds"}] */
	int bare_failures; /* a failed step only ends its progress line: the cause names it */
};

/* One step of a build. A flavor is a table of them, run in order by build_steps_run(), the way
 * bubblewrap runs its list of setup operations: one loop, one progress line per step. */
struct build_step {
	const char *name; /* the progress line; for a quiet step, what it does */
	int quiet;	  /* bookkeeping between steps: no progress line, not counted, a failure
			     is returned as it is */
	/* Optional: the progress line from the build's state (a version, a count), else name. */
	void (*title)(const void *ctx, char *buf, size_t len);
	/* Optional: whether the step applies to this build (NULL: always). Asked when counting and
	 * again when running: the answer must not change in between. */
	int (*wanted)(const void *ctx);
	int (*run)(void *ctx, struct build *b, struct zb_error *err);
};

/* How many progress lines `steps` will print for `ctx`. */
int build_steps_count(const struct build_step *steps, size_t n, const void *ctx);
/* Run the wanted steps in order, stopping at the first failure: a shown step's failure goes
 * through build_step_fail(). Returns 0 or -1. */
int build_steps_run(const struct build_step *steps, size_t n, void *ctx, struct build *b,
		    struct zb_error *err);

/* Progress: "[k/n] name ..." on stderr, then the elapsed time at step_end(); a marker in the log.
 */
void build_step_begin(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void build_step_end(struct build *b);
/* End the progress line as failed and turn the step's error into "step k/n 'name' failed: cause"
 * plus the log's tail (unless b->bare_failures). Returns -1. */
int build_step_fail(struct build *b, struct zb_error *err);
/* Append a line to the build log (notes that are not a command's output). */
void build_log(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run argv with its output into the log; a nonzero exit status is an error naming argv[0..1]. */
int build_run(struct build *b, const char *const argv[], struct zb_error *err);
/* Free what the build holds (its step list and the current step's name). */
void build_release(struct build *b);

/* Build the cache entry `dir` all or nothing: in `dir`.tmp (a leftover is removed first), then
 * renamed over `dir`. When build() fails the temporary is removed, unless `keep_failed` (a failed
 * root stays for inspection until the next build removes it). */
int build_entry(const char *dir, int keep_failed,
		int (*build)(void *ctx, const char *tmp, struct zb_error *err), void *ctx,
		struct zb_error *err);

/* Copy the kernel `vmlinuz` to `dir`/bzImage and extract `dir`/vmlinux from it; *boot_kernel is
 * the one to boot: "vmlinux" (PVH, fast under TCG), or "bzImage" when the payload's format is
 * unknown (noted in the log). `vmlinuz` NULL: `dir`/bzImage is already there. */
int build_kernel(struct build *b, const char *vmlinuz, const char *dir, const char **boot_kernel,
		 struct zb_error *err);

/* --- roots (image_root.c) ---------------------------------------------------------------- */

/* The Debian mirror URI for `suite` from the host's apt configuration (deb822 .sources first,
 * then sources.list), skipping security archives. Malloc'd into *out. */
int image_host_mirror(const char *suite, char **out, struct zb_error *err);

/* Mounts for chroot builds happen in a private mount namespace when the kernel allows it, so a
 * killed build leaves no mounts behind on the host; called once before the first mount. */
void image_private_mounts(void);

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
/* Switch initramfs-tools' `update-initramfs -u` (what package triggers run) on or off in the
 * root at `root` (its /etc/initramfs-tools/update-initramfs.conf, the update_initramfs= line);
 * a root without initramfs-tools: nothing to do. 0, or -1 with `err`. */
int root_initramfs_updates(const char *root, int on, struct zb_error *err);
/* Whether the root's kernel headers (ROOT/usr/src/linux-headers-NAME/vmlinux) carry the vmlinux
 * that kbuild makes each module's BTF against, from the module's debug info: DKMS modules are
 * then built with it (else KCFLAGS=-g0, image_root.c). */
int root_kernel_builds_btf(const char *root);

/* A host directory bound into a chroot: `src` at ROOT/`dst` (created). */
struct root_bind {
	const char *src, *dst;
};

/* Run argv (a "chroot ROOT ..." command) with proc, sys, dev and `binds` mounted in `root` and
 * the build's signals caught; the mounts are undone whatever happens. 0, or -1 with err. */
int root_chroot_run(const char *root, const struct root_bind *binds, size_t n,
		    const char *const argv[], struct build *b, struct zb_error *err);

/* Remove the temporaries that interrupted builds left in `roots`; call with the cache lock held.
 */
void root_remove_stale(const char *roots, struct build *b);

/* The root.json of the root directory `root_dir`, with its kernel_version: 0, or -1 with a
 * message saying how to rebuild the root. */
int root_info_load(const char *root_dir, json_t **info, const char **kver, struct zb_error *err);

#endif
