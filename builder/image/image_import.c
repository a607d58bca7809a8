/* `zbench image import FILE.qcow2`: a user's own cloud image as a cached image of the cloud
 * flavor (docs/images.md, "Importing a cloud image").
 *
 * The user's file is never written: a qcow2 overlay backed by it (read-only) is created in the
 * cache entry's temporary directory, and one libguestfs session on that overlay inspects the
 * guest (OS, kernels, the ZFS module for the kernel that will boot, zpool/zfs, systemd), refuses
 * what cannot run a cell, and otherwise injects the static agent, the engine and the agent's
 * systemd unit, and downloads the kernel and initrd for a direct kernel boot. The overlay is then
 * flattened into a self-contained disk.qcow2 (or, with --overlay, kept thin and backed by the
 * user's file). The entry's key is the SHA-256 of the source and of every injected file, so
 * importing the same file again is a cache hit that never starts libguestfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/log.h"
#include "core/util.h"
#include "core/version.h"
#include "guestfs_util.h"
#include "image_flavor.h"
#include "image_inspect.h"
#include "qcow2.h"

/* Bump when what an import writes changes: every imported image is imported again. */
#define IMPORT_VERSION	  1
#define IMPORT_KERNEL_MAX (256ll << 20) /* a bzImage (Debian's: 8 MiB) */
#define IMPORT_INITRD_MAX (1ll << 30)	/* an initrd (Debian's: 30-70 MiB) */

/* Units that would load zfs before the agent sets the cell's module parameters, import or mount
 * pools behind its back, or wake up during a cell and compete with the workload for the emulated
 * CPUs and disks. Masked (a link to /dev/null) in the imported copy; absent ones cost nothing. */
static const char *const masked_units[] = {
	"zfs-load-module.service",
	"zfs-import-cache.service",
	"zfs-import-scan.service",
	"zfs-mount.service",
	"zfs-share.service",
	"zfs-zed.service",
	"zfs-volume-wait.service",
	"apt-daily.timer",
	"apt-daily-upgrade.timer",
	"dpkg-db-backup.timer",
	"e2scrub_all.timer",
	"fstrim.timer",
	"man-db.timer",
	"motd-news.timer",
	"unattended-upgrades.service",
	"snapd.service",
};

/* cloud-init, if the image has it: the cell's seed is a NoCloud volume; probing cloud metadata
 * services (each one a time-out) and configuring a network the VM does not have would only delay
 * the agent. */
static const char cloud_cfg[] = "# zbench image import (builder/image/image_import.c): the cell's "
				"seed is a NoCloud cidata volume\n"
				"datasource_list: [ NoCloud, None ]\n"
				"network: {config: disabled}\n";

/* --- the source file --------------------------------------------------------------------- */

int image_file_is_qcow2(const char *path)
{
	unsigned char h[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC), yes = 0;

	if (fd < 0)
		return 0;
	yes = read(fd, h, 4) == 4 && !memcmp(h, "QFI\xfb", 4);
	close(fd);
	return yes;
}

/* --- injection ----------------------------------------------------------------------------- */

/* Upload `src` to `dir`/`name` in the guest (dir resolved inside the guest, so /bin -> usr/bin
 * works however the link is written) with `mode`, and check what landed by its SHA-256. */
static int put_file(guestfs_h *g, const char *src, const char *sha, const char *dir,
		    const char *name, int mode, json_t *record, struct zb_error *err)
{
	cleanup_free char *real = NULL;
	cleanup_free char *path = NULL;
	cleanup_free char *sum = NULL;

	/* mkdir -p fails on a symbolic link (/bin on merged-/usr systems): make only what is
	 * missing. */
	if ((guestfs_is_dir_opts(g, dir, GUESTFS_IS_DIR_OPTS_FOLLOWSYMLINKS, 1, -1) <= 0 &&
	     guestfs_mkdir_p(g, dir) < 0) ||
	    !(real = guestfs_realpath(g, dir)))
		return gfs_fail(g, dir, err);
	path = xasprintf("%s/%s", strcmp(real, "/") ? real : "", name);
	if (guestfs_upload(g, src, path) < 0 || guestfs_chmod(g, mode, path) < 0 ||
	    !(sum = guestfs_checksum(g, "sha256", path)))
		return gfs_fail(g, path, err);
	if (strcmp(sum, sha))
		return error_set(err, EIO, "'%s' in the image has SHA-256 %s, not %s", path, sum,
				 sha);
	json_object_set_new(record, path, json_pack("{s:s, s:s}", "source", src, "sha256", sha));
	return 0;
}

