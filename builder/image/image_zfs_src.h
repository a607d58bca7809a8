/* OpenZFS built from source into an appliance image (docs/images.md, "OpenZFS from source"): a
 * recipe's "zfs_source" names Debian's source package, a release tarball or a local directory
 * (a git checkout, dirty or not), patch files and configure options. The modules and the tools
 * the appliance uses are built inside a copy of the image's root against its own kernel headers.
 *
 * Two identities: the build tree's (the source without the patches or a dirty tree's diff, the
 * configure options, the root) names cache/zfs-build/<id>/tree, kept between builds so a small
 * change rebuilds little (and ccache, cache/ccache, the rest); the key (the build tree's
 * identity, the diff, every patch's content and the build script) goes into the image's key.
 * Never a path: the same content at another path is the same image.
 *
 * Everything in "zfs_source" may be someone else's: its strings are checked before they reach a
 * command line, a tarball is extracted by tar without owners, patches and a diff are applied by
 * `git apply` (which refuses paths outside the tree and through symlinks), and git never reads a
 * checkout's configuration (builder/image/git_tree.h). The build itself
 * runs the source's own build system as root in a chroot: building a source is trusting it.
 */
#ifndef ZB_IMAGE_ZFS_SRC_H
#define ZB_IMAGE_ZFS_SRC_H

#include <jansson.h>

#include "core/error.h"
#include "image_build.h"

/* Bump when the build script or the way a tree is prepared changes what gets built. */
#define ZFS_SRC_VERSION 1

struct zfs_patch {
	char *path; /* resolved against the recipe's directory */
	char sha[65];
};

struct zfs_src {
	const char *kind;	       /* "debian", "tarball" or "dir" */
	const char *package, *version; /* debian: the source package, and its version or NULL */
	const char *pinned_sha;	       /* debian: the .dsc's SHA-256 the recipe pins, or NULL */
	char *path;		       /* tarball, dir: resolved against the recipe's directory */
	json_t *configure;	       /* borrowed: the recipe's array of options */
	struct zfs_patch *patches;
	size_t n_patches;
	/* set by zfs_src_key(): */
	char *dsc;	     /* debian: the .dsc's file name ("zfs-linux_2.1.11-1+deb12u1.dsc") */
	char *dsc_version;   /* debian: the version apt resolved */
	char source_sha[65]; /* debian: the .dsc's SHA-256; tarball: the tarball's */
	char commit[41];     /* dir: HEAD */
	int dirty;	     /* dir: the work tree differs from HEAD (tracked files) */
	char *diff;	     /* dir, dirty: `git diff HEAD --binary` */
	char diff_sha[65];
	char script_sha[65];
	char build_id[65]; /* the build tree's identity */
	char key[65];	   /* what is built */
	/* set by zfs_src_build(): */
	char *module_version; /* `modinfo -F version zfs` in the root, as /sys/module/zfs/version */
	double seconds;	      /* of the build step */
};

/* Check a recipe's "zfs_source" object (`spec`, from the file `recipe_path`) and fill `zs`
 * (borrowing from spec). zfs_src_release() frees what it holds, also on failure. */
int zfs_src_load(const char *recipe_path, json_t *spec, struct zfs_src *zs, struct zb_error *err);

/* Compute the identities from the content (asks apt for the .dsc's hash, reads the tarball,
 * asks git for HEAD and the diff); `root_hash` is the recipe's root. */
int zfs_src_key(struct zfs_src *zs, const char *root_hash, struct zb_error *err);

/* Build into `root` (a copy of the image's root, kernel `kver`): prepare the kept build tree in
 * `cache` (absolute), apply the diff and patches, build and install in a chroot. */
int zfs_src_build(struct zfs_src *zs, const char *cache, const char *root, const char *kver,
		  struct build *b, struct zb_error *err);

/* What the manifest says about the source: kind, package/version or hash, commit, dirty, the
 * diff's and patches' hashes, configure options, the build tree, the module's version. */
json_t *zfs_src_describe(const struct zfs_src *zs);

/* What a cell's record says was built ("zfs_build"), from an image's manifest (trusted: the
 * cache's own): for a source build its kind, the package's name and version or the commit, the
 * source's SHA-256, whether the checkout was dirty (and the diff's hash), each patch's file name
 * and SHA-256, the configure options, the source key and the module's version as built; for a
 * packaged module {"kind": "package", "module_version"}. Never a host path. NULL when the
 * manifest says nothing about ZFS. The version the guest read is the record's
 * .effective.zfs_version: two builds of one version (a patch or not) differ in the hashes only. */
json_t *zfs_src_record(const json_t *image_manifest);

void zfs_src_release(struct zfs_src *zs);

#endif
