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
#include <guestfs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "elf_deps.h"
#include "image.h"
#include "image_build.h"
#include "qcow2.h"
#include "util.h"
#include "version.h"
#include "vmlinux.h"

/* Bump when what an import writes changes: every imported image is imported again. */
#define IMPORT_VERSION 1
/* The largest kernel module we read for its .modinfo (OpenZFS's unstripped DKMS module: 40 MB). */
#define MODULE_MAX   (256u << 20)
#define IMPORT_STEPS 7

/* Where a distribution may keep zpool and zfs, and systemd itself. */
static const char *const bin_dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin",
					"/usr/local/sbin" };
static const char *const systemd_paths[] = { "/usr/lib/systemd/systemd", "/lib/systemd/systemd" };

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
static const char cloud_cfg[] =
    "# zbench image import (builder/image_import.c): the cell's seed is a NoCloud cidata volume\n"
    "datasource_list: [ NoCloud, None ]\n"
    "network: {config: disabled}\n";

/* What inspection found. Strings are malloc'd; import_facts_release() frees them. */
struct import_facts {
	char *root;				 /* the root file system's device, e.g. /dev/sda1 */
	char *type, *distro, *product, *version; /* from guestfs_inspect_* */
	char *root_uuid, *root_label;
	json_t *kernels;      /* every /boot/vmlinuz-VER, newest first */
	char *kver;	      /* the kernel that boots: the newest with a ZFS module */
	char *vmlinuz;	      /* /boot/vmlinuz-KVER */
	char *initrd;	      /* /boot/initrd.img-KVER or /boot/initramfs-KVER.img */
	char *module;	      /* /lib/modules/KVER/.../zfs.ko[.xz|.zst|.gz] */
	char *zfs_version;    /* the module's modinfo "version", e.g. 2.1.11-1+deb12u1 */
	char *openzfs;	      /* its upstream part, e.g. 2.1.11 */
	char *vermagic;	      /* the module's modinfo "vermagic" */
	char *zpool, *zfs;    /* the userland programs */
	char *zfs_userland;   /* the package that holds them (dpkg/rpm), "name version", or NULL */
	char *systemd;	      /* the systemd binary */
	int cloud_init;	      /* /etc/cloud exists */
	json_t *applications; /* the ZFS packages the image has: {name: version} */
};

static void import_facts_release(struct import_facts *f)
{
	char **s[] = { &f->root,      &f->type,		&f->distro,  &f->product,  &f->version,
		       &f->root_uuid, &f->root_label,	&f->kver,    &f->vmlinuz,  &f->initrd,
		       &f->module,    &f->zfs_version,	&f->openzfs, &f->vermagic, &f->zpool,
		       &f->zfs,	      &f->zfs_userland, &f->systemd };

	for (size_t i = 0; i < ARRAY_SIZE(s); i++)
		free(*s[i]);
	json_decref(f->kernels);
	json_decref(f->applications);
	memset(f, 0, sizeof(*f));
}

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

/* What goes into the image, with the hashes the cache key is made of. */
struct injected {
	char *agent, *engine, *unit;
	char agent_sha[65], engine_sha[65], unit_sha[65];
};

static void injected_release(struct injected *in)
{
	free(in->agent);
	free(in->engine);
	free(in->unit);
}

static int injected_load(struct injected *in, struct zb_error *err)
{
	in->agent = image_guest_binary("agent");
	in->engine = image_guest_binary("engine");
	in->unit = image_unit_path(in->agent);
	if (sha256_file_hex(in->agent, in->agent_sha, err) < 0 ||
	    sha256_file_hex(in->engine, in->engine_sha, err) < 0 ||
	    sha256_file_hex(in->unit, in->unit_sha, err) < 0)
		return error_wrap(err, "the files to inject (build them with 'make')");
	return 0;
}

static void import_key(const char *source_sha, const struct injected *in, int overlay, char out[65])
{
	char *key = xasprintf("zbench-import %d\nsource %s\nagent %s\nengine %s\nunit %s\n"
			      "overlay %d\n",
			      IMPORT_VERSION, source_sha, in->agent_sha, in->engine_sha,
			      in->unit_sha, overlay);

	sha256_hex(key, strlen(key), out);
	free(key);
}

/* --- inspection with libguestfs ---------------------------------------------------------- */

