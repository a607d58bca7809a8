/* ZFS in the guest: the module with the job's parameters (loaded from boot when the host asked,
 * then checked against the job), the pool, and the datasets and zvols, one of which is the
 * workload's target. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

static struct bg_cmd zfs_preload; /* `modprobe zfs` from boot, if the host asked for it */

/* ZFS's kernel debug log says what the ioctl behind a failing zpool/zfs command tripped on (a
 * vdev's "open error=2 timeout=..." behind "no such pool or dataset"): its last lines go to the
 * console when a step fails after the module is loaded, before the failure itself. */
void zfs_dbgmsg_to_console(void)
{
	char buf[8192], *line, *save = NULL;
	size_t len = 0, keep = 1536; /* the tail kept: about 15 lines */
	ssize_t n;
	int fd = open("/proc/spl/kstat/zfs/dbgmsg", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		if (len > keep) { /* keep only the tail, from a line start */
			char *nl = memchr(buf + len - keep, '\n', keep);
			size_t from = nl ? (size_t)(nl + 1 - buf) : len - keep;

			memmove(buf, buf + from, len - from);
			len -= from;
		}
	}
	close(fd);
	buf[len] = '\0';
	if (!len)
		return;
	fprintf(stderr, "zbench-agent: ZFS debug log (last lines):\n");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(stderr, "  %s\n", line);
}

/* ---- the module ---------------------------------------------------------------------------- */

/* The host puts the job's module parameters on the kernel command line as MODULE.PARAM=VALUE
 * (kmod's modprobe applies them when it loads MODULE) and adds zbench.preload=zfs, so zfs.ko,
 * the slowest thing the agent waits for, loads while the rest boots, the host answers hello and
 * udev's coldplug runs; step_zfs_module waits for it and checks the parameters against the job.
 * It starts after the virtio modules, not before: started first, it held the virtio modprobe
 * (and so the port and hello) back for most of its own load, and a busy host then missed the
 * boot deadline, which is about the guest reaching the port (docs/performance.md). */
void zfs_preload_start(void)
{
	static char *const argv[] = { "/sbin/modprobe", "zfs", NULL };
	char *cmdline = read_small("/proc/cmdline");

	if (cmdline && strstr(cmdline, "zbench.preload=zfs")) {
		logf_console("loading zfs in the background (parameters from the command line)");
		bg_start(&zfs_preload, argv, "/run/zbench-preload.log");
	}
	free(cmdline);
}

void zfs_preload_wait(void)
{
	if (zfs_preload.pid) {
		char *out = bg_wait(&zfs_preload);

		logf_console("zfs loaded in the background");
		free(out);
	}
}

/* Does a parameter's sysfs text say what the job asked for? Numbers compare as numbers
 * (sysfs prints an int -1 as "-1", a ulong as its digits), booleans as Y/N, strings as they
 * are or as the selected "[choice]" of a list (zfs_vdev_raidz_impl prints every choice). */
static int param_matches(const char *have, const char *want)
{
	unsigned long long h, w;
	char *he, *we, sel[96];

	if (!strcmp(have, want))
		return 1;
	errno = 0;
	h = strtoull(have, &he, 0);
	w = strtoull(want, &we, 0);
	if (!errno && he != have && !*he && we != want && !*we)
		return h == w;
	if (!strcmp(have, "Y") || !strcmp(have, "N")) {
		int wb = !strcmp(want, "1") || !strcasecmp(want, "y") || !strcasecmp(want, "yes") ||
			 !strcasecmp(want, "on") || !strcasecmp(want, "true");
		int wn = !strcmp(want, "0") || !strcasecmp(want, "n") || !strcasecmp(want, "no") ||
			 !strcasecmp(want, "off") || !strcasecmp(want, "false");

		return (wb || wn) && (have[0] == 'Y') == wb;
	}
	snprintf(sel, sizeof(sel), "[%s]", want);
	return strstr(have, sel) != NULL;
}