static int inject(guestfs_h *g, const struct import_facts *f, const struct guest_files *in,
		  json_t *record, json_t *masked, struct zb_error *err)
{
	const char *wants = "/etc/systemd/system/multi-user.target.wants";

	if (put_file(g, in->agent, in->agent_sha, "/usr/local/sbin", "zbench-agent", 0755, record,
		     err) < 0 ||
	    /* The agent runs the workload as /bin/zbench-engine. */
	    put_file(g, in->engine, in->engine_sha, "/bin", "zbench-engine", 0755, record, err) <
		0 ||
	    put_file(g, in->unit, in->unit_sha, "/etc/systemd/system", "zbench-agent.service", 0644,
		     record, err) < 0)
		return error_wrap(err, "injecting");
	if (guestfs_mkdir_p(g, wants) < 0 ||
	    guestfs_ln_sf(g, "/etc/systemd/system/zbench-agent.service",
			  "/etc/systemd/system/multi-user.target.wants/zbench-agent.service") < 0)
		return gfs_fail(g, "enabling zbench-agent.service", err);
	if (gfs_mask_units(g, masked_units, ARRAY_SIZE(masked_units), masked, err) < 0)
		return -1;
	if (f->cloud_init && (guestfs_mkdir_p(g, "/etc/cloud/cloud.cfg.d") < 0 ||
			      guestfs_write(g, "/etc/cloud/cloud.cfg.d/90-zbench.cfg", cloud_cfg,
					    strlen(cloud_cfg)) < 0))
		return gfs_fail(g, "configuring cloud-init", err);
	return 0;
}

/* --- the import: a table of steps -------------------------------------------------------- */

/* A job's state: the file, what goes into the image, and the build's progress. */
struct import_job {
	struct guest_files in; /* injected: the agent, the engine, the unit */
	char *file;	       /* absolute */
	char source_sha[65];
	uint64_t source_size;
	/* the build: */
	const struct image_job *job;
	const char *dir; /* the temporary images/<hash>.tmp */
	char *overlay;	 /* dir/overlay.qcow2, on the user's file */
	guestfs_h *g;	 /* the session on the overlay, from launch to the kernel's download */
	struct import_facts f;
	json_t *injected, *masked;
	const char *boot_kernel;
	json_t *manifest;
};

static void title_overlay(const void *ctx, char *buf, size_t len)
{
	const struct import_job *ij = ctx;

	snprintf(buf, len, "overlay on '%s' (the file itself is only read)", ij->file);
}

static int step_overlay(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	cleanup_gfs guestfs_h *g = gfs_open(err);

	if (!g)
		return -1;
	if (guestfs_disk_create(g, ij->overlay, "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE,
				ij->file, GUESTFS_DISK_CREATE_BACKINGFORMAT, "qcow2", -1) < 0)
		return gfs_fail(g, "creating the overlay", err);
	return 0;
}

static int step_launch(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;

	ij->g = gfs_open(err);
	if (!ij->g)
		return -1;
	return gfs_launch(ij->g, ij->overlay, err);
}

static int step_inspect(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;

	return import_inspect(ij->g, &ij->f, ij->dir, b->log_path, err);
}

static int step_describe(void *ctx, struct build *b, struct zb_error *err)
{
	const struct import_facts *f = &((struct import_job *)ctx)->f;

	log_progress(LOG_NEWLINE, "      %s (%s %s), root %s, kernel %s, OpenZFS %s (%s), %s",
		     f->product ? f->product : "?", f->distro ? f->distro : "?", f->version,
		     f->root, f->kver, f->openzfs, f->module, f->systemd);
	return 0;
}

static int step_inject(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;

	ij->injected = json_object();
	ij->masked = json_array();
	return inject(ij->g, &ij->f, &ij->in, ij->injected, ij->masked, err);
}

static void title_kernel(const void *ctx, char *buf, size_t len)
{
	const struct import_job *ij = ctx;

	snprintf(buf, len, "kernel %s and its initrd", ij->f.kver);
}

static int step_kernel(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	cleanup_free char *bzimage = xasprintf("%s/bzImage", ij->dir);
	cleanup_free char *initrd = xasprintf("%s/initrd.img", ij->dir);

	/* sizes checked before anything is copied: the image is someone else's */
	if (gfs_download_capped(ij->g, ij->f.vmlinuz, bzimage, IMPORT_KERNEL_MAX, err) < 0 ||
	    gfs_download_capped(ij->g, ij->f.initrd, initrd, IMPORT_INITRD_MAX, err) < 0)
		return error_wrap(err, "downloading the kernel");
	if (gfs_shutdown(ij->g, err) < 0)
		return -1;
	guestfs_close(ij->g);
	ij->g = NULL;
	return build_kernel(b, NULL, ij->dir, &ij->boot_kernel, err);
}