static int gfs_fail(guestfs_h *g, const char *what, struct zb_error *err)
{
	const char *e = guestfs_last_error(g);

	return error_set(err, EIO, "libguestfs: %s: %s", what, e ? e : "unknown error");
}

static void free_strings(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int gfs_is_file(guestfs_h *g, const char *path)
{
	return guestfs_is_file_opts(g, path, GUESTFS_IS_FILE_OPTS_FOLLOWSYMLINKS, 1, -1) > 0;
}

/* The first of `dirs`/`name` that is a file (following links), malloc'd, or NULL. */
static char *find_program(guestfs_h *g, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(bin_dirs); i++) {
		char *p = xasprintf("%s/%s", bin_dirs[i], name);

		if (gfs_is_file(g, p))
			return p;
		free(p);
	}
	return NULL;
}

static int cmp_version_desc(const void *a, const void *b)
{
	return strverscmp(*(char *const *)b, *(char *const *)a);
}

/* The ZFS module of kernel `kver`: the modules.dep entry named zfs.ko (whatever the directory:
 * updates/dkms for DKMS, kernel/zfs for Ubuntu, extra for kmod packages), else the usual
 * places. A malloc'd absolute path, or NULL. */
static char *find_zfs_module(guestfs_h *g, const char *kver)
{
	static const char *const places[] = { "updates/dkms", "kernel/zfs", "extra", "extra/zfs",
					      "updates" };
	static const char *const exts[] = { "", ".xz", ".zst", ".gz" };
	char *dep = xasprintf("/lib/modules/%s/modules.dep", kver), *found = NULL;
	char **lines = gfs_is_file(g, dep) ? guestfs_read_lines(g, dep) : NULL;

	for (size_t i = 0; lines && lines[i] && !found; i++) {
		char *colon = strchr(lines[i], ':');
		const char *base;

		if (!colon)
			continue;
		*colon = '\0';
		base = strrchr(lines[i], '/');
		base = base ? base + 1 : lines[i];
		if (!strncmp(base, "zfs.ko", 6) && (base[6] == '\0' || base[6] == '.'))
			found = xasprintf("/lib/modules/%s/%s", kver, lines[i]);
	}
	free_strings(lines);
	free(dep);
	for (size_t i = 0; !found && i < ARRAY_SIZE(places); i++) {
		for (size_t j = 0; !found && j < ARRAY_SIZE(exts); j++) {
			char *p =
			    xasprintf("/lib/modules/%s/%s/zfs.ko%s", kver, places[i], exts[j]);

			if (gfs_is_file(g, p))
				found = p;
			else
				free(p);
		}
	}
	if (found && !gfs_is_file(g, found)) {
		free(found);
		found = NULL;
	}
	return found;
}

/* Download the module into `tmpdir`, decompress it there if it is compressed, and read the
 * version and vermagic out of its .modinfo section (builder/elf_deps.c). */
static int module_version(guestfs_h *g, struct import_facts *f, const char *tmpdir, const char *log,
			  struct zb_error *err)
{
	const char *base = strrchr(f->module, '/') + 1;
	char *local = xasprintf("%s/%s", tmpdir, base);
	char *plain = xasprintf("%s/zfs.ko", tmpdir), *buf = NULL;
	const char *ext = base + strlen("zfs.ko");
	size_t size;
	int rc = -1, x;

	if (guestfs_download(g, f->module, local) < 0) {
		gfs_fail(g, f->module, err);
		goto out;
	}
	if (*ext) {
		const char *tool = !strcmp(ext, ".xz")	  ? "xz"
				   : !strcmp(ext, ".zst") ? "zstd"
				   : !strcmp(ext, ".gz")  ? "gzip"
							  : NULL;
		const char *argv[] = { tool, "-d", "-f", "-q", local, NULL };

		if (!tool) {
			error_set(err, EINVAL, "'%s': unknown module compression", f->module);
			goto out;
		}
		x = run_command((char *const *)argv, log, err);
		if (x != 0) {
			if (x > 0)
				error_set(err, EIO, "'%s -d' of '%s' exited with status %d", tool,
					  f->module, x);
			goto out;
		}
	}
	if (read_file(plain, MODULE_MAX, &buf, &size, err) < 0)
		goto out;
	x = elf_modinfo_get(buf, size, "version", &f->zfs_version, err);
	if (x == 0)
		x = elf_modinfo_get(buf, size, "vermagic", &f->vermagic, err);
	if (x < 0) {
		error_wrap(err, "'%s'", f->module);
		goto out;
	}
	if (!f->zfs_version) {
		error_set(err, EINVAL, "'%s' has no modinfo version", f->module);
		goto out;
	}
	f->openzfs = xasprintf("%.*s", (int)strcspn(f->zfs_version, "-"), f->zfs_version);
	rc = 0;
out:
	unlink(local);
	unlink(plain);
	free(local);
	free(plain);
	free(buf);
	return rc;
}

