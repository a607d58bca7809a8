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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/log.h"
#include "core/util.h"
#include "core/version.h"
#include "guest/units.h"
#include "guestfs_util.h"
#include "image_flavor.h"

/* Bump when the derived root's steps change (every cached cloud root is rebuilt: minutes). */
#define CLOUD_ROOT_VERSION 2
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
    "# zbench (builder/image/image_cloud.c): the cell's seed is a NoCloud cidata volume\n"
    "datasource_list: [ NoCloud, None ]\n"
    "network: {config: disabled}\n"
    "ssh_genkeytypes: []\n"
    "ssh_deletekeys: false\n";

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
	cleanup_gfs guestfs_h *g = gfs_open(err);

	if (!g)
		return -1;
	build_log(b, "libguestfs: creating %s (%llu bytes), ext4 labelled %s", disk,
		  (unsigned long long)size, CLOUD_ROOT_LABEL);
	if (guestfs_disk_create(g, disk, "qcow2", (int64_t)size, -1) < 0)
		return gfs_fail(g, "creating the qcow2", err);
	if (gfs_launch(g, disk, err) < 0)
		return -1;
	if (guestfs_mkfs(g, "ext4", "/dev/sda") < 0 ||
	    guestfs_set_label(g, "/dev/sda", CLOUD_ROOT_LABEL) < 0 ||
	    guestfs_mount(g, "/dev/sda", "/") < 0)
		return gfs_fail(g, "making the file system", err);
	if (tar_root_in(g, root, b, err) < 0)
		return -1;
	return gfs_shutdown(g, err);
}

/* zbench's files, on the mounted file system. */
static int zbench_files(guestfs_h *g, const char *agent, const char *engine, const char *unit,
			struct zb_error *err)
{
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
	if (gfs_mask_units(g, masked_units, ARRAY_SIZE(masked_units), NULL, err) < 0)
		return -1;
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
static int image_disk_build(const char *disk, const char *backing, const struct guest_files *gf,
			    struct build *b, struct zb_error *err)
{
	cleanup_gfs guestfs_h *g = gfs_open(err);

