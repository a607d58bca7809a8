/* The appliance flavor: a kernel and an initramfs assembled from a root (two cache levels, so a
 * change to the guest binaries rebuilds only the initramfs and never the root or its 8-minute
 * DKMS build). The kernel is taken from the root's /boot (and its ELF vmlinux extracted for a
 * fast PVH boot); the initramfs holds the guest agent as /init, the workload engine, the recipe's
 * programs with every shared library they need, the kernel modules the recipe names with their
 * dependencies, udev's rules and helpers, and a directory skeleton (image_stage.h). Nothing in
 * the root is changed, and nothing from the guest root is run on the host except depmod, in a
 * chroot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/log.h"
#include "core/util.h"
#include "core/version.h"
#include "image_flavor.h"
#include "image_stage.h"
#include "image_zfs_src.h"
#include "initramfs.h"

/* A job's state: the recipe, what goes into the image, and the build's progress. */
struct appliance_job {
	struct recipe r;
	struct guest_files g;
	struct zfs_src zs; /* when the recipe has "zfs_source" (has_zs) */
	int has_zs;
	/* the build: */
	struct build *b;
	const char *hash;
	const char *dir; /* the temporary images/<hash>.tmp */
	const char *cache;
	char *root_dir; /* roots/<root hash> */
	char *root;	/* its root/; with zfs_source, a copy of it in dir (removed at the end) */
	json_t *root_info;
	const char *kver;
	const char *boot_kernel;
	size_t first_step; /* the first of b->steps that is the appliance's own */
	struct stager stager;
	struct initramfs_stats stats;
	json_t *modules, *buses;
};

/* --- the assembly: a table of steps ------------------------------------------------------ */

static void title_kernel(const void *ctx, char *buf, size_t len)
{
	const struct appliance_job *a = ctx;

	snprintf(buf, len, "kernel %s", a->kver);
}

static int step_kernel(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;
	cleanup_free char *src = xasprintf("%s/boot/vmlinuz-%s", a->root, a->kver);

	return build_kernel(b, src, a->dir, &a->boot_kernel, err);
}

static int zfs_wanted(const void *ctx)
{
	const struct appliance_job *a = ctx;

	return a->has_zs;
}

static int step_root_copy(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;
	cleanup_free char *src = xasprintf("%s/root", a->root_dir);
	const char *argv[] = { "cp", "-a", "--reflink=auto", src, a->root, NULL };

	return build_run(b, argv, err);
}

static void title_zfs(const void *ctx, char *buf, size_t len)
{
	const struct appliance_job *a = ctx;

	snprintf(buf, len, "OpenZFS from source (%s %.12s%s, %zu patch%s)", a->zs.kind,
		 !strcmp(a->zs.kind, "dir") ? a->zs.commit : a->zs.source_sha,
		 a->zs.dirty ? ", dirty" : "", a->zs.n_patches, a->zs.n_patches == 1 ? "" : "es");
}

static int step_zfs(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;

	return zfs_src_build(&a->zs, a->cache, a->root, a->kver, b, err);
}

/* The copy was only the build's: the image is its kernel, initramfs and manifest. */
static int step_root_remove(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;

	return remove_tree(a->root, err);
}

static int step_programs(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;
	struct stager *s = &a->stager;
	size_t i;
	json_t *v;

	if (mkdir_p(s->staging, 0755, err) < 0)
		return -1;
	json_array_foreach (a->r.files, i, v) {
		if (stage_file(s, json_string_value(v), 0, err) < 0)
			return -1;
	}
	json_array_foreach (a->r.optional_files, i, v) {
		if (stage_file(s, json_string_value(v), 1, err) < 0)
			return -1;
	}
	json_array_foreach (a->r.trees, i, v) {
		if (stage_tree(s, json_string_value(v), a->r.exclude, err) < 0)
			return -1;
	}
	if (stage_skeleton(s, err) < 0 || stage_host_file(s, a->g.agent, "/init", 0755, err) < 0 ||
	    stage_host_file(s, a->g.engine, "/bin/zbench-engine", 0755, err) < 0)
		return -1;
	return 0;
}

static int step_modules(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;

	a->modules = json_object();
	return stage_modules(&a->stager, &a->r, a->kver, a->modules, &a->buses, err);
}

static void title_initramfs(const void *ctx, char *buf, size_t len)
{
	const struct appliance_job *a = ctx;

	snprintf(buf, len, "initramfs (%s)", a->r.compression);
}

static int step_initramfs(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;
	cleanup_free char *initramfs = xasprintf("%s/initramfs.img", a->dir);
	cleanup_free char *gz = xasprintf("%s.gz", initramfs);
	const char *argv[] = { "gzip", "-n", "-f", initramfs, NULL };

	if (initramfs_write_dir(a->stager.staging, initramfs, &a->stats, err) < 0)
		return -1;
	if (!strcmp(a->r.compression, "gzip")) {
		if (build_run(b, argv, err) < 0)
			return -1;
		if (rename(gz, initramfs) < 0)
			return error_sys(err, errno, "renaming '%s'", gz);
	}
	return remove_tree(a->stager.staging, err);
}