static int cmp_mountpoint(const void *a, const void *b)
{
	return (int)strlen(*(char *const *)a) - (int)strlen(*(char *const *)b);
}

/* Mount the guest's file systems as its fstab says, shortest mount point first. */
static int mount_guest(guestfs_h *g, const char *root, struct zb_error *err)
{
	char **mps = guestfs_inspect_get_mountpoints(g, root);
	size_t n = 0;
	char **keys;
	int rc = 0;

	if (!mps)
		return gfs_fail(g, "reading the guest's mount points", err);
	while (mps[2 * n])
		n++;
	keys = xcalloc(n + 1, sizeof(*keys));
	for (size_t i = 0; i < n; i++)
		keys[i] = mps[2 * i];
	qsort(keys, n, sizeof(*keys), cmp_mountpoint);
	for (size_t i = 0; i < n && rc == 0; i++) {
		for (size_t j = 0; j < n; j++) {
			if (mps[2 * j] != keys[i])
				continue;
			/* A swap or a missing device is not fatal: the root is what matters. */
			if (guestfs_mount(g, mps[2 * j + 1], mps[2 * j]) < 0 &&
			    !strcmp(mps[2 * j], "/"))
				rc = gfs_fail(g, "mounting the root file system", err);
			break;
		}
	}
	free(keys);
	free_strings(mps);
	return rc;
}

/* The packages that hold OpenZFS's userland, from the guest's package database. */
static void zfs_packages(guestfs_h *g, struct import_facts *f)
{
	struct guestfs_application2_list *apps = guestfs_inspect_list_applications2(g, f->root);

	f->applications = json_object();
	if (!apps)
		return;
	for (uint32_t i = 0; i < apps->len; i++) {
		const char *name = apps->val[i].app2_name;
		const char *ver = apps->val[i].app2_version;

		if (!strstr(name, "zfs"))
			continue;
		json_object_set_new(f->applications, name, json_string(ver));
		if (!f->zfs_userland && (!strcmp(name, "zfsutils-linux") || !strcmp(name, "zfs") ||
					 !strcmp(name, "zfsutils")))
			f->zfs_userland = xasprintf("%s %s", name, ver);
	}
	guestfs_free_application2_list(apps);
}

/* Inspect the guest and check that it can run a cell. A refusal returns -1 with one line that
 * names what is missing (the caller prefixes the file). */
static int inspect(guestfs_h *g, struct import_facts *f, const char *tmpdir, const char *log,
		   struct zb_error *err)
{
	char **roots = guestfs_inspect_os(g), **boot = NULL;
	size_t nk = 0;
	char **kvers = NULL;
	int rc = -1;

	if (!roots)
		return gfs_fail(g, "inspecting the image", err);
	if (!roots[0]) {
		free_strings(roots);
		return error_set(err, ENOENT, "libguestfs found no operating system in it");
	}
	if (roots[1]) {
		error_set(err, EINVAL, "it holds more than one operating system (%s, %s, ...)",
			  roots[0], roots[1]);
		free_strings(roots);
		return -1;
	}
	f->root = xstrdup(roots[0]);
	free_strings(roots);
	f->type = guestfs_inspect_get_type(g, f->root);
	f->distro = guestfs_inspect_get_distro(g, f->root);
	f->product = guestfs_inspect_get_product_name(g, f->root);
	f->version = xasprintf("%d.%d", guestfs_inspect_get_major_version(g, f->root),
			       guestfs_inspect_get_minor_version(g, f->root));
	if (!f->type || strcmp(f->type, "linux")) {
		error_set(err, EINVAL, "its operating system is '%s', not Linux",
			  f->type ? f->type : "unknown");
		goto out;
	}
	f->root_uuid = guestfs_vfs_uuid(g, f->root);
	f->root_label = guestfs_vfs_label(g, f->root);
	if ((!f->root_uuid || !*f->root_uuid) && (!f->root_label || !*f->root_label)) {
		error_set(err, EINVAL,
			  "its root file system %s has neither a UUID nor a label to boot from",
			  f->root);
		goto out;
	}
	if (mount_guest(g, f->root, err) < 0)
		goto out;

