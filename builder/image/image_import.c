/* `zbench image import FILE.qcow2`: a user's own cloud image as a cached image of the cloud
 * flavor (docs/images.md, "Importing a cloud image").
 *
 * The user's file is never written, and root never runs QEMU's code on it: zbench checks its
 * header itself and hashes it, then hands an open descriptor to the sandbox (sandbox.h), a child
 * running as the unprivileged QEMU user. There, on a copy, qemu-img gives its second opinion and
 * one libguestfs session inspects the guest (OS, kernels, the ZFS module for the kernel that will
 * boot, zpool/zfs, systemd), refuses what cannot run a cell, and otherwise injects the static
 * agent, the engine and the agent's systemd unit, and downloads the kernel and initrd for a
 * direct kernel boot. The copy is the self-contained disk.qcow2 (with --overlay, a thin overlay
 * on it is, rebased onto the user's file). The parent takes back data only: the facts, checked,
 * and files under fixed names, checked and copied into the cache entry. The entry's key is the
 * SHA-256 of the source and of every injected file, so importing the same file again is a cache
 * hit that never starts the sandbox.
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
#include "sandbox.h"
#include "vmlinux.h"

/* Bump when what an import writes changes: every imported image is imported again. */
#define IMPORT_VERSION	   1
#define IMPORT_KERNEL_MAX  (256ll << 20) /* a bzImage (Debian's: 8 MiB) */
#define IMPORT_INITRD_MAX  (1ll << 30)	 /* an initrd (Debian's: 30-70 MiB) */
#define IMPORT_VMLINUX_MAX (256ll << 20) /* what decompress.c lets a payload become */

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

/* --- in the sandbox: injection ------------------------------------------------------------ */

/* Upload `src` to `dir`/`name` in the guest (dir resolved inside the guest, so /bin -> usr/bin
 * works however the link is written) with `mode`, check what landed by its SHA-256, and append
 * the guest path to `record`. */
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
	json_array_append_new(record, json_string(path));
	return 0;
}

static int inject(guestfs_h *g, const struct import_facts *f, const struct guest_files *in,
		  json_t *record, struct zb_error *err)
{
	const char *wants = "/etc/systemd/system/multi-user.target.wants";

	/* the sandbox's copies of the three files (copy_in()), checked by their SHA-256 */
	if (put_file(g, "agent", in->agent_sha, "/usr/local/sbin", "zbench-agent", 0755, record,
		     err) < 0 ||
	    /* The agent runs the workload as /bin/zbench-engine. */
	    put_file(g, "engine", in->engine_sha, "/bin", "zbench-engine", 0755, record, err) < 0 ||
	    put_file(g, "unit", in->unit_sha, "/etc/systemd/system", "zbench-agent.service", 0644,
		     record, err) < 0)
		return error_wrap(err, "injecting");
	if (guestfs_mkdir_p(g, wants) < 0 ||
	    guestfs_ln_sf(g, "/etc/systemd/system/zbench-agent.service",
			  "/etc/systemd/system/multi-user.target.wants/zbench-agent.service") < 0)
		return gfs_fail(g, "enabling zbench-agent.service", err);
	if (gfs_mask_units(g, masked_units, ARRAY_SIZE(masked_units), NULL, err) < 0)
		return -1;
	if (f->cloud_init && (guestfs_mkdir_p(g, "/etc/cloud/cloud.cfg.d") < 0 ||
			      guestfs_write(g, "/etc/cloud/cloud.cfg.d/90-zbench.cfg", cloud_cfg,
					    strlen(cloud_cfg)) < 0))
		return gfs_fail(g, "configuring cloud-init", err);
	return 0;
}

/* --- the job --------------------------------------------------------------------------------- */

/* What the sandbox leaves in its directory for the parent: each a regular file of at most
 * `max` bytes, copied into the cache entry under the same name (0: no limit but the disk's). */
static const struct import_output {
	const char *name;
	int64_t max;
} outputs[] = {
	{ "bzImage", IMPORT_KERNEL_MAX },
	{ "vmlinux", IMPORT_VMLINUX_MAX },
	{ "initrd.img", IMPORT_INITRD_MAX },
	{ "disk.qcow2", 0 },
};

