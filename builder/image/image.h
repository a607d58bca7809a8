/* Guest appliance images: build them from a recipe (images/NAME.json), cache them by content hash,
 * and hand the runner the kernel and initramfs to boot (docs/images.md).
 *
 * Two cache levels under the cache directory, so that a change to the guest binaries rebuilds
 * only the initramfs and never the root or its 8-minute DKMS build:
 *
 *   roots/<root-hash>/       a debootstrap'd root with the kernel and zfs-dkms built, and root.json
 *   images/<image-hash>/     vmlinux, bzImage, initramfs.img, manifest.json
 *   builds/<image-hash>.log  every command's output for the last build of that image
 *   debs/                    downloaded .debs, shared by every build
 *   lock                     flock'd while building
 *
 * Entries are built in a temporary sibling and rename()d into place, so one either exists
 * completely or not at all.
 */
#ifndef ZB_IMAGE_H
#define ZB_IMAGE_H

#include <errno.h>
#include <jansson.h>
#include <stdio.h>

#include "core/error.h"

/* A built appliance. Every string is owned by the struct; image_release() frees them. */
struct image {
	char *dir;	     /* cache entry: <cache>/images/<hash> */
	char *kernel;	     /* the kernel to boot: vmlinux (PVH, fast under TCG), else bzImage */
	char *bzimage;	     /* the distribution's compressed kernel, always present */
	char *initramfs;     /* initramfs.img (newc cpio, compressed or not per the recipe) */
	char *manifest_path; /* manifest.json */
	char *disk;	     /* the cloud flavor's root disk (disk.qcow2), else NULL */
	char *cmdline;	     /* kernel arguments the image needs (root=LABEL=...), or NULL */
	const char *flavor;  /* "appliance" (kernel + initramfs) or "cloud" (disk); static */
	char hash[65];	     /* the image hash: recipe + guest binaries + assembly version */
	json_t *manifest;    /* manifest.json, parsed; a reference the struct owns */
};

enum image_flags {
	IMAGE_BUILD_IF_MISSING = 1 << 0, /* build what is not cached (else: error if missing) */
	IMAGE_REBUILD = 1 << 1,		 /* rebuild the appliance even if cached (keeps the root) */
	IMAGE_REBUILD_ROOT = 1 << 2,	 /* rebuild the root too (debootstrap, DKMS: minutes) */
	/* the recipe was named by a file: build it only if that runs no code of its author's
	 * (recipe_trust.h); the command line consents with -i or `zbench image build` */
	IMAGE_NO_AUTHOR_CODE = 1 << 3,
};

/* The default cache directory: $ZBENCH_CACHE_DIR, else $XDG_CACHE_HOME/zbench, else
 * $HOME/.cache/zbench. The string is static (computed once). */
const char *image_cache_dir_default(void);

/* Find the image for `recipe_path` in `cache_dir` (NULL: the default) and fill `out`; build it
 * first (printing one progress line per step to stderr) if it is missing and build_if_missing
 * is set. A cached image costs a few hashes and one small file read. Requires root to build. */
int image_resolve(const char *recipe_path, const char *cache_dir, int build_if_missing,
		  struct image *out, struct zb_error *err);

/* The summary `zbench image build` and `import` end with: name and hash, directory, kernel,
 * the initramfs (size, entries, compression) or the cloud flavor's initrd and disk, OpenZFS. */
void image_describe(const struct image *img, FILE *f);

/* Set as err->errnum by image_get() without IMAGE_BUILD_IF_MISSING and by image_import_lookup()
 * when the image is simply not in the cache (the recipe or file itself was fine): `zbench image
 * path` exits 1 for it and 2 for every other failure (docs/errors.md). */
#define IMAGE_NOT_CACHED ENOMEDIUM

/* As image_resolve(), with enum image_flags. */
int image_get(const char *recipe_path, const char *cache_dir, unsigned flags, struct image *out,
	      struct zb_error *err);

void image_release(struct image *img);

/* Whether `path` is a qcow2 image (its magic), as `zbench image import` takes, rather than a
 * recipe. */
int image_file_is_qcow2(const char *path);

/* Import a user's qcow2 cloud image (builder/image/image_import.c, docs/images.md): inspect it with
 * libguestfs, refuse it if it lacks a ZFS module for its kernel, zpool/zfs or systemd, else
 * inject the agent, the engine and the agent's unit into a copy in the cache (the file itself is
 * only read) with the kernel and initrd beside it, and fill `out` with that cloud-flavor image.
 * A second import of the same file (same bytes, same injected files) is a cache hit. `overlay`
 * keeps the cached disk a thin qcow2 overlay backed by `file` instead of a flattened copy;
 * flags: IMAGE_REBUILD imports again. Progress goes to stderr. */
int image_import(const char *file, const char *cache_dir, unsigned flags, int overlay,
		 struct image *out, struct zb_error *err);

/* The cached import of `file` (hashing it), without importing: 0, or -1 with err set
 * (IMAGE_NOT_CACHED if it was never imported). */
int image_import_lookup(const char *file, const char *cache_dir, struct image *out,
			struct zb_error *err);

/* Whether the image's kernel drives disks on `bus` (disk.c's names): its manifest's "buses",
 * detected from the kernel config when the image was built; an image built before that key
 * existed ran Debian's cloud kernel, whose set (virtio-blk, virtio-scsi, nvme) is assumed. */
int image_has_bus(const struct image *img, const char *bus);

/* Another recipe in the directory of `recipe_path` whose image has every one of `buses` (its
 * cached manifest says so, or, not built yet, it names their driver modules): in name order,
 * one with the same packages (the same OpenZFS) preferred. A malloc'd path, or NULL. For error
 * messages: it builds nothing and takes no lock. */
char *image_recipe_with_buses(const char *recipe_path, const char *cache_dir,
			      const char *const *buses, size_t nbuses);

/* A recipe path as the "image" of the matrix at `matrix_path` names it (docs/matrix.md): absolute
 * as it is; else relative to the zbench executable's directory (the repository, in the build
 * tree) when it exists there; else relative to the matrix file's directory when it exists there;
 * else the repository's (for the error message). Never the current directory first: a recipe
 * planted where zbench happens to run is not picked up (issue 12). `matrix_path` may be NULL.
 * Malloc'd. */
char *image_recipe_locate(const char *path, const char *matrix_path);

/* The guest binaries that go into every image: `name` is "agent" or "engine". Their path is
 * $ZBENCH_AGENT / $ZBENCH_ENGINE if set, else guest/zbench-<name> beside the zbench executable
 * (the build tree). Returns a malloc'd path. */
char *image_guest_binary(const char *name);
/* The agent's systemd unit (cloud flavor, imports): $ZBENCH_UNIT if set, else
 * zbench-agent.service beside the agent binary `agent`. Returns a malloc'd path. */
char *image_unit_path(const char *agent);

#endif