/* The job's module_params are the source of truth: every parameter it names must read back
 * from /sys/module/MODULE/parameters as asked. The kernel only warns about a parameter the
 * module does not have, and a value on the command line could be lost on the way: both fail
 * the step here instead of running the cell with a configuration nobody asked for. */
static void check_module_params(json_t *params)
{
	const char *mod, *k;
	json_t *kv, *v;

	json_object_foreach (params, mod, kv) {
		json_object_foreach (kv, k, v) {
			char path[300], tmp[64], *have;
			const char *want = scalar_str(v, tmp, sizeof(tmp));

			snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", mod, k);
			have = read_small(path);
			if (!have)
				fail_step(NULL, "module '%s' has no parameter '%s' (no %s)", mod, k,
					  path);
			if (!param_matches(have, want)) {
				char msg[256];

				snprintf(msg, sizeof(msg), "%s", have);
				free(have);
				fail_step(NULL,
					  "module parameter %s.%s is '%s', the job asked for '%s'",
					  mod, k, msg, want);
			}
			free(have);
		}
	}
}

/* Load every module named in job.config.module_params with its parameters, dependencies first
 * (zfs last, so spl's parameters apply), then zfs itself even if no parameter was given. When
 * zfs was preloaded from boot (zfs_preload_start) with the parameters from the command line,
 * wait for it and load only the named modules that are not there yet. Then check every
 * parameter against the job. */
void step_zfs_module(void)
{
	json_t *params = job_config("module_params");
	const char *mod;
	json_t *kv;

	zfs_preload_wait();
	for (int pass = 0; pass < 2; pass++) {
		json_object_foreach (params, mod, kv) {
			struct argv_buf a = { 0 };
			const char *k;
			json_t *v;
			char *out, sys[160];

			if ((pass == 0) == !strcmp(mod, "zfs"))
				continue;
			snprintf(sys, sizeof(sys), "/sys/module/%s", mod);
			if (access(sys, F_OK) == 0)
				continue; /* loaded: modprobe would not apply parameters anyway */
			argv_add(&a, "/sbin/modprobe");
			argv_add(&a, "%s", mod);
			json_object_foreach (kv, k, v) {
				char tmp[64];

				argv_add(&a, "%s=%s", k, scalar_str(v, tmp, sizeof(tmp)));
			}
			out = must_run(a.v);
			free(out);
			argv_free(&a);
		}
	}
	if (access("/sys/module/zfs", F_OK) < 0) {
		static char *const argv[] = { "/sbin/modprobe", "zfs", NULL };

		free(must_run(argv));
	}
	warm_set_params(params);
	check_module_params(params);
}

/* ---- the pool ------------------------------------------------------------------------------ */

/* Guest device path of a disk by name, from the job's disk table (the host knows the bus). */
static const char *disk_path(const char *name)
{
	json_t *disks = json_object_get(agent.job, "disks");
	size_t i;
	json_t *d;

	json_array_foreach (disks, i, d) {
		if (!strcmp(json_string_value(json_object_get(d, "name")), name))
			return json_string_value(json_object_get(d, "guest_path"));
	}
	fail_step(NULL, "disk '%s' is not in the job's disk table", name);
}

/* "-o KEY=VALUE" for each of a JSON object's members. */
static void add_properties(struct argv_buf *a, json_t *props)
{
	const char *k;
	json_t *v;

	json_object_foreach (props, k, v) {
		char tmp[64];

		argv_add(a, "-o");
		argv_add(a, "%s=%s", k, scalar_str(v, tmp, sizeof(tmp)));
	}
}

static void add_vdev_group(struct argv_buf *a, json_t *vdev)
{
	const char *type = json_string_value(json_object_get(vdev, "type"));
	size_t i;
	json_t *d;

	if (type && strcmp(type, "stripe"))
		argv_add(a, "%s", type);
	json_array_foreach (json_object_get(vdev, "disks"), i, d) {
		const char *p = disk_path(json_string_value(d));

		wait_for_path(p, 30);
		argv_add(a, "%s", p);
	}
}

