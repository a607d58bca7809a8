/* The cloud flavor's image (docs/images.md, "The cloud flavor"): a qcow2 disk holding a Debian
 * root that boots the conventional way (the distribution kernel, its initramfs-tools initrd,
 * systemd, cloud-init) and runs zbench-agent as a systemd service.
 *
 * A cloud recipe names a base recipe (an appliance recipe) and extra packages. Its root is a
 * derived root, roots/<hash>/, keyed by the base's root hash and the extra packages: the base's
 * root copied and apt-get installed into, so the DKMS build is never repeated. Beside it,
 * roots/<hash>/disk-SIZE.qcow2 holds that root as an ext4 file system (the slow part: the whole
 * tree through libguestfs). The image, images/<hash>/, holds disk.qcow2, a qcow2 overlay on that
 * root disk with only zbench's files in it (so a new agent costs seconds), the kernel (vmlinux,
 * bzImage) and initrd.img from the root's /boot for a direct kernel boot, and manifest.json.
 * Both disks are written with the libguestfs C API: no loop device, no mount on the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <guestfs.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "image.h"
#include "image_build.h"
#include "units.h"
#include "util.h"
#include "version.h"
#include "vmlinux.h"

/* Bump when the derived root's steps change (every cached cloud root is rebuilt: minutes). */
#define CLOUD_ROOT_VERSION 1
/* Bump when the disk assembly changes (every cloud image is reassembled). */
#define CLOUD_IMAGE_VERSION 2

/* The root file system's label: the kernel command line names it (root=LABEL=...). */
#define CLOUD_ROOT_LABEL "zbroot"
/* The systemd device unit of /dev/virtio-ports/org.zbench.0: the agent's unit is wanted by it. */
#define PORT_DEVICE_UNIT "dev-virtio\\x2dports-org.zbench.0.device"

struct cloud_recipe {
	json_t *json;
	char *path;
	const char *name;
	const char *base; /* the base recipe as written (relative to this recipe's directory) */
	char *base_path;  /* resolved */
	json_t *packages; /* installed into the copy of the base root */
	const char *format, *size;
	uint64_t size_bytes;
	char hash[65];
};

static void cloud_recipe_release(struct cloud_recipe *c)
{
	json_decref(c->json);
	free(c->path);
	free(c->base_path);
	memset(c, 0, sizeof(*c));
}

int image_recipe_is_cloud(const char *path)
{
	json_t *j = json_load_file(path, 0, NULL);
	int yes = json_is_object(j) && json_object_get(j, "base") != NULL;

	json_decref(j);
	return yes;
}

static int cloud_recipe_load(const char *path, struct cloud_recipe *c, struct zb_error *err)
{
	json_error_t je;
	json_t *v;
	size_t i;
	char *canon, *slash;

	memset(c, 0, sizeof(*c));
	c->json = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!c->json)
		return error_set(err, EINVAL, "'%s': line %d, column %d: %s", path, je.line,
				 je.column, je.text);
	c->path = xstrdup(path);
	if (json_unpack_ex(c->json, &je, JSON_STRICT, "{s:s, s?s, s:s, s:o, s:{s:s, s:s}}", "name",
			   &c->name, "description", &(const char *){ NULL }, "base", &c->base,
			   "packages", &c->packages, "disk", "format", &c->format, "size",
			   &c->size) < 0) {
		error_set(err, EINVAL, "'%s': %s", path, je.text);
		goto fail;
	}
	if (!*c->name || strchr(c->name, '/')) {
		error_set(err, EINVAL, "'%s': \"name\" must be a plain word", path);
		goto fail;
	}
	if (strcmp(c->format, "qcow2")) {
		error_set(err, EINVAL, "'%s': \"disk\".\"format\" '%s' must be 'qcow2'", path,
			  c->format);
		goto fail;
	}
	if (units_parse_size(c->size, &c->size_bytes) < 0 || c->size_bytes < (256u << 20)) {
		error_set(err, EINVAL,
			  "'%s': \"disk\".\"size\" '%s' must be a size of 256M or more", path,
			  c->size);
		goto fail;
	}
	if (!json_is_array(c->packages) || json_array_size(c->packages) == 0) {
		error_set(err, EINVAL, "'%s': \"packages\" must be a non-empty array of strings",
			  path);
		goto fail;
	}
	json_array_foreach (c->packages, i, v) {
		const char *s = json_string_value(v);

		if (!s || !*s || s[0] == '-') {
			error_set(err, EINVAL,
				  "'%s': \"packages\"[%zu] must be a package name (not empty, no "
				  "leading '-')",
				  path, i);
			goto fail;
		}
	}
	if (c->base[0] == '/') {
		c->base_path = xstrdup(c->base);
	} else {
		slash = strrchr(path, '/');
		c->base_path = slash ? xasprintf("%.*s/%s", (int)(slash - path), path, c->base)
				     : xstrdup(c->base);
	}
	canon = json_dumps(c->json, JSON_SORT_KEYS | JSON_COMPACT);
	sha256_hex(canon, strlen(canon), c->hash);
	free(canon);
	return 0;