	if (!g)
		return -1;
	build_log(b, "libguestfs: creating %s on %s", disk, backing);
	if (guestfs_disk_create(g, disk, "qcow2", -1, GUESTFS_DISK_CREATE_BACKINGFILE, backing,
				GUESTFS_DISK_CREATE_BACKINGFORMAT, "qcow2", -1) < 0)
		return gfs_fail(g, "creating the qcow2 overlay", err);
	if (gfs_launch(g, disk, err) < 0)
		return -1;
	if (guestfs_mount(g, "/dev/sda", "/") < 0)
		return gfs_fail(g, "mounting the root disk", err);
	if (zbench_files(g, gf->agent, gf->engine, gf->unit, err) < 0)
		return -1;
	return gfs_shutdown(g, err);
}

/* --- the image: a table of steps --------------------------------------------------------- */

/* A job's state: the recipe, its base, what goes into the image, and the build's progress. */
struct cloud_job {
	struct cloud_recipe c;
	struct recipe base;
	struct guest_files g;
	char root_hash[65]; /* the derived root's */
	/* the build (paths under the absolute cache): */
	struct build *b;
	const char *hash;
	const char *dir;  /* the temporary images/<hash>.tmp */
	char *root_dir;	  /* roots/<derived hash> */
	char *root;	  /* its root/ */
	char *root_disk;  /* roots/<derived hash>/disk-SIZE.qcow2 (built if missing) */
	char *base_root;  /* roots/<base root hash>/root */
	json_t *info;	  /* root.json */
	const char *kver; /* from root.json */
	const char *boot_kernel;
};

static void title_kernel(const void *ctx, char *buf, size_t len)
{
	const struct cloud_job *cj = ctx;

	snprintf(buf, len, "kernel %s and its initrd", cj->kver);
}

static int step_kernel(void *ctx, struct build *b, struct zb_error *err)
{
	struct cloud_job *cj = ctx;
	cleanup_free char *vmlinuz = xasprintf("%s/boot/vmlinuz-%s", cj->root, cj->kver);
	cleanup_free char *src = xasprintf("%s/boot/initrd.img-%s", cj->root, cj->kver);
	cleanup_free char *initrd = xasprintf("%s/initrd.img", cj->dir);

	if (build_kernel(b, vmlinuz, cj->dir, &cj->boot_kernel, err) < 0)
		return -1;
	return copy_file(src, initrd, err);
}

static int root_disk_missing(const void *ctx)
{
	const struct cloud_job *cj = ctx;

	return !path_exists(cj->root_disk);
}

static void title_root_disk(const void *ctx, char *buf, size_t len)
{
	const struct cloud_job *cj = ctx;

	snprintf(buf, len, "root disk with libguestfs (%s)", cj->c.size);
}

static int step_root_disk(void *ctx, struct build *b, struct zb_error *err)
{
	struct cloud_job *cj = ctx;
	cleanup_free char *tmp = xasprintf("%s.tmp", cj->root_disk);

	unlink(tmp);
	if (root_disk_build(tmp, cj->c.size_bytes, cj->root, b, err) < 0)
		return -1;
	if (rename(tmp, cj->root_disk) < 0)
		return error_sys(err, errno, "renaming '%s'", tmp);
	return 0;
}

static int step_disk(void *ctx, struct build *b, struct zb_error *err)
{
	struct cloud_job *cj = ctx;
	cleanup_free char *disk = xasprintf("%s/disk.qcow2", cj->dir);
	/* Relative to the image directory, so the cache can move as a whole. */
	cleanup_free char *backing =
	    xasprintf("../../roots/%s/%s", cj->root_hash, strrchr(cj->root_disk, '/') + 1);

	return image_disk_build(disk, backing, &cj->g, b, err);
}

/* The files of the manifest: kernels, initrd, both disks, what zbench put in. */
static json_t *cloud_files(const struct cloud_job *cj, struct zb_error *err)
{
	static const char *const names[] = { "initrd.img", "disk.qcow2", NULL };
	cleanup_json json_t *files = json_object();

	if (image_file_entries(files, cj->dir, cj->boot_kernel, names, err) < 0 ||
	    image_file_entry(files, "root_disk", cj->root_disk, err) < 0)
		return NULL;
	json_object_set_new(json_object_get(files, "root_disk"), "path",
			    json_string(cj->root_disk));
	guest_files_record(&cj->g, 1, files);
	return steal_pointer(&files);
}

static int step_manifest(void *ctx, struct build *b, struct zb_error *err)
{
	struct cloud_job *cj = ctx;
	cleanup_free char *path = xasprintf("%s/manifest.json", cj->dir);
	json_t *pkgs = json_object_get(cj->info, "packages");
	json_t *files = cloud_files(cj, err);
	cleanup_json json_t *m = NULL;
	char date[32];

	if (!files)
		return -1;
	image_date_now(date);
	m = json_pack("{s:i, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:O}, s:s, s:s?, "
		      "s:O, s:{s:s, s:s, s:s, s:s}, s:o, s:{s:O}}",
		      "format", 1, "zbench_version", ZBENCH_VERSION, "flavor", "cloud",
		      "image_hash", cj->hash, "built", date, "recipe", "name", cj->c.name, "path",
		      cj->c.path, "hash", cj->c.hash, "root_hash", cj->root_hash, "base",
		      cj->base.path, "content", cj->c.json, "kernel_version", cj->kver,
		      "zfs_version", json_string_value(json_object_get(pkgs, "zfsutils-linux")),
		      "packages", pkgs, "boot", "kernel", cj->boot_kernel, "initramfs",
		      "initrd.img", "disk", "disk.qcow2", "cmdline",
		      "root=LABEL=" CLOUD_ROOT_LABEL " ro", "files", files, "steps", "root",
		      json_object_get(cj->info, "steps"));
	if (!m)
		return error_set(err, EINVAL,
				 "cannot assemble the manifest (missing root.json fields?)");
	json_object_set_new(json_object_get(m, "recipe"), "base_root_hash",
			    json_string(cj->base.root_hash));
	json_object_set_new(json_object_get(m, "steps"), "image", json_deep_copy(b->steps));
	return image_manifest_write(path, m, err);
}

static const struct build_step cloud_steps[] = {
	{ .name = "kernel and initrd", .title = title_kernel, .run = step_kernel },
	{ .name = "root disk",
	  .title = title_root_disk,
	  .wanted = root_disk_missing,
	  .run = step_root_disk },
	{ .name = "disk.qcow2: zbench's files over the root disk", .run = step_disk },
	{ .name = "manifest", .run = step_manifest },
};

/* --- the flavor -------------------------------------------------------------------------- */

static int cloud_load(struct image_job *job, struct zb_error *err)
{
	struct cloud_job *cj = xcalloc(1, sizeof(*cj));

	job->state = cj;
	guest_files_init(&cj->g);
	if (cloud_recipe_load(job->path, &cj->c, err) < 0)
		return -1;
	job->name = cj->c.name;
	return 0;
}

static int cloud_key(struct image_job *job, struct zb_error *err)
{
	struct cloud_job *cj = job->state;
	cleanup_free char *canon = NULL;
	cleanup_free char *key = NULL;
	json_t *k;

	if (!cj->base.json && recipe_load(cj->c.base_path, &cj->base, err) < 0)
		return error_wrap(err, "'%s': base recipe", job->path);
	if (guest_files_hash(&cj->g, err) < 0)
		return error_wrap(err, "guest binaries and unit (build them with 'make')");
	/* The derived root: the base root and the extra packages. */
	k = json_pack("{s:s, s:O, s:i}", "base_root", cj->base.root_hash, "packages",
		      cj->c.packages, "zbench_cloud_root_version", CLOUD_ROOT_VERSION);
	canon = json_dumps(k, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(k);
	sha256_hex(canon, strlen(canon), cj->root_hash);
	key = xasprintf("zbench-cloud %d\nrecipe %s\nroot %s\nagent %s\nengine %s\nunit %s\n",
			CLOUD_IMAGE_VERSION, cj->c.hash, cj->root_hash, cj->g.agent_sha,
			cj->g.engine_sha, cj->g.unit_sha);
	sha256_hex(key, strlen(key), job->hash);
	return 0;
}

/* The base recipe's image (and so its root) comes first: cached, or built as usual. */
static const char *cloud_base(const struct image_job *job)
{
	const struct cloud_job *cj = job->state;

	return cj->c.base_path;
}

/* The paths of the derived root under the (absolute) cache. */
static void cloud_paths(const struct image_job *job, struct cloud_job *cj)
{
	if (cj->root_dir)
		return;
	cj->root_dir = xasprintf("%s/roots/%s", job->cache, cj->root_hash);
	cj->root = xasprintf("%s/root", cj->root_dir);
	cj->root_disk =
	    xasprintf("%s/disk-%llu.qcow2", cj->root_dir, (unsigned long long)cj->c.size_bytes);
	cj->base_root = xasprintf("%s/roots/%s/root", job->cache, cj->base.root_hash);
}

static int root_json_missing(const struct cloud_job *cj)
{
	cleanup_free char *root_json = xasprintf("%s/root.json", cj->root_dir);

	return !path_exists(root_json);
}

/* The cache lock also covers the root disk: recipes can share a root. */
static int cloud_needs_cache_lock(const struct image_job *job)
{
	struct cloud_job *cj = job->state;

	cloud_paths(job, cj);
	return (job->flags & IMAGE_REBUILD_ROOT) || root_json_missing(cj) ||
	       !path_exists(cj->root_disk);
}

/* build_entry()'s callback for the derived root. */
static int root_derive_in(void *ctx, const char *tmp, struct zb_error *err)
{
	const struct image_job *job = ctx;
	struct cloud_job *cj = job->state;
	struct recipe dr = { .packages = cj->c.packages, .suite = cj->base.suite };

	snprintf(dr.root_hash, sizeof(dr.root_hash), "%s", cj->root_hash);
	if (root_derive(&dr, cj->base_root, job->cache, tmp, cj->b, err) < 0)
		return error_wrap(err, "deriving root %.12s", cj->root_hash);
	return 0;
}

static int cloud_build(struct image_job *job, const char *dir, struct build *b,
		       struct zb_error *err)
{
	struct cloud_job *cj = job->state;
	int need_root;

	cloud_paths(job, cj);
	cj->b = b;
	cj->hash = job->hash;
	cj->dir = dir;
	need_root = (job->flags & IMAGE_REBUILD_ROOT) || root_json_missing(cj);
	/* A new root needs a new root disk. */
	if (need_root && path_exists(cj->root_disk) && unlink(cj->root_disk) < 0)
		return error_sys(err, errno, "removing '%s'", cj->root_disk);
	b->nsteps = build_steps_count(cloud_steps, ARRAY_SIZE(cloud_steps), cj) +
		    (need_root ? root_derive_nsteps() : 0);
	log_progress(LOG_NEWLINE, "building cloud image '%s' %.12s (log: %s)", cj->c.name,
		     job->hash, b->log_path);
	if (need_root) {
		log_progress(LOG_NEWLINE,
			     "root %.12s: not cached, deriving it from %.12s (a few minutes)",
			     cj->root_hash, cj->base.root_hash);
		if (build_entry(cj->root_dir, 1, root_derive_in, job, err) < 0)
			return -1;
	} else {
		log_progress(LOG_NEWLINE, "root %.12s: cached", cj->root_hash);
	}
	if (root_info_load(cj->root_dir, &cj->info, &cj->kver, err) < 0 ||
	    build_steps_run(cloud_steps, ARRAY_SIZE(cloud_steps), cj, b, err) < 0)
		return error_wrap(err, "assembling cloud image %.12s", job->hash);
	return 0;
}

static void cloud_release(struct image_job *job)
{
	struct cloud_job *cj = job->state;

	cloud_recipe_release(&cj->c);
	recipe_release(&cj->base);
	guest_files_release(&cj->g);
	free(cj->root_dir);
	free(cj->root);
	free(cj->root_disk);
	free(cj->base_root);
	json_decref(cj->info);
}

const struct image_flavor image_flavor_cloud = {
	.name = "cloud",
	.flags = IMAGE_FLAVOR_ABSOLUTE_CACHE,
	.needs_root = "chroot, apt",
	.context = "image",
	.load_context = "loading image recipe",
	.probe = image_recipe_is_cloud,
	.load = cloud_load,
	.key = cloud_key,
	.base = cloud_base,
	.needs_cache_lock = cloud_needs_cache_lock,
	.build = cloud_build,
	.release = cloud_release,
};