/* A job's state: the file, what goes into the image, and the build's progress. */
struct import_job {
	struct guest_files in; /* injected: the agent, the engine, the unit */
	char *file;	       /* absolute */
	int fd;		       /* the file, open since it was checked and hashed */
	char source_sha[65];
	uint64_t source_size;
	/* the build: */
	const struct image_job *job;
	const char *dir; /* the temporary images/<hash>.tmp */
	struct build *b;
	struct sandbox sb;
	int sb_fd[4]; /* the child's numbers for the file, the agent, the engine, the unit */
	int sb_step;  /* the child's step whose progress line is open, or -1 */
	struct import_facts f;
	json_t *injected;
	const char *boot_kernel;
	json_t *manifest;
};

/* --- in the sandbox: the steps --------------------------------------------------------------- */

/* The child's steps, in order: their progress lines are printed by the parent. */
enum { SB_COPY, SB_LAUNCH, SB_INSPECT, SB_INJECT, SB_KERNEL, SB_OVERLAY, SB_NSTEPS };

/* Copy what `fd` holds (from its start) into the new file `name` of the sandbox's directory. */
static int copy_in(int fd, const char *name, struct zb_error *err)
{
	int out = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	off_t off = 0;
	char buf[65536];
	ssize_t n;

	if (out < 0)
		return error_sys(err, errno, "creating '%s'", name);
	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write_all(out, buf, (size_t)n) < 0) {
			close(out);
			return error_sys(err, errno, "copying '%s'", name);
		}
		off += n;
	}
	if (close(out) < 0)
		return error_sys(err, errno, "copying '%s'", name);
	return 0;
}

/* The user's file and the three files to inject, copied into the directory (the user's file
 * may not be readable by the sandbox's user, and nothing of the host is reachable from here
 * but what it is given); then QEMU's second opinion on the copy. The disk libguestfs writes is
 * disk.qcow2: the copy itself, or with --overlay a new overlay on it. */
static int sb_copy(struct import_job *ij, struct zb_error *err)
{
	const char *disk = ij->job->overlay ? "source.qcow2" : "disk.qcow2";
	cleanup_free char *src = xasprintf("%s/source.qcow2", ij->sb.dir);
	cleanup_gfs guestfs_h *g = NULL;

	if (copy_in(ij->sb_fd[0], disk, err) < 0 || copy_in(ij->sb_fd[1], "agent", err) < 0 ||
	    copy_in(ij->sb_fd[2], "engine", err) < 0 || copy_in(ij->sb_fd[3], "unit", err) < 0)
		return -1;
	if (qcow2_info_file(disk, err) < 0)
		return -1;
	if (!ij->job->overlay)
		return 0;
	g = gfs_open(err);
	if (!g)
		return -1;
	if (guestfs_disk_create(g, "disk.qcow2", "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE, src,
				GUESTFS_DISK_CREATE_BACKINGFORMAT, "qcow2", -1) < 0)
		return gfs_fail(g, "creating the overlay", err);
	return 0;
}

/* The kernel and its initrd (sizes checked before anything is copied), then the vmlinux in the
 * kernel (decompressed here too: the payload is the image's). */
static int sb_kernel(struct import_job *ij, guestfs_h *g, const char *log, struct zb_error *err)
{
	int x;

	if (gfs_download_capped(g, ij->f.vmlinuz, "bzImage", IMPORT_KERNEL_MAX, err) < 0 ||
	    gfs_download_capped(g, ij->f.initrd, "initrd.img", IMPORT_INITRD_MAX, err) < 0)
		return error_wrap(err, "downloading the kernel");
	if (gfs_shutdown(g, err) < 0)
		return -1;
	x = vmlinux_extract("bzImage", "vmlinux", log, err);
	if (x < 0)
		return -1;
	ij->boot_kernel = x > 0 ? "bzImage" : "vmlinux";
	return 0;
}

/* --overlay: the overlay names the user's file as its backing file (header only: -u opens
 * no backing file), as the cache entry will use it. */
static int sb_overlay(struct import_job *ij, const char *log, struct zb_error *err)
{
	char *argv[] = { "qemu-img", "rebase", "-u",	"-f",	      "qcow2", "-b",
			 ij->file,   "-F",     "qcow2", "disk.qcow2", NULL };
	int rc = run_command(argv, log, err);

	if (rc > 0)
		error_set(err, EIO, "qemu-img rebase exited with status %d", rc);
	return rc != 0 ? -1 : 0;
}