/* The files of the manifest: kernels, initramfs, guest binaries. */
static json_t *appliance_files(const struct appliance_job *a, struct zb_error *err)
{
	cleanup_free char *initramfs = xasprintf("%s/initramfs.img", a->dir);
	cleanup_json json_t *files = json_object();
	json_t *f;

	if (image_file_entries(files, a->dir, a->boot_kernel, NULL, err) < 0 ||
	    image_file_entry(files, "initramfs", initramfs, err) < 0)
		return NULL;
	f = json_object_get(files, "initramfs");
	json_object_set_new(f, "compression", json_string(a->r.compression));
	json_object_set_new(f, "entries", json_integer((json_int_t)a->stats.entries));
	guest_files_record(&a->g, 0, files);
	return steal_pointer(&files);
}

static int step_manifest(void *ctx, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = ctx;
	cleanup_free char *path = xasprintf("%s/manifest.json", a->dir);
	json_t *pkgs = json_object_get(a->root_info, "packages");
	const char *zfs = a->has_zs ? a->zs.module_version
				    : json_string_value(json_object_get(pkgs, "zfsutils-linux"));
	json_t *files = appliance_files(a, err), *steps = json_array();
	cleanup_json json_t *m = NULL;
	char date[32];

	if (!files) {
		json_decref(steps);
		return -1;
	}
	for (size_t i = a->first_step; i < json_array_size(b->steps); i++)
		json_array_append(steps, json_array_get(b->steps, i));
	image_date_now(date);
	m = json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:O}, s:s, s:s?, s:O, "
		      "s:{s:s, s:s}, s:o, s:O, s:{s:O, s:o}}",
		      "format", 1, "zbench_version", ZBENCH_VERSION, "image_hash", a->hash, "built",
		      date, "recipe", "name", a->r.name, "path", a->r.path, "hash", a->r.hash,
		      "root_hash", a->r.root_hash, "content", a->r.json, "kernel_version", a->kver,
		      "zfs_version", zfs, "packages", pkgs, "boot", "kernel", a->boot_kernel,
		      "initramfs", "initramfs.img", "files", files, "modules", a->modules, "steps",
		      "root", json_object_get(a->root_info, "steps"), "appliance", steps);
	if (!m)
		return error_set(err, EINVAL,
				 "cannot assemble the manifest (missing root.json fields?)");
	json_object_set(m, "buses", a->buses);
	if (a->has_zs)
		json_object_set_new(m, "zfs_source", zfs_src_describe(&a->zs));
	return image_manifest_write(path, m, err);
}

static const struct build_step appliance_steps[] = {
	{ .name = "copy the root", .wanted = zfs_wanted, .run = step_root_copy },
	{ .name = "OpenZFS from source",
	  .title = title_zfs,
	  .wanted = zfs_wanted,
	  .run = step_zfs },
	{ .name = "kernel", .title = title_kernel, .run = step_kernel },
	{ .name = "programs, libraries, udev", .run = step_programs },
	{ .name = "kernel modules", .run = step_modules },
	{ .name = "initramfs", .title = title_initramfs, .run = step_initramfs },
	{ .name = "manifest", .run = step_manifest },
	{ .name = "remove the root's copy",
	  .quiet = 1,
	  .wanted = zfs_wanted,
	  .run = step_root_remove },
};

/* --- the flavor -------------------------------------------------------------------------- */

static int appliance_load(struct image_job *job, struct zb_error *err)
{
	struct appliance_job *a = xcalloc(1, sizeof(*a));

	job->state = a;
	guest_files_init(&a->g);
	if (recipe_load(job->path, &a->r, err) < 0)
		return -1;
	job->name = a->r.name;
	if (a->r.zfs_source) {
		a->has_zs = 1;
		if (zfs_src_load(a->r.path, a->r.zfs_source, &a->zs, err) < 0)
			return -1;
	}
	return 0;
}

static int appliance_key(struct image_job *job, struct zb_error *err)
{
	struct appliance_job *a = job->state;
	cleanup_free char *key = NULL;

	if (sha256_file_hex(a->g.agent, a->g.agent_sha, err) < 0)
		return error_wrap(err,
				  "guest agent (build it with 'make guest/zbench-agent', or set "
				  "ZBENCH_AGENT)");
	if (sha256_file_hex(a->g.engine, a->g.engine_sha, err) < 0)
		return error_wrap(err, "guest engine (build it with 'make guest/zbench-engine', or "
				       "set ZBENCH_ENGINE)");
	if (a->has_zs && zfs_src_key(&a->zs, a->r.root_hash, err) < 0)
		return -1;
	/* Without "zfs_source" the key is what it always was (no cached image is rebuilt). */
	key = xasprintf("zbench-appliance %d\nrecipe %s\nroot %s\nagent %s\nengine %s\n%s%s%s",
			IMAGE_APPLIANCE_VERSION, a->r.hash, a->r.root_hash, a->g.agent_sha,
			a->g.engine_sha, a->has_zs ? "zfs " : "", a->has_zs ? a->zs.key : "",
			a->has_zs ? "\n" : "");
	sha256_hex(key, strlen(key), job->hash);
	return 0;
}

