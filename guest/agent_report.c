/* What the guest really has, told to the host: each disk as the guest sees it (step disks, before
 * the pool, so the console keeps it even if the pool step fails) and the effective configuration
 * (step report: pool and target properties, layout, module parameters, versions, disks). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "agent.h"

/* "property\tvalue\tsource" lines into {"property": {"value": v, "source": s}}. */
static json_t *parse_get(char *out)
{
	json_t *obj = json_object();
	char *save = NULL;

	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4] = { 0 };
		int n = 0;

		for (char *p = line; n < 4; n++) {
			f[n] = p;
			p = strchr(p, '\t');
			if (!p) {
				n++;
				break;
			}
			*p++ = '\0';
		}
		if (n >= 3)
			json_object_set_new(obj, f[0],
					    json_pack("{s:s, s:s}", "value", f[1], "source", f[2]));
	}
	return obj;
}

static json_t *module_parameters(const char *mod)
{
	char dir[128];
	json_t *obj = json_object();
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "/sys/module/%s/parameters", mod);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		char path[400];
		char *v;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		v = read_small(path);
		if (v)
			json_object_set_new(obj, de->d_name, json_string(v));
		free(v);
	}
	if (d)
		closedir(d);
	return obj;
}

/* Into `o`, what sysfs says of the whole disk `dev`: size, sector sizes, rotational, write cache,
 * discard, udev's watch, model. */
static void disk_sysfs(json_t *o, const char *dev)
{
	static const char *const queue[] = { "rotational", "logical_block_size",
					     "physical_block_size", "write_cache",
					     "discard_max_bytes" };
	char path[600], *v;

	for (size_t q = 0; q < sizeof(queue) / sizeof(queue[0]); q++) {
		snprintf(path, sizeof(path), "/sys/block/%s/queue/%s", dev, queue[q]);
		v = read_small(path);
		if (v && q == 3) /* "write back" or "write through" */
			json_object_set_new(o, queue[q], json_string(v));
		else if (v)
			json_object_set_new(o, queue[q], json_integer(strtoll(v, NULL, 10)));
		free(v);
	}
	snprintf(path, sizeof(path), "/sys/block/%s/size", dev);
	v = read_small(path);
	if (v)
		json_object_set_new(o, "size", json_integer(strtoll(v, NULL, 10) * 512));
	free(v);
	/* udevd (systemd 252) keeps /run/udev/watch/bMAJ:MIN for a device it watches. */
	snprintf(path, sizeof(path), "/sys/block/%s/dev", dev);
	v = read_small(path);
	if (v) {
		struct stat st;

		snprintf(path, sizeof(path), "/run/udev/watch/b%s", v);
		json_object_set_new(o, "udev_watch", json_boolean(lstat(path, &st) == 0));
	}
	free(v);
	snprintf(path, sizeof(path), "/sys/block/%s/device/model", dev);
	v = read_small(path);
	if (v)
		json_object_set_new(o, "model", json_string(v));
	free(v);
}

/* What the guest sees of each disk of the job (sysfs of the whole disk its by-id path names):
 * kernel name, size, sector sizes, rotational, write cache, discard. Records the kernel names
 * for telemetry. */
static json_t *disk_report(void)
{
	json_t *disks = json_object_get(agent.job, "disks"), *out = json_object(), *d;
	size_t i;

	agent.disk_devs = json_object();
	json_array_foreach (disks, i, d) {
		const char *name = json_string_value(json_object_get(d, "name"));
		const char *gp = json_string_value(json_object_get(d, "guest_path"));
		char real[512], *line;
		const char *dev;
		json_t *o;

		if (!name || !gp || !realpath(gp, real))
			continue;
		dev = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
		o = json_pack("{s:s, s:s}", "guest_path", gp, "dev", dev);
		json_object_set_new(agent.disk_devs, name, json_string(dev));
		disk_sysfs(o, dev);
		line = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		logf_console("disk %s: %s", name, line ? line : "");
		free(line);
		json_object_set_new(out, name, o);
	}
	return out;
}

/* Before the pool: each disk's by-id path must be there, and the console keeps what the guest
 * saw of it even if the pool step fails. */
void step_disks(void)
{
	json_t *d;
	size_t i;

	json_array_foreach (json_object_get(agent.job, "disks"), i, d) {
		const char *gp = json_string_value(json_object_get(d, "guest_path"));

		if (gp)
			wait_for_path(gp, 30);
	}
	agent.disk_info = disk_report();
}

/* Tell the host what the guest really has: pool and target properties, layout, module
 * parameters, versions, disks. */
void step_report(void)
{
	const char *pname = job_pool_name();
	const char *target = job_target_name();
	char ds[512];
	char *zpool_get, *zfs_get, *status, *zfs_version;
	char *const a_pool[] = { "/sbin/zpool",		  "get", "-Hp",		"-o",
				 "property,value,source", "all", (char *)pname, NULL };
	char *const a_ds[] = { "/sbin/zfs", "get", "-Hp", "-o", "property,value,source",
			       "all",	    ds,	   NULL };
	char *const a_status[] = { "/sbin/zpool", "status", "-P", (char *)pname, NULL };
	struct bg_cmd c_pool, c_ds, c_status;
	json_t *params = json_object();
	const char *mod;
	json_t *v;
	struct utsname u;

	snprintf(ds, sizeof(ds), "%s/%s", pname, target);
	/* the three at once: each is mostly its own start (libzfs linked); under TCG about 0.25 s
	 * in a row, 0.11 s at once (their console lines, docs/performance.md) */
	bg_start(&c_pool, a_pool, "/run/zbench-report-pool.log");
	bg_start(&c_ds, a_ds, "/run/zbench-report-target.log");
	bg_start(&c_status, a_status, "/run/zbench-report-status.log");
	zpool_get = bg_wait(&c_pool);
	zfs_get = bg_wait(&c_ds);
	status = bg_wait(&c_status);
	zfs_version = read_small("/sys/module/zfs/version");
	uname(&u);
	json_object_set_new(params, "zfs", module_parameters("zfs"));
	json_object_foreach (job_config("module_params"), mod, v) {
		if (strcmp(mod, "zfs"))
			json_object_set_new(params, mod, module_parameters(mod));
	}
	send_msg(json_pack("{s:s, s:o, s:o, s:s, s:o, s:s?, s:s, s:s, s:o}", "type", "effective",
			   "pool", parse_get(zpool_get), "target", parse_get(zfs_get),
			   "zpool_status", status, "module_params", params, "zfs_version",
			   zfs_version, "kernel", u.release, "target_path", agent.target_path,
			   "disks", json_incref(agent.disk_info)));
	free(zpool_get);
	free(zfs_get);
	free(status);
	free(zfs_version);
}