static int sb_report(struct import_job *ij, int out, struct zb_error *err)
{
	json_t *r = json_pack("{s:o, s:O, s:s}", "facts", import_facts_json(&ij->f), "injected",
			      ij->injected, "boot_kernel", ij->boot_kernel);
	cleanup_free char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;

	json_decref(r);
	if (!text)
		return error_set(err, EINVAL, "cannot assemble the report");
	return sandbox_result(out, text, err);
}

/* Everything that reads the image, as the sandbox's user (sandbox.h). */
static int sandboxed(void *ctx, int out, struct zb_error *err)
{
	struct import_job *ij = ctx;
	cleanup_free char *log = xasprintf("%s/sandbox.log", ij->sb.dir);
	cleanup_free char *tmp = xasprintf("%s/tmp", ij->sb.dir);
	cleanup_gfs guestfs_h *g = NULL;

	sandbox_step(out, SB_COPY);
	if (sb_copy(ij, err) < 0)
		return -1;
	sandbox_step(out, SB_LAUNCH);
	g = gfs_open(err);
	if (!g || gfs_launch(g, "disk.qcow2", err) < 0)
		return -1;
	sandbox_step(out, SB_INSPECT);
	if (import_inspect(g, &ij->f, tmp, log, err) < 0)
		return -1;
	sandbox_step(out, SB_INJECT);
	ij->injected = json_array();
	if (inject(g, &ij->f, &ij->in, ij->injected, err) < 0)
		return -1;
	sandbox_step(out, SB_KERNEL);
	if (sb_kernel(ij, g, log, err) < 0)
		return -1;
	if (ij->job->overlay) {
		sandbox_step(out, SB_OVERLAY);
		if (sb_overlay(ij, log, err) < 0)
			return -1;
	}
	return sb_report(ij, out, err);
}

/* --- the parent: the sandbox's progress and results ------------------------------------------ */

static void sb_title(const struct import_job *ij, int step, char *buf, size_t len)
{
	switch (step) {
	case SB_COPY:
		snprintf(buf, len, "a copy of '%s' for the sandbox (the file itself is only read)",
			 ij->file);
		break;
	case SB_LAUNCH:
		snprintf(buf, len, "starting libguestfs as user '%s' (under TCG: 15-60 s)",
			 ij->sb.user.name);
		break;
	case SB_INSPECT:
		snprintf(buf, len, "inspecting the guest");
		break;
	case SB_INJECT:
		snprintf(buf, len,
			 "injecting zbench-agent, zbench-engine and zbench-agent.service");
		break;
	case SB_KERNEL:
		snprintf(buf, len, "the kernel and its initrd");
		break;
	default:
		snprintf(buf, len, "disk.qcow2: an overlay backed by '%s'", ij->file);
	}
}

static void sb_on_step(void *ctx, int step)
{
	struct import_job *ij = ctx;
	char title[512];

	if (ij->sb_step >= 0)
		build_step_end(ij->b);
	sb_title(ij, step, title, sizeof(title));
	build_step_begin(ij->b, "%s", title);
	ij->sb_step = step;
}

static void title_sandbox(const void *ctx, char *buf, size_t len)
{
	snprintf(buf, len, "the sandbox and its libguestfs appliance (built once per host)");
}

/* The sandbox's directory, its user, the appliance, and what the child is given: the user's
 * file (open since it was checked and hashed) and the three files to inject. */
static int step_sandbox(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	const char *const files[] = { ij->in.agent, ij->in.engine, ij->in.unit };

	if (sandbox_init(&ij->sb, b->log_path, err) < 0)
		return -1;
	ij->sb_fd[0] = sandbox_give(&ij->sb, ij->fd, err);
	ij->fd = -1;
	for (int i = 0; i < 3 && ij->sb_fd[i] >= 0; i++) {
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return error_sys(err, errno, "opening '%s'", files[i]);
		ij->sb_fd[i + 1] = sandbox_give(&ij->sb, fd, err);
	}
	return ij->sb_fd[0] < 0 || ij->sb_fd[3] < 0 ? -1 : 0;
}