	/* Kernels: /boot/vmlinuz-VER, newest first. */
	boot = guestfs_is_dir(g, "/boot") > 0 ? guestfs_ls(g, "/boot") : NULL;
	for (size_t i = 0; boot && boot[i]; i++) {
		if (strncmp(boot[i], "vmlinuz-", 8) || !boot[i][8])
			continue;
		kvers = xrealloc(kvers, (nk + 1) * sizeof(*kvers));
		kvers[nk++] = boot[i] + 8;
	}
	if (nk == 0) {
		error_set(err, ENOENT, "it has no kernel (/boot/vmlinuz-VERSION)");
		goto out;
	}
	qsort(kvers, nk, sizeof(*kvers), cmp_version_desc);
	f->kernels = json_array();
	for (size_t i = 0; i < nk; i++)
		json_array_append_new(f->kernels, json_string(kvers[i]));
	for (size_t i = 0; i < nk && !f->module; i++) {
		f->module = find_zfs_module(g, kvers[i]);
		if (f->module)
			f->kver = xstrdup(kvers[i]);
	}
	if (!f->module) {
		error_set(err, ENOENT,
			  "no ZFS kernel module (zfs.ko) for its kernel %s%s under "
			  "/lib/modules/%s: install the distribution's ZFS module (zfs-dkms, or "
			  "the kernel's own) in the image first",
			  kvers[0], nk > 1 ? " or any other in /boot" : "", kvers[0]);
		goto out;
	}
	f->vmlinuz = xasprintf("/boot/vmlinuz-%s", f->kver);
	f->initrd = xasprintf("/boot/initrd.img-%s", f->kver);
	if (!gfs_is_file(g, f->initrd)) {
		free(f->initrd);
		f->initrd = xasprintf("/boot/initramfs-%s.img", f->kver);
		if (!gfs_is_file(g, f->initrd)) {
			error_set(err, ENOENT,
				  "no initrd for its kernel %s (/boot/initrd.img-%s or "
				  "/boot/initramfs-%s.img): the direct kernel boot needs one",
				  f->kver, f->kver, f->kver);
			goto out;
		}
	}
	f->zpool = find_program(g, "zpool");
	f->zfs = find_program(g, "zfs");
	if (!f->zpool || !f->zfs) {
		error_set(err, ENOENT,
			  "it has the ZFS module %s but no '%s' program (looked in /usr/sbin, "
			  "/sbin, /usr/bin, /bin, /usr/local/sbin): install the ZFS userland "
			  "(zfsutils-linux) in the image first",
			  f->module, f->zpool ? "zfs" : "zpool");
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(systemd_paths) && !f->systemd; i++) {
		if (gfs_is_file(g, systemd_paths[i]))
			f->systemd = xstrdup(systemd_paths[i]);
	}
	if (!f->systemd) {
		error_set(err, ENOENT,
			  "it has no systemd (/usr/lib/systemd/systemd): zbench's agent runs as a "
			  "systemd service there");
		goto out;
	}
	f->cloud_init = guestfs_is_dir(g, "/etc/cloud") > 0;
	if (module_version(g, f, tmpdir, log, err) < 0)
		goto out;
	if (f->vermagic && strncmp(f->vermagic, f->kver, strlen(f->kver))) {
		error_set(err, EINVAL, "its ZFS module %s was built for kernel '%.*s', not %s",
			  f->module, (int)strcspn(f->vermagic, " "), f->vermagic, f->kver);
		goto out;
	}
	zfs_packages(g, f);
	rc = 0;
out:
	free(kvers);
	free_strings(boot);
	return rc;
}

/* --- injection ----------------------------------------------------------------------------- */

/* Upload `src` to `dir`/`name` in the guest (dir resolved inside the guest, so /bin -> usr/bin
 * works however the link is written) with `mode`, and check what landed by its SHA-256. */