static void title_disk(const void *ctx, char *buf, size_t len)
{
	const struct import_job *ij = ctx;

	if (ij->job->overlay)
		snprintf(buf, len, "disk.qcow2: the overlay, backed by '%s'", ij->file);
	else
		snprintf(buf, len, "disk.qcow2: the overlay flattened into a copy (%.0f MiB)",
			 (double)ij->source_size / (1 << 20));
}

static int step_disk(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	cleanup_free char *disk = xasprintf("%s/disk.qcow2", ij->dir);
	const char *argv[] = { "qemu-img", "convert", "-O", "qcow2", ij->overlay, disk, NULL };

	if (ij->job->overlay) {
		if (rename(ij->overlay, disk) < 0)
			return error_sys(err, errno, "renaming '%s'", ij->overlay);
		return 0;
	}
	if (build_run(b, argv, err) < 0)
		return -1;
	unlink(ij->overlay);
	return 0;
}

static int step_manifest(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	const struct import_facts *f = &ij->f;
	static const char *const names[] = { "initrd.img", "disk.qcow2", NULL };
	const char *name = strrchr(ij->file, '/') + 1;
	json_t *files = json_object();
	cleanup_free char *cmdline = NULL;
	char date[32];

	if (image_file_entries(files, ij->dir, ij->boot_kernel, names, err) < 0) {
		json_decref(files);
		return -1;
	}
	guest_files_record(&ij->in, 1, files);
	image_date_now(date);
	cmdline = f->root_uuid && *f->root_uuid ? xasprintf("root=UUID=%s ro", f->root_uuid)
						: xasprintf("root=LABEL=%s ro", f->root_label);
	ij->manifest = json_pack(
	    "{s:i, s:s, s:s, s:b, s:s, s:s, s:s, s:{s:s, s:s}, "
	    "s:{s:s, s:s, s:s, s:I, s:s, s:b}, "
	    "s:{s:s, s:s?, s:s, s:s?, s:s, s:s?, s:s?, s:s, s:b}, "
	    "s:s, s:O, s:s, s:s, "
	    "s:{s:s, s:s, s:s?, s:s, s:s, s:s?, s:O}, "
	    "s:{s:s, s:s, s:s, s:s}, s:o, s:O, s:O, s:{}}",
	    "format", 1, "zbench_version", ZBENCH_VERSION, "flavor", "cloud", "imported", 1,
	    "image_hash", ij->job->hash, "built", date, "name", name,
	    /* what `image list` and run manifests read for every image */
	    "recipe", "name", name, "path", ij->file,
	    /* the user's file, as it was read */
	    "source", "path", ij->file, "name", name, "sha256", ij->source_sha, "size",
	    (json_int_t)ij->source_size, "format", "qcow2", "overlay", ij->job->overlay,
	    /* inspection */
	    "os", "type", f->type, "distro", f->distro, "version", f->version, "product_name",
	    f->product, "root", f->root, "root_uuid", f->root_uuid, "root_label", f->root_label,
	    "systemd", f->systemd, "cloud_init", f->cloud_init,
	    /* the kernel that boots and every one in /boot */
	    "kernel_version", f->kver, "kernels", f->kernels, "zfs_version", f->zfs_version,
	    "openzfs_version", f->openzfs,
	    /* OpenZFS in the image */
	    "zfs", "module", f->module, "version", f->zfs_version, "vermagic", f->vermagic, "zpool",
	    f->zpool, "zfs", f->zfs, "userland", f->zfs_userland, "packages", f->applications,
	    /* the direct kernel boot of the cloud flavor: kernel, initrd and root disk */
	    "boot", "kernel", ij->boot_kernel, "initramfs", "initrd.img", "disk", "disk.qcow2",
	    "cmdline", cmdline, "files", files, "injected", ij->injected, "masked_units",
	    ij->masked, "steps");
	if (!ij->manifest)
		return error_set(err, EINVAL, "cannot assemble the manifest");
	return 0;
}

/* The manifest's own step is timed too: it is written last. */
static int step_write(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	cleanup_free char *path = xasprintf("%s/manifest.json", ij->dir);

	json_object_set_new(json_object_get(ij->manifest, "steps"), "import",
			    json_deep_copy(b->steps));
	return image_manifest_write(path, ij->manifest, err);
}