void step_pool(void)
{
	/* the classes of vdev groups after the data vdevs, in zpool create's order */
	static const char *const classes[] = { "log", "special" };
	json_t *pool = job_config("pool");
	const char *pname = json_string_value(json_object_get(pool, "name"));
	struct argv_buf a = { 0 };
	json_t *v, *vdev;
	size_t i;

	argv_add(&a, "/sbin/zpool");
	argv_add(&a, "create");
	argv_add(&a, "-f");
	add_properties(&a, json_object_get(pool, "properties"));
	argv_add(&a, "%s", pname);
	json_array_foreach (json_object_get(pool, "vdevs"), i, vdev)
		add_vdev_group(&a, vdev);
	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
		json_t *groups = json_object_get(pool, classes[c]);

		if (!json_array_size(groups))
			continue;
		argv_add(&a, "%s", classes[c]);
		json_array_foreach (groups, i, vdev)
			add_vdev_group(&a, vdev);
	}
	if (json_array_size(json_object_get(pool, "cache"))) {
		argv_add(&a, "cache");
		json_array_foreach (json_object_get(pool, "cache"), i, v)
			argv_add(&a, "%s", disk_path(json_string_value(v)));
	}
	logf_console("creating pool '%s' (%d arguments)", pname, a.n);
	free(must_run(a.v));
	argv_free(&a);
}

/* ---- datasets and zvols -------------------------------------------------------------------- */

static void create_dataset(const char *pool, json_t *ds, int zvol)
{
	const char *name = json_string_value(json_object_get(ds, "name"));
	struct argv_buf a = { 0 };

	argv_add(&a, "/sbin/zfs");
	argv_add(&a, "create");
	if (zvol) {
		argv_add(&a, "-V");
		argv_add(&a, "%s", json_string_value(json_object_get(ds, "size")));
	}
	add_properties(&a, json_object_get(ds, "properties"));
	argv_add(&a, "%s/%s", pool, name);
	free(must_run(a.v));
	argv_free(&a);
}

/* Where the zfs file system `name` ("tank/bench") is mounted, from /proc/self/mounts: 1 and
 * the path in buf, or 0 if it is not mounted. */