static int put_file(guestfs_h *g, const char *src, const char *sha, const char *dir,
		    const char *name, int mode, json_t *record, struct zb_error *err)
{
	char *real, *path, *sum = NULL;
	int rc = -1;

	/* mkdir -p fails on a symbolic link (/bin on merged-/usr systems): make only what is
	 * missing. */
	if ((guestfs_is_dir_opts(g, dir, GUESTFS_IS_DIR_OPTS_FOLLOWSYMLINKS, 1, -1) <= 0 &&
	     guestfs_mkdir_p(g, dir) < 0) ||
	    !(real = guestfs_realpath(g, dir)))
		return gfs_fail(g, dir, err);
	path = xasprintf("%s/%s", strcmp(real, "/") ? real : "", name);
	if (guestfs_upload(g, src, path) < 0 || guestfs_chmod(g, mode, path) < 0 ||
	    !(sum = guestfs_checksum(g, "sha256", path))) {
		gfs_fail(g, path, err);
		goto out;
	}
	if (strcmp(sum, sha)) {
		error_set(err, EIO, "'%s' in the image has SHA-256 %s, not %s", path, sum, sha);
		goto out;
	}
	json_object_set_new(record, path, json_pack("{s:s, s:s}", "source", src, "sha256", sha));
	rc = 0;
out:
	free(sum);
	free(real);
	free(path);
	return rc;
}

static int inject(guestfs_h *g, const struct import_facts *f, const struct injected *in,
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
	for (size_t i = 0; i < ARRAY_SIZE(masked_units); i++) {
		char *p = xasprintf("/etc/systemd/system/%s", masked_units[i]);
		int bad = guestfs_rm_f(g, p) < 0 || guestfs_ln_sf(g, "/dev/null", p) < 0;

		free(p);
		if (bad)
			return gfs_fail(g, "masking a unit", err);
		json_array_append_new(masked, json_string(masked_units[i]));
	}
	if (f->cloud_init) {
		if (guestfs_mkdir_p(g, "/etc/cloud/cloud.cfg.d") < 0 ||
		    guestfs_write(g, "/etc/cloud/cloud.cfg.d/90-zbench.cfg", cloud_cfg,
				  strlen(cloud_cfg)) < 0)
			return gfs_fail(g, "configuring cloud-init", err);
	}
	return 0;
}

/* --- the import ---------------------------------------------------------------------------- */

struct import_job {
	const char *file; /* absolute */
	const char *source_sha;
	uint64_t source_size;
	const struct injected *in;
	int overlay;
	const char *hash;
	const char *log;
};

/* One "[k/n] name ... 1.2s" progress line per step, as image builds print them. */
static void step_fail(struct build *b)
{
	fprintf(stderr, " failed after %.1fs\n", now_monotonic() - b->step_t0);
}