fail:
	cloud_recipe_release(c);
	return -1;
}

/* --- the disk, with libguestfs ----------------------------------------------------------- */

static int gfs_fail(guestfs_h *g, const char *what, struct zb_error *err)
{
	const char *e = guestfs_last_error(g);

	return error_set(err, EIO, "libguestfs: %s: %s", what, e ? e : "unknown error");
}

static int gfs_write(guestfs_h *g, const char *path, const char *text, struct zb_error *err)
{
	if (guestfs_write(g, path, text, strlen(text)) < 0)
		return gfs_fail(g, path, err);
	return 0;
}

/* Files written into the image beside the agent. The timers and services masked here would
 * wake up during a cell and compete with the workload for the two emulated CPUs and the disks;
 * OpenZFS's own units are masked so that the agent loads the zfs module with the cell's
 * parameters and nothing imports or mounts a pool behind its back. */
static const char *const masked_units[] = {
	"apt-daily.timer",
	"apt-daily-upgrade.timer",
	"dpkg-db-backup.timer",
	"e2scrub_all.timer",
	"fstrim.timer",
	"man-db.timer",
	"systemd-tmpfiles-clean.timer",
	"zfs-load-module.service",
	"zfs-import-cache.service",
	"zfs-import-scan.service",
	"zfs-mount.service",
	"zfs-share.service",
	"zfs-zed.service",
	"zfs-volume-wait.service",
	"e2scrub_reap.service",
	/* cloud-init's config and final stages: everything a cell needs (datasource, hostname,
	 * write_files) is done by its init stage; each further stage is another Python start, tens
	 * of seconds under TCG, and would run beside the workload. */
	"cloud-config.service",
	"cloud-final.service",
};

static const char fstab[] = "# zbench cloud image: one ext4 file system on the whole disk\n"
			    "LABEL=" CLOUD_ROOT_LABEL " / ext4 errors=remount-ro 0 1\n";

/* cloud-init: NoCloud only (no probing of cloud metadata services, which would each wait for a
 * time-out), no network configuration (the VM has no network device), no SSH host keys (no SSH
 * server; generating them costs seconds of emulated CPU). */
static const char cloud_cfg[] =
    "# zbench (builder/image_cloud.c): the cell's seed is a NoCloud cidata volume\n"
    "datasource_list: [ NoCloud, None ]\n"
    "network: {config: disabled}\n"
    "ssh_genkeytypes: []\n"
    "ssh_deletekeys: false\n";

/* A libguestfs handle: the direct backend, and TCG where /dev/kvm opens (it hangs here: DESIGN.md
 * field notes), unless the user set either. */
static guestfs_h *gfs_open(struct zb_error *err)
{
	guestfs_h *g;

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
	return g;
}

/* Stream the root in as a tar through a pipe: numeric owners (the appliance's user names are
 * not the root's), no temporary copy on the host. apt's package lists and caches are left out:
 * apt rebuilds them (`apt-get update`), and they are a fifth of the root. */