static int zfs_mount_point(const char *name, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[1024];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char src[512], dst[512], type[32];

		/* "tank/bench /tank/bench zfs rw,... 0 0"; spaces in paths are octal escapes */
		if (sscanf(line, "%511s %511s %31s", src, dst, type) == 3 && !strcmp(type, "zfs") &&
		    !strcmp(src, name) && !strchr(dst, '\\')) {
			snprintf(buf, len, "%s", dst);
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* The target dataset's mount point into agent.target_path. */
static void target_dataset(const char *pname, const char *name)
{
	char path[512], *mnt;
	char *const argv[] = { "/sbin/zfs", "get", "-Hp", "-o", "value", "mountpoint", path, NULL };

	snprintf(path, sizeof(path), "%s/%s", pname, name);
	/* the kernel's mount table says where it is without starting zfs(8) */
	if (zfs_mount_point(path, agent.target_path, sizeof(agent.target_path)))
		return;
	mnt = must_run(argv);
	mnt[strcspn(mnt, "\n")] = '\0';
	snprintf(agent.target_path, sizeof(agent.target_path), "%s", mnt);
	free(mnt);
}

/* ---- a file system on a zvol -------------------------------------------------------------- */

#define ZVOL_FS_ROOT "/run/zbench-fs"

/* Mount the zvol file system of type `fs` on `dev` at `dir` (created). xfs is a module in
 * Debian's kernels; ext4 is built in, and modprobe of it is harmless. */
static void zvol_fs_mount(const char *fs, const char *dev, const char *dir)
{
	char *const modprobe[] = { "/sbin/modprobe", (char *)fs, NULL };

	if (mkdir(ZVOL_FS_ROOT, 0755) < 0 && errno != EEXIST)
		fail_step(NULL, "mkdir %s: %s", ZVOL_FS_ROOT, strerror(errno));
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		fail_step(NULL, "mkdir %s: %s", dir, strerror(errno));
	(void)run_cmd(modprobe, NULL); /* built in: modprobe fails, mount still works */
	if (mount(dev, dir, fs, 0, NULL) < 0)
		fail_step(NULL, "mount %s (%s) on %s: %s", dev, fs, dir, strerror(errno));
}

/* mkfs on a new zvol (`fs` "ext4" or "xfs"; the host checked that the image has the tool) and
 * mount it under ZVOL_FS_ROOT; its mount point into `dir`. */
static void zvol_fs_make(const char *fs, const char *dev, const char *name, char *dir, size_t len)
{
	char tool[32];
	char *const argv[] = { tool, !strcmp(fs, "xfs") ? "-f" : "-F", "-q", (char *)dev, NULL };

	snprintf(tool, sizeof(tool), "/sbin/mkfs.%s", fs);
	if (access(tool, X_OK) < 0)
		fail_step(NULL, "zvol '%s': file system %s needs %s, which the image lacks", name,
			  fs, tool);
	free(must_run(argv));
	snprintf(dir, len, "%s/%s", ZVOL_FS_ROOT, name);
	for (char *p = dir + strlen(ZVOL_FS_ROOT) + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	zvol_fs_mount(fs, dev, dir);
}

void target_export_import(void)
{
	const char *pname = job_pool_name();
	char *const export[] = { "/sbin/zpool", "export", (char *)pname, NULL };
	char *const import[] = { "/sbin/zpool", "import", "-d", "/dev", (char *)pname, NULL };

	if (agent.target_fs[0] && umount2(agent.target_path, 0) < 0)
		fail_step(NULL, "umount %s: %s", agent.target_path, strerror(errno));
	free(must_run(export));
	free(must_run(import));
	if (agent.target_fs[0]) {
		wait_for_path(agent.target_fs_dev, 60);
		zvol_fs_mount(agent.target_fs, agent.target_fs_dev, agent.target_path);
	} else if (agent.target_is_dev) {
		wait_for_path(agent.target_path, 60);
	}
}

void step_datasets(void)
{
	const char *pname = job_pool_name();
	const char *target = job_target_name();
	json_t *ds;
	size_t i;

	json_array_foreach (job_config("datasets"), i, ds) {
		const char *name = json_string_value(json_object_get(ds, "name"));

		create_dataset(pname, ds, 0);
		if (target && !strcmp(name, target))
			target_dataset(pname, name);
	}
	json_array_foreach (job_config("zvols"), i, ds) {
		const char *name = json_string_value(json_object_get(ds, "name"));

		const char *fs = json_string_value(json_object_get(ds, "filesystem"));
		char dev[512], dir[512];

		create_dataset(pname, ds, 1);
		snprintf(dev, sizeof(dev), "/dev/zvol/%s/%s", pname, name);
		if (fs) {
			wait_for_path(dev, 60);
			zvol_fs_make(fs, dev, name, dir, sizeof(dir));
		}
		if (!target || strcmp(name, target))
			continue;
		if (fs) {
			snprintf(agent.target_path, sizeof(agent.target_path), "%s", dir);
			snprintf(agent.target_fs, sizeof(agent.target_fs), "%s", fs);
			snprintf(agent.target_fs_dev, sizeof(agent.target_fs_dev), "%s", dev);
		} else {
			snprintf(agent.target_path, sizeof(agent.target_path), "%s", dev);
			agent.target_is_dev = 1;
			wait_for_path(agent.target_path, 60);
		}
	}
	if (!agent.target_path[0])
		fail_step(NULL, "workload target '%s' is neither a dataset nor a zvol of the job",
			  target ? target : "(none)");
}