static guestfs_h *gfs_open(const char *disk, struct zb_error *err)
{
	guestfs_h *g;

	/* The direct backend (no libvirtd), and TCG where /dev/kvm exists: KVM opens but hangs
	 * on some hosts (DESIGN.md field notes). The user's own settings win. */
	if (!getenv("LIBGUESTFS_BACKEND"))
		setenv("LIBGUESTFS_BACKEND", "direct", 1);
	g = guestfs_create();
	if (!g) {
		error_sys(err, errno, "guestfs_create");
		return NULL;
	}
	guestfs_set_error_handler(g, NULL, NULL);
	if (!getenv("LIBGUESTFS_BACKEND_SETTINGS") && access("/dev/kvm", R_OK | W_OK) == 0) {
		char *settings[] = { "force_tcg", NULL };

		guestfs_set_backend_settings(g, settings);
	}
	if (guestfs_add_drive_opts(g, disk, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2", -1) < 0) {
		gfs_fail(g, "adding the disk", err);
		guestfs_close(g);
		return NULL;
	}
	return g;
}

static int import_build(const struct import_job *job, const char *dir, struct zb_error *err)
{
	struct build b = { .log_path = job->log, .nsteps = IMPORT_STEPS, .steps = json_array() };
	char *overlay = xasprintf("%s/overlay.qcow2", dir), *disk = xasprintf("%s/disk.qcow2", dir);
	char *bzimage = xasprintf("%s/bzImage", dir), *vmlinux = xasprintf("%s/vmlinux", dir);
	char *initrd = xasprintf("%s/initrd.img", dir), *mpath = xasprintf("%s/manifest.json", dir);
	json_t *injected = json_object(), *masked = json_array(), *files = json_object(), *m = NULL;
	struct import_facts f = { 0 };
	const char *boot_kernel = "vmlinux";
	char date[32], *cmdline = NULL, *dump;
	guestfs_h *g = NULL;
	int rc = -1, x;

	b.t0 = now_monotonic();
	build_step_begin(&b, "overlay on '%s' (the file itself is only read)", job->file);
	g = guestfs_create();
	if (!g) {
		error_sys(err, errno, "guestfs_create");
		goto fail;
	}
	guestfs_set_error_handler(g, NULL, NULL);
	x = guestfs_disk_create(g, overlay, "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE, job->file,
				GUESTFS_DISK_CREATE_BACKINGFORMAT, "qcow2", -1);
	if (x < 0) {
		gfs_fail(g, "creating the overlay", err);
		goto fail;
	}
	guestfs_close(g);
	g = NULL;
	build_step_end(&b);

	build_step_begin(&b, "starting libguestfs (under TCG: 15-60 s)");
	g = gfs_open(overlay, err);
	if (!g || guestfs_launch(g) < 0) {
		if (g)
			gfs_fail(g, "starting the appliance", err);
		goto fail;
	}
	build_step_end(&b);

	build_step_begin(&b, "inspecting the guest");
	if (inspect(g, &f, dir, job->log, err) < 0) {
		step_fail(&b);
		goto out;
	}
	build_step_end(&b);
	fprintf(stderr, "      %s (%s %s), root %s, kernel %s, OpenZFS %s (%s), %s\n",
		f.product ? f.product : "?", f.distro ? f.distro : "?", f.version, f.root, f.kver,
		f.openzfs, f.module, f.systemd);

	build_step_begin(&b, "injecting zbench-agent, zbench-engine and zbench-agent.service");
	if (inject(g, &f, job->in, injected, masked, err) < 0)
		goto fail;
	build_step_end(&b);

	build_step_begin(&b, "kernel %s and its initrd", f.kver);
	if (guestfs_download(g, f.vmlinuz, bzimage) < 0 ||
	    guestfs_download(g, f.initrd, initrd) < 0) {
		gfs_fail(g, "downloading the kernel", err);
		goto fail;
	}
	if (guestfs_umount_all(g) < 0 || guestfs_shutdown(g) < 0) {
		gfs_fail(g, "closing the disk", err);
		goto fail;
	}
	guestfs_close(g);
	g = NULL;
	x = vmlinux_extract(bzimage, vmlinux, job->log, err);
	if (x < 0)
		goto fail;
	if (x > 0)
		boot_kernel = "bzImage";
	build_step_end(&b);

	if (job->overlay) {
		build_step_begin(&b, "disk.qcow2: the overlay, backed by '%s'", job->file);
		if (rename(overlay, disk) < 0) {
			error_sys(err, errno, "renaming '%s'", overlay);
			goto fail;
		}
	} else {
		const char *argv[] = { "qemu-img", "convert", "-O", "qcow2", overlay, disk, NULL };

		build_step_begin(&b, "disk.qcow2: the overlay flattened into a copy (%.0f MiB)",
				 (double)job->source_size / (1 << 20));
		if (build_run(&b, argv, err) < 0)
			goto fail;
		unlink(overlay);
	}
	build_step_end(&b);

	build_step_begin(&b, "manifest");
	if ((!strcmp(boot_kernel, "vmlinux") &&
	     image_file_entry(files, "vmlinux", vmlinux, err) < 0) ||
	    image_file_entry(files, "bzImage", bzimage, err) < 0 ||
	    image_file_entry(files, "initrd.img", initrd, err) < 0 ||
	    image_file_entry(files, "disk.qcow2", disk, err) < 0)
		goto fail;
	{
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	cmdline = f.root_uuid && *f.root_uuid ? xasprintf("root=UUID=%s ro", f.root_uuid)
					      : xasprintf("root=LABEL=%s ro", f.root_label);
	{
		const char *name = strrchr(job->file, '/') + 1;

		m = json_pack(
		    "{s:i, s:s, s:s, s:b, s:s, s:s, s:s, s:{s:s, s:s}, "
		    "s:{s:s, s:s, s:s, s:I, s:s}, "
		    "s:{s:s, s:s?, s:s, s:s?, s:s, s:s?, s:s?, s:s, s:b}, "
		    "s:s, s:O, s:s, s:s, "
		    "s:{s:s, s:s, s:s?, s:s, s:s, s:s?, s:O}, "
		    "s:{s:s, s:s, s:s, s:s}, s:o, s:o, s:o, s:{s:O}}",
		    "format", 1, "zbench_version", ZBENCH_VERSION, "flavor", "cloud", "imported", 1,
		    "image_hash", job->hash, "built", date, "name", name,
		    /* what `image list` and run manifests read for every image */
		    "recipe", "name", name, "path", job->file,
		    /* the user's file, as it was read */
		    "source", "path", job->file, "name", name, "sha256", job->source_sha, "size",
		    (json_int_t)job->source_size, "format", "qcow2",
		    /* inspection */
		    "os", "type", f.type, "distro", f.distro, "version", f.version, "product_name",
		    f.product, "root", f.root, "root_uuid", f.root_uuid, "root_label", f.root_label,
		    "systemd", f.systemd, "cloud_init", f.cloud_init,
		    /* the kernel that boots and every one in /boot */
		    "kernel_version", f.kver, "kernels", f.kernels, "zfs_version", f.zfs_version,
		    "openzfs_version", f.openzfs,
		    /* OpenZFS in the image */
		    "zfs", "module", f.module, "version", f.zfs_version, "vermagic", f.vermagic,
		    "zpool", f.zpool, "zfs", f.zfs, "userland", f.zfs_userland, "packages",
		    f.applications,
		    /* the direct kernel boot of the cloud flavor: kernel, initrd and root disk */
		    "boot", "kernel", boot_kernel, "initramfs", "initrd.img", "disk", "disk.qcow2",
		    "cmdline", cmdline, "files", files, "injected", injected, "masked_units",
		    masked, "steps", "import", b.steps);
		files = injected = masked = NULL;
	}
	if (!m) {
		error_set(err, EINVAL, "cannot assemble the manifest");
		goto fail;
	}
	json_object_set_new(
	    json_object_get(m, "files"), "agent",
	    json_pack("{s:s, s:s}", "source", job->in->agent, "sha256", job->in->agent_sha));
	json_object_set_new(
	    json_object_get(m, "files"), "engine",
	    json_pack("{s:s, s:s}", "source", job->in->engine, "sha256", job->in->engine_sha));
	json_object_set_new(
	    json_object_get(m, "files"), "unit",
	    json_pack("{s:s, s:s}", "source", job->in->unit, "sha256", job->in->unit_sha));
	json_object_set_new(json_object_get(m, "source"), "overlay", json_boolean(job->overlay));
	build_step_end(&b);
	/* The manifest's own step is timed too: write it last. */
	json_object_set_new(json_object_get(m, "steps"), "import", json_deep_copy(b.steps));
	dump = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS);
	x = write_file_atomic(mpath, dump, strlen(dump), 0644, err);
	free(dump);
	if (x < 0)
		goto out;
	rc = 0;
	goto out;
fail:
	step_fail(&b);
out:
	if (g)
		guestfs_close(g);
	import_facts_release(&f);
	json_decref(injected);
	json_decref(masked);
	json_decref(files);
	json_decref(m);
	json_decref(b.steps);
	free((char *)b.step_name);
	free(overlay);
	free(disk);
	free(bzimage);
	free(vmlinux);
	free(initrd);
	free(mpath);
	free(cmdline);
	return rc;
}

/* Hash the source (printing progress: a cloud image is hundreds of MB) and derive the key. */
static int import_prepare(const char *file, struct injected *in, char **abs, char source_sha[65],
			  uint64_t *size, struct zb_error *err)
{
	double t0;

	*abs = NULL;
	/* no backing or data file: the file is data, and the key covers every byte the guest
	 * sees; before anything else opens it (builder/qcow2.h) */
	if (qcow2_check_file(file, size, err) < 0)
		return -1;
	*abs = realpath(file, NULL);
	if (!*abs)
		return error_sys(err, errno, "'%s'", file);
	if (injected_load(in, err) < 0)
		return -1;
	t0 = now_monotonic();
	fprintf(stderr, "hashing '%s' (%.0f MiB) ...", *abs, (double)*size / (1 << 20));
	fflush(stderr);
	if (sha256_file_hex(*abs, source_sha, err) < 0) {
		fputc('\n', stderr);
		return -1;
	}
	fprintf(stderr, " %.1fs\n", now_monotonic() - t0);
	return 0;
}

int image_import_lookup(const char *file, const char *cache_dir, struct image *out,
			struct zb_error *err)
{
	struct injected in = { 0 };
	char sha[65], hash[65], *abs = NULL, *dir;
	const char *cache = cache_dir ? cache_dir : image_cache_dir_default();
	uint64_t size;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (import_prepare(file, &in, &abs, sha, &size, err) < 0)
		goto out;
	for (int overlay = 0; overlay <= 1; overlay++) {
		import_key(sha, &in, overlay, hash);
		dir = xasprintf("%s/images/%s", cache, hash);
		rc = image_cache_open(dir, hash, out, err);
		free(dir);
		if (rc <= 0)
			goto out;
	}
	rc = error_set(err, ENOENT, "not imported into '%s' yet: run 'zbench image import %s'",
		       cache, file);
out:
	injected_release(&in);
	free(abs);
	return rc < 0 ? error_wrap(err, "image '%s'", file) : 0;
}

int image_import(const char *file, const char *cache_dir, unsigned flags, int overlay,
		 struct image *out, struct zb_error *err)
{
	struct injected in = { 0 };
	char sha[65], hash[65], dur[32];
	char *abs = NULL, *cache = NULL, *dir = NULL, *tmp = NULL, *log = NULL;
	uint64_t size;
	int rc = -1, lock_fd = -1;
	double t0 = now_monotonic();

	memset(out, 0, sizeof(*out));
	if (import_prepare(file, &in, &abs, sha, &size, err) < 0)
		goto out;
	import_key(sha, &in, overlay, hash);
	cache = xstrdup(cache_dir ? cache_dir : image_cache_dir_default());
	dir = xasprintf("%s/images/%s", cache, hash);
	if (!(flags & IMAGE_REBUILD)) {
		rc = image_cache_open(dir, hash, out, err);
		if (rc <= 0) {
			if (rc == 0)
				fprintf(stderr, "imported before: %s (cached)\n", dir);
			goto out;
		}
	}
	{
		char *images = xasprintf("%s/images", cache),
		     *builds = xasprintf("%s/builds", cache);

		rc = mkdir_p(images, 0755, err);
		if (rc == 0)
			rc = mkdir_p(builds, 0755, err);
		free(images);
		free(builds);
		if (rc < 0)
			goto out;
	}
	rc = image_cache_lock(xasprintf("%s/images/%s.lock", cache, hash), &lock_fd, err);
	if (rc < 0)
		goto out;
	if (!(flags & IMAGE_REBUILD)) {
		rc = image_cache_open(dir, hash, out, err);
		if (rc <= 0)
			goto out;
	}
	rc = -1;
	tmp = xasprintf("%s.tmp", dir);
	log = xasprintf("%s/builds/%s.log", cache, hash);
	if ((path_exists(tmp) && remove_tree(tmp, err) < 0) || mkdir_p(tmp, 0755, err) < 0)
		goto out;
	if (truncate(log, 0) < 0 && errno != ENOENT) {
		error_sys(err, errno, "truncating '%s'", log);
		goto out;
	}
	fprintf(stderr, "importing '%s' as image %.12s (log: %s)\n", abs, hash, log);
	{
		struct import_job job = {
			.file = abs,
			.source_sha = sha,
			.source_size = size,
			.in = &in,
			.overlay = overlay,
			.hash = hash,
			.log = log,
		};

		if (import_build(&job, tmp, err) < 0) {
			struct zb_error e;

			remove_tree(tmp, &e);
			goto out;
		}
	}
	if ((path_exists(dir) && remove_tree(dir, err) < 0)) {
		goto out;
	}
	if (rename(tmp, dir) < 0) {
		error_sys(err, errno, "renaming '%s' to '%s'", tmp, dir);
		goto out;
	}
	fprintf(stderr, "imported in %s: %s\n",
		format_duration(now_monotonic() - t0, dur, sizeof(dur)), dir);
	rc = image_cache_open(dir, hash, out, err);
	if (rc > 0)
		rc = error_set(err, ENOENT, "'%s' vanished after the import", dir);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	injected_release(&in);
	free(abs);
	free(cache);
	free(dir);
	free(tmp);
	free(log);
	return rc < 0 ? error_wrap(err, "importing '%s'", file) : 0;
}