static const struct build_step import_steps[] = {
	{ .name = "overlay", .title = title_overlay, .run = step_overlay },
	{ .name = "starting libguestfs (under TCG: 15-60 s)", .run = step_launch },
	{ .name = "inspecting the guest", .run = step_inspect },
	{ .name = "what the guest is", .quiet = 1, .run = step_describe },
	{ .name = "injecting zbench-agent, zbench-engine and zbench-agent.service",
	  .run = step_inject },
	{ .name = "kernel and initrd", .title = title_kernel, .run = step_kernel },
	{ .name = "disk.qcow2", .title = title_disk, .run = step_disk },
	{ .name = "manifest", .run = step_manifest },
	{ .name = "write the manifest", .quiet = 1, .run = step_write },
};

/* --- the flavor -------------------------------------------------------------------------- */

/* Check the file, find what goes in, and hash the file (with progress: a cloud image is
 * hundreds of MB). */
static int import_load(struct image_job *job, struct zb_error *err)
{
	struct import_job *ij = xcalloc(1, sizeof(*ij));
	double t0;

	job->state = ij;
	guest_files_init(&ij->in);
	/* no backing or data file: the file is data, and the key covers every byte the guest
	 * sees; checked before anything else opens it (builder/image/qcow2.h) */
	if (qcow2_check_file(job->path, &ij->source_size, err) < 0)
		return -1;
	ij->file = realpath(job->path, NULL);
	if (!ij->file)
		return error_sys(err, errno, "'%s'", job->path);
	job->name = ij->file;
	if (guest_files_hash(&ij->in, err) < 0)
		return error_wrap(err, "the files to inject (build them with 'make')");
	t0 = now_monotonic();
	log_progress(0, "hashing '%s' (%.0f MiB) ...", ij->file,
		     (double)ij->source_size / (1 << 20));
	if (sha256_file_hex(ij->file, ij->source_sha, err) < 0) {
		log_progress(LOG_NEWLINE, "%s", "");
		return -1;
	}
	log_progress(LOG_NEWLINE, " %.1fs", now_monotonic() - t0);
	return 0;
}

/* The SHA-256 of the source and of every injected file, and whether the disk stays an overlay.
 */
static int import_key(struct image_job *job, struct zb_error *err)
{
	const struct import_job *ij = job->state;
	cleanup_free char *key =
	    xasprintf("zbench-import %d\nsource %s\nagent %s\nengine %s\nunit %s\noverlay %d\n",
		      IMPORT_VERSION, ij->source_sha, ij->in.agent_sha, ij->in.engine_sha,
		      ij->in.unit_sha, job->overlay);

	sha256_hex(key, strlen(key), job->hash);
	return 0;
}

static int import_build(struct image_job *job, const char *dir, struct build *b,
			struct zb_error *err)
{
	struct import_job *ij = job->state;
	int rc;

	ij->job = job;
	ij->dir = dir;
	ij->overlay = xasprintf("%s/overlay.qcow2", dir);
	/* A failed step's cause names it, and it is the user's file at fault more often than a
	 * command: no log tail. */
	b->bare_failures = 1;
	b->nsteps = build_steps_count(import_steps, ARRAY_SIZE(import_steps), ij);
	log_progress(LOG_NEWLINE, "importing '%s' as image %.12s (log: %s)", ij->file, job->hash,
		     b->log_path);
	rc = build_steps_run(import_steps, ARRAY_SIZE(import_steps), ij, b, err);
	/* Before the temporary directory with the overlay in it goes. */
	if (ij->g)
		guestfs_close(ij->g);
	ij->g = NULL;
	return rc;
}

static void import_announce(const struct image_job *job, const char *dir)
{
	char dur[32];

	log_progress(LOG_NEWLINE, "imported in %s: %s",
		     format_duration(now_monotonic() - job->t0, dur, sizeof(dur)), dir);
}

static void import_release(struct image_job *job)
{
	struct import_job *ij = job->state;

	guest_files_release(&ij->in);
	import_facts_release(&ij->f);
	json_decref(ij->injected);
	json_decref(ij->masked);
	json_decref(ij->manifest);
	free(ij->file);
	free(ij->overlay);
}

/* A file whose name says qcow2 (image_get() takes it; `zbench image` commands look at the
 * magic, image_file_is_qcow2()). */
static int import_probe(const char *path)
{
	size_t n = strlen(path);

	return n > 6 && !strcmp(path + n - 6, ".qcow2");
}

const struct image_flavor image_flavor_import = {
	.name = "import",
	.context = "importing",
	.cached_note = "imported before",
	.probe = import_probe,
	.load = import_load,
	.key = import_key,
	.build = import_build,
	.announce = import_announce,
	.release = import_release,
};