/* The report: facts (import_facts_from_json()), the three guest paths the files went to (each
 * absolute, printable, ending in its file's name), and which kernel boots. */
static int take_report(struct import_job *ij, const char *text, struct zb_error *err)
{
	static const char *const names[] = { "/zbench-agent", "/zbench-engine",
					     "/zbench-agent.service" };
	const char *const src[] = { ij->in.agent, ij->in.engine, ij->in.unit };
	const char *const sha[] = { ij->in.agent_sha, ij->in.engine_sha, ij->in.unit_sha };
	json_t *r = json_loads(text, JSON_REJECT_DUPLICATES, NULL), *paths, *p;
	const char *boot;
	size_t i;
	int rc = -1;

	paths = json_object_get(r, "injected");
	boot = json_string_value(json_object_get(r, "boot_kernel"));
	if (!json_is_object(r) || json_object_size(r) != 3 || !json_is_array(paths) ||
	    json_array_size(paths) != 3 || !boot ||
	    (strcmp(boot, "vmlinux") && strcmp(boot, "bzImage"))) {
		error_set(err, EPROTO, "the sandbox's report is not what it should be");
		goto out;
	}
	ij->boot_kernel = !strcmp(boot, "vmlinux") ? "vmlinux" : "bzImage";
	if (import_facts_from_json(&ij->f, json_object_get(r, "facts"), err) < 0) {
		error_wrap(err, "the sandbox's report");
		goto out;
	}
	ij->injected = json_object();
	json_array_foreach (paths, i, p) {
		const char *s = json_string_value(p);
		size_t n = s ? strlen(s) : 0, m = strlen(names[i]);

		if (!s || s[0] != '/' || n > 1024 || n < m || strcmp(s + n - m, names[i]) ||
		    strpbrk(s, "\n\r\t\033")) {
			error_set(err, EPROTO, "the sandbox reports a strange path for '%s'",
				  names[i] + 1);
			goto out;
		}
		json_object_set_new(ij->injected, s,
				    json_pack("{s:s, s:s}", "source", src[i], "sha256", sha[i]));
	}
	rc = 0;
out:
	json_decref(r);
	return rc;
}

/* One file the sandbox left: a regular file (never a link), within its limit, and the disk a
 * qcow2 that names no file of the host (or, with --overlay, exactly the user's file), copied
 * into the cache entry as ours. */
static int take_file(struct import_job *ij, const struct outdir *dest,
		     const struct import_output *o, struct zb_error *err)
{
	int fd = outdir_open_read(&ij->sb.d, o->name, err);
	struct stat st;
	uint64_t size;
	int rc;

	if (fd < 0)
		return error_wrap(err, "the sandbox's '%s'", o->name);
	if (fstat(fd, &st) < 0 || (o->max && st.st_size > o->max)) {
		close(fd);
		return error_set(err, EFBIG, "the sandbox's '%s' is larger than %lld MiB", o->name,
				 (long long)(o->max >> 20));
	}
	rc = 0;
	if (!strcmp(o->name, "disk.qcow2"))
		rc = ij->job->overlay ? qcow2_overlay_check_fd(fd, ij->file, err)
				      : qcow2_check_fd(fd, &size, err);
	if (rc == 0)
		rc = outdir_write_from(dest, o->name, fd, o->name, 0644, err);
	close(fd);
	return rc < 0 ? error_wrap(err, "the sandbox's '%s'", o->name) : 0;
}

/* Run the sandbox (its steps' progress lines come from sb_on_step()), then take its report and
 * files, on a line of their own. */
static int step_sandboxed(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	cleanup_free char *report = NULL;
	struct outdir dest = { .fd = -1 };
	int rc;

	ij->b = b;
	ij->sb_step = -1;
	rc = sandbox_run(&ij->sb, sandboxed, ij, SB_NSTEPS, sb_on_step, &report, err);
	if (ij->sb_step >= 0 && rc < 0)
		return build_step_fail(b, err);
	if (ij->sb_step >= 0)
		build_step_end(b);
	if (rc < 0)
		return -1;
	build_step_begin(b, "the sandbox's report and files: checked, copied into the cache");
	rc = take_report(ij, report, err);
	if (rc == 0)
		rc = outdir_open(&dest, ij->dir, 0, 0, err);
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(outputs); i++) {
		if (strcmp(outputs[i].name, "vmlinux") || !strcmp(ij->boot_kernel, "vmlinux"))
			rc = take_file(ij, &dest, &outputs[i], err);
	}
	outdir_close(&dest);
	if (rc < 0)
		return build_step_fail(b, err);
	build_step_end(b);
	return 0;
}