static int tar_root_in(guestfs_h *g, const char *root, struct build *b, struct zb_error *err)
{
	int pfd[2];
	pid_t pid;
	int status, rc;
	char fdpath[32];

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error_sys(err, errno, "pipe");
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return error_sys(err, errno, "fork");
	}
	if (pid == 0) {
		int logfd = open(b->log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);

		dup2(pfd[1], 1);
		if (logfd >= 0)
			dup2(logfd, 2);
		execlp("tar", "tar", "-C", root, "--numeric-owner", "--xattrs",
		       "--exclude=./var/lib/apt/lists/*_*", "--exclude=./var/cache/apt/*.bin",
		       "-cf", "-", ".", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", pfd[0]);
	/* The read end must survive into libguestfs's open() of /dev/fd/N in this process. */
	fcntl(pfd[0], F_SETFD, 0);
	rc = guestfs_tar_in_opts(g, fdpath, "/", GUESTFS_TAR_IN_OPTS_XATTRS, 1, -1);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return gfs_fail(g, "copying the root in (tar-in)", err);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return error_set(err, EIO, "tar of '%s' failed (status %d): see the build log",
				 root, status);
	return 0;
}

/* The root disk (roots/<hash>/disk-SIZE.qcow2): one ext4 file system on the whole disk, no
 * partition table (the kernel is booted directly and mounts root=LABEL=zbroot), the root's
 * tree. The slow part (minutes under TCG), done once per derived root and size. */
static int root_disk_build(const char *disk, uint64_t size, const char *root, struct build *b,
			   struct zb_error *err)
{
	guestfs_h *g = gfs_open(err);
	int rc = -1;

	if (!g)
		return -1;
	build_log(b, "libguestfs: creating %s (%llu bytes), ext4 labelled %s", disk,
		  (unsigned long long)size, CLOUD_ROOT_LABEL);
	if (guestfs_disk_create(g, disk, "qcow2", (int64_t)size, -1) < 0) {
		gfs_fail(g, "creating the qcow2", err);
		goto out;
	}
	if (guestfs_add_drive_opts(g, disk, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2", -1) < 0 ||
	    guestfs_launch(g) < 0) {
		gfs_fail(g, "starting the appliance", err);
		goto out;
	}
	if (guestfs_mkfs(g, "ext4", "/dev/sda") < 0 ||
	    guestfs_set_label(g, "/dev/sda", CLOUD_ROOT_LABEL) < 0 ||
	    guestfs_mount(g, "/dev/sda", "/") < 0) {
		gfs_fail(g, "making the file system", err);
		goto out;
	}
	if (tar_root_in(g, root, b, err) < 0)
		goto out;
	if (guestfs_umount_all(g) < 0 || guestfs_shutdown(g) < 0) {
		gfs_fail(g, "closing the disk", err);
		goto out;
	}
	rc = 0;
out:
	guestfs_close(g);
	return rc;
}

/* zbench's files, on the mounted file system. */
static int zbench_files(guestfs_h *g, const char *agent, const char *engine, const char *unit,
			struct zb_error *err)
{
	int rc;

	if (guestfs_upload(g, agent, "/usr/local/sbin/zbench-agent") < 0 ||
	    guestfs_chmod(g, 0755, "/usr/local/sbin/zbench-agent") < 0)
		return gfs_fail(g, "installing the agent", err);
	/* The agent runs the engine as /bin/zbench-engine (merged /usr: /usr/bin). */
	if (guestfs_upload(g, engine, "/usr/bin/zbench-engine") < 0 ||
	    guestfs_chmod(g, 0755, "/usr/bin/zbench-engine") < 0)
		return gfs_fail(g, "installing the engine", err);
	/* Enabled as its [Install] says: wanted by the port's device unit. */
	if (guestfs_upload(g, unit, "/etc/systemd/system/zbench-agent.service") < 0 ||
	    guestfs_mkdir_p(g, "/etc/systemd/system/" PORT_DEVICE_UNIT ".wants") < 0 ||
	    guestfs_ln_sf(g, "/etc/systemd/system/zbench-agent.service",
			  "/etc/systemd/system/" PORT_DEVICE_UNIT
			  ".wants/zbench-agent.service") < 0)
		return gfs_fail(g, "installing and enabling zbench-agent.service", err);
	for (size_t i = 0; i < ARRAY_SIZE(masked_units); i++) {
		char *p = xasprintf("/etc/systemd/system/%s", masked_units[i]);

		rc = guestfs_rm_f(g, p) < 0 || guestfs_ln_sf(g, "/dev/null", p) < 0;
		free(p);
		if (rc)
			return gfs_fail(g, "masking a unit", err);
	}
	if (gfs_write(g, "/etc/fstab", fstab, err) < 0 ||
	    gfs_write(g, "/etc/hostname", "zbench\n", err) < 0 ||
	    gfs_write(g, "/etc/cloud/cloud.cfg.d/90-zbench.cfg", cloud_cfg, err) < 0 ||
	    /* Empty: systemd makes a machine id at each boot (each cell is a new machine). */
	    gfs_write(g, "/etc/machine-id", "", err) < 0)
		return -1;
	/* The build root's policy-rc.d (no services start during apt) has no place in a guest. */
	if (guestfs_rm_f(g, "/usr/sbin/policy-rc.d") < 0)
		return gfs_fail(g, "removing policy-rc.d", err);
	return 0;
}

/* The image's disk.qcow2: a qcow2 overlay on the root disk (`backing`, a path relative to the
 * image directory) holding only zbench's files, so a new agent costs seconds, not a copy of
 * the root. */
static int image_disk_build(const char *disk, const char *backing, const char *agent,
			    const char *engine, const char *unit, struct build *b,
			    struct zb_error *err)
{
	guestfs_h *g = gfs_open(err);
	int rc = -1;

	if (!g)
		return -1;
	build_log(b, "libguestfs: creating %s on %s", disk, backing);
	if (guestfs_disk_create(g, disk, "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE, backing,
				GUESTFS_DISK_CREATE_BACKINGFORMAT, "qcow2", -1) < 0) {
		gfs_fail(g, "creating the qcow2 overlay", err);
		goto out;
	}
	if (guestfs_add_drive_opts(g, disk, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2", -1) < 0 ||
	    guestfs_launch(g) < 0) {
		gfs_fail(g, "starting the appliance", err);
		goto out;
	}
	if (guestfs_mount(g, "/dev/sda", "/") < 0) {
		gfs_fail(g, "mounting the root disk", err);
		goto out;
	}
	if (zbench_files(g, agent, engine, unit, err) < 0)
		goto out;
	if (guestfs_umount_all(g) < 0 || guestfs_shutdown(g) < 0) {
		gfs_fail(g, "closing the disk", err);
		goto out;
	}
	rc = 0;
out:
	guestfs_close(g);
	return rc;
}

/* --- the image --------------------------------------------------------------------------- */

struct cloud_inputs {
	const struct cloud_recipe *c;
	const struct recipe *base;
	const char *root_dir;  /* roots/<derived hash> */
	const char *root_disk; /* roots/<derived hash>/disk-SIZE.qcow2 (built if missing) */
	const char *root_hash;
	const char *agent, *engine, *unit;
	const char *agent_sha, *engine_sha, *unit_sha;
	const char *image_hash;
};

static int cloud_assemble(const struct cloud_inputs *in, const char *dir, struct build *b,
			  struct zb_error *err)
{
	char *root_json = xasprintf("%s/root.json", in->root_dir);
	char *root = xasprintf("%s/root", in->root_dir);
	char *bzimage = xasprintf("%s/bzImage", dir), *vmlinux = xasprintf("%s/vmlinux", dir);
	char *initrd = xasprintf("%s/initrd.img", dir), *disk = xasprintf("%s/disk.qcow2", dir);
	char *mpath = xasprintf("%s/manifest.json", dir), *src = NULL, *dump;
	const char *kver = NULL, *boot_kernel = "vmlinux";
	json_t *info, *files = json_object(), *m = NULL, *pkgs;
	json_error_t je;
	char date[32];
	int rc = -1, x;

	info = json_load_file(root_json, 0, &je);
	if (!info || json_unpack(info, "{s:s}", "kernel_version", &kver) < 0) {
		error_set(err, EINVAL, "'%s': %s (remove '%s' to rebuild the root)", root_json,
			  info ? "no kernel_version" : je.text, in->root_dir);
		goto out;
	}

	build_step_begin(b, "kernel %s and its initrd", kver);
	src = xasprintf("%s/boot/vmlinuz-%s", root, kver);
	if (copy_file(src, bzimage, err) < 0)
		goto fail;
	x = vmlinux_extract(bzimage, vmlinux, b->log_path, err);
	if (x < 0)
		goto fail;
	if (x > 0)
		boot_kernel = "bzImage";
	free(src);
	src = xasprintf("%s/boot/initrd.img-%s", root, kver);
	if (copy_file(src, initrd, err) < 0)
		goto fail;
	build_step_end(b);

	if (!path_exists(in->root_disk)) {
		char *tmp = xasprintf("%s.tmp", in->root_disk);

		build_step_begin(b, "root disk with libguestfs (%s)", in->c->size);
		unlink(tmp);
		x = root_disk_build(tmp, in->c->size_bytes, root, b, err);
		if (x == 0 && rename(tmp, in->root_disk) < 0)
			x = error_sys(err, errno, "renaming '%s'", tmp);
		free(tmp);
		if (x < 0)
			goto fail;
		build_step_end(b);
	}
	build_step_begin(b, "disk.qcow2: zbench's files over the root disk");
	{
		/* Relative to the image directory, so the cache can move as a whole. */
		char *backing =
		    xasprintf("../../roots/%s/%s", in->root_hash, strrchr(in->root_disk, '/') + 1);

		x = image_disk_build(disk, backing, in->agent, in->engine, in->unit, b, err);
		free(backing);
		if (x < 0)
			goto fail;
	}
	build_step_end(b);

	build_step_begin(b, "manifest");
	if ((!strcmp(boot_kernel, "vmlinux") &&
	     image_file_entry(files, "vmlinux", vmlinux, err) < 0) ||
	    image_file_entry(files, "bzImage", bzimage, err) < 0 ||
	    image_file_entry(files, "initrd.img", initrd, err) < 0 ||
	    image_file_entry(files, "disk.qcow2", disk, err) < 0 ||
	    image_file_entry(files, "root_disk", in->root_disk, err) < 0)
		goto fail;
	json_object_set_new(json_object_get(files, "root_disk"), "path",
			    json_string(in->root_disk));
	json_object_set_new(files, "agent",
			    json_pack("{s:s, s:s}", "source", in->agent, "sha256", in->agent_sha));
	json_object_set_new(
	    files, "engine",
	    json_pack("{s:s, s:s}", "source", in->engine, "sha256", in->engine_sha));
	json_object_set_new(files, "unit",
			    json_pack("{s:s, s:s}", "source", in->unit, "sha256", in->unit_sha));
	{
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	pkgs = json_object_get(info, "packages");
	m = json_pack("{s:i, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:O}, s:s, s:s?, "
		      "s:O, s:{s:s, s:s, s:s, s:s}, s:o, s:{s:O}}",
		      "format", 1, "zbench_version", ZBENCH_VERSION, "flavor", "cloud",
		      "image_hash", in->image_hash, "built", date, "recipe", "name", in->c->name,
		      "path", in->c->path, "hash", in->c->hash, "root_hash", in->root_hash, "base",
		      in->base->path, "content", in->c->json, "kernel_version", kver, "zfs_version",
		      json_string_value(json_object_get(pkgs, "zfsutils-linux")), "packages", pkgs,
		      "boot", "kernel", boot_kernel, "initramfs", "initrd.img", "disk",
		      "disk.qcow2", "cmdline", "root=LABEL=" CLOUD_ROOT_LABEL " ro", "files", files,
		      "steps", "root", json_object_get(info, "steps"));
	files = NULL;
	if (!m) {
		error_set(err, EINVAL, "cannot assemble the manifest (missing root.json fields?)");
		goto fail;
	}
	json_object_set(json_object_get(m, "recipe"), "base_root_hash",
			json_string(in->base->root_hash));
	json_object_set_new(json_object_get(m, "steps"), "image", json_deep_copy(b->steps));
	dump = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS);
	x = write_file_atomic(mpath, dump, strlen(dump), 0644, err);
	free(dump);
	if (x < 0)
		goto fail;
	build_step_end(b);
	rc = 0;
	goto out;
fail:
	build_step_fail(b, err);
out:
	json_decref(info);
	json_decref(files);
	json_decref(m);
	free(root_json);
	free(root);
	free(bzimage);
	free(vmlinux);
	free(initrd);
	free(disk);
	free(mpath);
	free(src);
	return rc;
}

int cloud_image_get(const char *recipe_path, const char *cache_dir, unsigned flags,
		    struct image *out, struct zb_error *err)
{
	char *agent = image_guest_binary("agent"), *engine = image_guest_binary("engine");
	char *unit = image_unit_path(agent);
	char agent_sha[65], engine_sha[65], unit_sha[65], img_hash[65], root_hash[65];
	char *cache = NULL, *img_dir = NULL, *key, *canon, *root_dir = NULL, *base_root = NULL;
	char *root_json = NULL, *root_disk = NULL, *log = NULL, *tmp = NULL;
	struct cloud_recipe c;
	struct recipe base;
	int rc = -1, lock_fd = -1, img_lock_fd = -1, have_base = 0;
	struct build b = { 0 };
	char dur[32];

	memset(out, 0, sizeof(*out));
	if (cloud_recipe_load(recipe_path, &c, err) < 0) {
		free(agent);
		free(engine);
		free(unit);
		return error_wrap(err, "loading image recipe");
	}
	if (recipe_load(c.base_path, &base, err) < 0) {
		error_wrap(err, "'%s': base recipe", recipe_path);
		goto out;
	}
	have_base = 1;
	if (sha256_file_hex(agent, agent_sha, err) < 0 ||
	    sha256_file_hex(engine, engine_sha, err) < 0 ||
	    sha256_file_hex(unit, unit_sha, err) < 0) {
		error_wrap(err, "guest binaries and unit (build them with 'make')");
		goto out;
	}
	/* The derived root: the base root and the extra packages. */
	{
		json_t *k = json_pack("{s:s, s:O, s:i}", "base_root", base.root_hash, "packages",
				      c.packages, "zbench_cloud_root_version", CLOUD_ROOT_VERSION);

		canon = json_dumps(k, JSON_SORT_KEYS | JSON_COMPACT);
		json_decref(k);
		sha256_hex(canon, strlen(canon), root_hash);
		free(canon);
	}
	key = xasprintf("zbench-cloud %d\nrecipe %s\nroot %s\nagent %s\nengine %s\nunit %s\n",
			CLOUD_IMAGE_VERSION, c.hash, root_hash, agent_sha, engine_sha, unit_sha);
	sha256_hex(key, strlen(key), img_hash);
	free(key);

	cache = xstrdup(cache_dir ? cache_dir : image_cache_dir_default());
	img_dir = xasprintf("%s/images/%s", cache, img_hash);
	rc = image_cache_find(cache, img_hash, flags, c.name, recipe_path, "chroot, apt", out, err);
	if (rc <= 0)
		goto out;
	rc = -1;
	/* The base root (and its appliance) first: cached, or built as usual (minutes). */
	{
		struct image bimg;

		if (image_get(c.base_path, cache, IMAGE_BUILD_IF_MISSING, &bimg, err) < 0) {
			error_wrap(err, "base image");
			goto out;
		}
		image_release(&bimg);
	}
	if (image_cache_absolute(&cache, &img_dir, img_hash, err) < 0)
		goto out;
	root_dir = xasprintf("%s/roots/%s", cache, root_hash);
	root_json = xasprintf("%s/root.json", root_dir);
	root_disk = xasprintf("%s/disk-%llu.qcow2", root_dir, (unsigned long long)c.size_bytes);
	base_root = xasprintf("%s/roots/%s/root", cache, base.root_hash);
	log = xasprintf("%s/builds/%s.log", cache, img_hash);
	{
		int need_root = (flags & IMAGE_REBUILD_ROOT) || !path_exists(root_json) ||
				!path_exists(root_disk);

		/* The cache lock also covers the root disk: recipes can share a root. */
		if (need_root && image_cache_lock(xasprintf("%s/lock", cache), &lock_fd, err) < 0)
			goto out;
		if (image_cache_lock(xasprintf("%s/images/%s.lock", cache, img_hash), &img_lock_fd,
				     err) < 0)
			goto out;
	}
	if (!(flags & (IMAGE_REBUILD | IMAGE_REBUILD_ROOT))) {
		rc = image_cache_open(img_dir, img_hash, out, err);
		if (rc <= 0)
			goto out;
	}
	rc = -1;
	if (truncate(log, 0) < 0 && errno != ENOENT) {
		error_sys(err, errno, "truncating '%s'", log);
		goto out;
	}
	b.log_path = log;
	b.steps = json_array();
	b.t0 = now_monotonic();
	{
		int need_root = (flags & IMAGE_REBUILD_ROOT) || !path_exists(root_json);

		if (need_root && path_exists(root_disk) && unlink(root_disk) < 0) {
			error_sys(err, errno, "removing '%s'", root_disk);
			goto out;
		}
		b.nsteps = 3 + (need_root || !path_exists(root_disk)) +
			   (need_root ? root_derive_nsteps() : 0);
		fprintf(stderr, "building cloud image '%s' %.12s (log: %s)\n", c.name, img_hash,
			log);
		if (need_root) {
			struct recipe dr = { 0 };

			fprintf(stderr,
				"root %.12s: not cached, deriving it from %.12s (a few minutes)\n",
				root_hash, base.root_hash);
			dr.packages = c.packages;
			dr.suite = base.suite;
			snprintf(dr.root_hash, sizeof(dr.root_hash), "%s", root_hash);
			tmp = xasprintf("%s.tmp", root_dir);
			if (path_exists(tmp) && remove_tree(tmp, err) < 0)
				goto out;
			if (mkdir_p(tmp, 0755, err) < 0 ||
			    root_derive(&dr, base_root, cache, tmp, &b, err) < 0) {
				error_wrap(err, "deriving root %.12s", root_hash);
				goto out;
			}
			if (path_exists(root_dir) && remove_tree(root_dir, err) < 0)
				goto out;
			if (rename(tmp, root_dir) < 0) {
				error_sys(err, errno, "renaming '%s'", tmp);
				goto out;
			}
		} else {
			fprintf(stderr, "root %.12s: cached\n", root_hash);
		}
	}
	free(tmp);
	tmp = xasprintf("%s.tmp", img_dir);
	if ((path_exists(tmp) && remove_tree(tmp, err) < 0) || mkdir_p(tmp, 0755, err) < 0)
		goto out;
	{
		struct cloud_inputs in = {
			.c = &c,
			.base = &base,
			.root_dir = root_dir,
			.root_hash = root_hash,
			.root_disk = root_disk,
			.agent = agent,
			.engine = engine,
			.unit = unit,
			.agent_sha = agent_sha,
			.engine_sha = engine_sha,
			.unit_sha = unit_sha,
			.image_hash = img_hash,
		};

		if (cloud_assemble(&in, tmp, &b, err) < 0) {
			struct zb_error e;

			remove_tree(tmp, &e);
			error_wrap(err, "assembling cloud image %.12s", img_hash);
			goto out;
		}
	}
	if ((path_exists(img_dir) && remove_tree(img_dir, err) < 0) || rename(tmp, img_dir) < 0) {
		error_sys(err, errno, "renaming '%s' to '%s'", tmp, img_dir);
		goto out;
	}
	fprintf(stderr, "image '%s' %.12s ready in %s: %s\n", c.name, img_hash,
		format_duration(now_monotonic() - b.t0, dur, sizeof(dur)), img_dir);
	rc = image_cache_open(img_dir, img_hash, out, err);
	if (rc > 0)
		rc = error_set(err, ENOENT, "image '%s' vanished after its build", img_dir);
out:
	if (rc < 0)
		error_wrap(err, "image '%s'", recipe_path);
	if (lock_fd >= 0)
		close(lock_fd);
	if (img_lock_fd >= 0)
		close(img_lock_fd);
	json_decref(b.steps);
	free((char *)b.step_name);
	if (have_base)
		recipe_release(&base);
	cloud_recipe_release(&c);
	free(agent);
	free(engine);
	free(unit);
	free(cache);
	free(img_dir);
	free(root_dir);
	free(root_json);
	free(root_disk);
	free(base_root);
	free(log);
	free(tmp);
	return rc < 0 ? -1 : 0;
}