/* The root is built (under the cache lock) when it is not cached or a rebuild of it was asked. */
static int appliance_needs_root(const struct image_job *job)
{
	const struct appliance_job *a = job->state;
	cleanup_free char *root_json =
	    xasprintf("%s/roots/%s/root.json", job->cache, a->r.root_hash);

	return (job->flags & IMAGE_REBUILD_ROOT) || !path_exists(root_json);
}

/* build_entry()'s callback for the root. */
static int root_build_in(void *ctx, const char *tmp, struct zb_error *err)
{
	const struct image_job *job = ctx;
	struct appliance_job *a = job->state;

	if (root_build(&a->r, job->cache, tmp, a->b, err) < 0)
		return error_wrap(err, "building root %.12s", a->r.root_hash);
	return 0;
}

static int appliance_assemble(struct image_job *job, struct build *b, struct zb_error *err)
{
	struct appliance_job *a = job->state;

	a->root = a->has_zs ? xasprintf("%s/root", a->dir) : xasprintf("%s/root", a->root_dir);
	a->stager =
	    (struct stager){ .root = a->root, .staging = xasprintf("%s/staging", a->dir), .b = b };
	a->first_step = json_array_size(b->steps);
	if (root_info_load(a->root_dir, &a->root_info, &a->kver, err) < 0)
		return -1;
	if (build_steps_run(appliance_steps, ARRAY_SIZE(appliance_steps), a, b, err) < 0)
		return error_wrap(err, "assembling image %.12s", job->hash);
	return 0;
}

static int appliance_build(struct image_job *job, const char *dir, struct build *b,
			   struct zb_error *err)
{
	struct appliance_job *a = job->state;
	cleanup_free char *roots = xasprintf("%s/roots", job->cache);
	int need_root = appliance_needs_root(job);

	a->b = b;
	a->hash = job->hash;
	a->dir = dir;
	a->cache = job->cache;
	a->root_dir = xasprintf("%s/%s", roots, a->r.root_hash);
	if (mkdir_p(roots, 0755, err) < 0)
		return -1;
	/* Leftovers of interrupted builds: roots' only under the cache lock (held when a root is
	 * built); the image's own temporary directory is new. */
	if (need_root)
		root_remove_stale(roots, b);
	build_log(b, "building image %s from '%s' (recipe %s, root %s)", job->hash, a->r.path,
		  a->r.hash, a->r.root_hash);
	b->nsteps = build_steps_count(appliance_steps, ARRAY_SIZE(appliance_steps), a) +
		    (need_root ? root_nsteps() : 0);
	log_progress(LOG_NEWLINE, "building image '%s' %.12s (log: %s)", a->r.name, job->hash,
		     b->log_path);
	if (need_root) {
		log_progress(LOG_NEWLINE, "root %.12s: not cached, building (about 10 minutes)",
			     a->r.root_hash);
		/* A failed root stays on disk for inspection until the next build removes it. */
		if (build_entry(a->root_dir, 1, root_build_in, job, err) < 0)
			return -1;
	} else {
		log_progress(LOG_NEWLINE, "root %.12s: cached", a->r.root_hash);
	}
	return appliance_assemble(job, b, err);
}

static void appliance_release(struct image_job *job)
{
	struct appliance_job *a = job->state;

	recipe_release(&a->r);
	guest_files_release(&a->g);
	zfs_src_release(&a->zs);
	stager_release(&a->stager);
	free((char *)a->stager.staging);
	free(a->root_dir);
	free(a->root);
	json_decref(a->root_info);
	json_decref(a->modules);
	json_decref(a->buses);
}

/* Every recipe the flavors before it in the table did not take (recipe_load() says what is
 * wrong with one that is not a recipe at all). */
static int appliance_probe(const char *path)
{
	return 1;
}

const struct image_flavor image_flavor_appliance = {
	.name = "appliance",
	.flags = IMAGE_FLAVOR_ABSOLUTE_CACHE,
	.needs_root = "debootstrap, chroot, mounts",
	.context = "image",
	.load_context = "loading image recipe",
	.probe = appliance_probe,
	.load = appliance_load,
	.key = appliance_key,
	.needs_cache_lock = appliance_needs_root,
	.build = appliance_build,
	.release = appliance_release,
};