static int step_describe(void *ctx, struct build *b, struct zb_error *err)
{
	const struct import_facts *f = &((struct import_job *)ctx)->f;

	log_progress(LOG_NEWLINE, "      %s (%s %s), root %s, kernel %s, OpenZFS %s (%s), %s",
		     f->product ? f->product : "?", f->distro ? f->distro : "?", f->version,
		     f->root, f->kver, f->openzfs, f->module, f->systemd);
	return 0;
}

static int step_manifest(void *ctx, struct build *b, struct zb_error *err)
{
	struct import_job *ij = ctx;
	const struct import_facts *f = &ij->f;
	static const char *const names[] = { "initrd.img", "disk.qcow2", NULL };
	const char *name = strrchr(ij->file, '/') + 1;
	json_t *files = json_object(), *masked = json_array();
	cleanup_free char *cmdline = NULL;
	char date[32];

	if (image_file_entries(files, ij->dir, ij->boot_kernel, names, err) < 0) {
		json_decref(files);
		json_decref(masked);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(masked_units); i++)
		json_array_append_new(masked, json_string(masked_units[i]));
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
	    "s:{s:s, s:s, s:s, s:s}, s:o, s:O, s:o, s:{}}",
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
	    "cmdline", cmdline, "files", files, "injected", ij->injected, "masked_units", masked,
	    "steps");
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
	{ .name = "sandbox", .title = title_sandbox, .run = step_sandbox },
	/* the sandbox's own steps, one progress line each (sb_on_step()), and taking its files */
	{ .name = "the sandbox's work", .quiet = 1, .run = step_sandboxed },
	{ .name = "what the guest is", .quiet = 1, .run = step_describe },
	{ .name = "manifest", .run = step_manifest },
	{ .name = "write the manifest", .quiet = 1, .run = step_write },
};

/* --- the flavor -------------------------------------------------------------------------- */

/* Check the file, find what goes in, and hash the file (with progress: a cloud image is
 * hundreds of MB). */
static int import_load(struct image_job *job, struct zb_error *err)
{
	struct import_job *ij = xcalloc(1, sizeof(*ij));
	cleanup_free char *fdpath = NULL;
	double t0;

	job->state = ij;
	guest_files_init(&ij->in);
	/* Opened once: checked, hashed and handed to the sandbox through this descriptor. No
	 * backing or data file: the file is data, and the key covers every byte the guest sees;
	 * the header is checked by our own reading before anything else opens the file, and QEMU
	 * (qemu-img info, then libguestfs) reads it only in the sandbox (builder/image/qcow2.h). */
	ij->fd = open(job->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (ij->fd < 0)
		return error_sys(err, errno, "opening it");
	if (qcow2_check_fd(ij->fd, &ij->source_size, err) < 0)
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
	fdpath = xasprintf("/proc/self/fd/%d", ij->fd);
	if (sha256_file_hex(fdpath, ij->source_sha, err) < 0) {
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
	/* A failed step's cause names it, and it is the user's file at fault more often than a
	 * command: no log tail. */
	b->bare_failures = 1;
	/* the sandbox's steps and the taking of its files are counted here: step_sandboxed() is
	 * quiet */
	b->nsteps = build_steps_count(import_steps, ARRAY_SIZE(import_steps), ij) + SB_NSTEPS -
		    !job->overlay + 1;
	log_progress(LOG_NEWLINE, "importing '%s' as image %.12s (log: %s)", ij->file, job->hash,
		     b->log_path);
	rc = build_steps_run(import_steps, ARRAY_SIZE(import_steps), ij, b, err);
	/* the sandbox's directory goes whatever happened: nothing of it is kept */
	sandbox_release(&ij->sb);
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
	json_decref(ij->manifest);
	sandbox_release(&ij->sb);
	if (ij->fd >= 0)
		close(ij->fd);
	free(ij->file);
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
