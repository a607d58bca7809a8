/* Kernel modules for the appliance's initramfs: the recipe's modules with their dependencies
 * (modules.dep), decompressed, indexed by the root's own depmod; and the disk buses the kernel
 * then drives, from its config and the modules staged (the manifest's "buses"). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "core/cleanup.h"
#include "core/disk_bus.h"
#include "core/util.h"
#include "image.h"
#include "image_stage.h"

/* --- kernel modules ---------------------------------------------------------------------- */

struct moddep {
	char *name; /* normalised: '-' as '_' */
	char *rel;  /* path relative to /lib/modules/VER, e.g. kernel/drivers/virtio/virtio.ko */
	char *deps; /* the space-separated dependency paths, transitively complete */
};

static char *module_name(const char *path_or_name)
{
	const char *base = strrchr(path_or_name, '/');
	char *name = xstrdup(base ? base + 1 : path_or_name);
	char *dot = strstr(name, ".ko");

	if (dot)
		*dot = '\0';
	for (char *p = name; *p; p++) {
		if (*p == '-')
			*p = '_';
	}
	return name;
}

struct modules {
	struct moddep *dep;
	size_t ndep;
	char **builtin;
	size_t nbuiltin;
	char **want; /* relative paths to copy */
	size_t nwant;
	json_t *included, *builtin_used, *absent;
};

static void modules_release(struct modules *m)
{
	for (size_t i = 0; i < m->ndep; i++) {
		free(m->dep[i].name);
		free(m->dep[i].rel);
		free(m->dep[i].deps);
	}
	for (size_t i = 0; i < m->nbuiltin; i++)
		free(m->builtin[i]);
	for (size_t i = 0; i < m->nwant; i++)
		free(m->want[i]);
	free(m->dep);
	free(m->builtin);
	free(m->want);
	json_decref(m->included);
	json_decref(m->builtin_used);
	json_decref(m->absent);
}

static int modules_load(struct modules *m, const char *moddir, struct zb_error *err)
{
	cleanup_free char *dep = xasprintf("%s/modules.dep", moddir);
	char *path, *text, *save = NULL, *line;

	if (read_file(dep, 64 << 20, &text, NULL, err) < 0)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = '\0';
		m->dep = xrealloc(m->dep, (m->ndep + 1) * sizeof(*m->dep));
		m->dep[m->ndep].name = module_name(line);
		m->dep[m->ndep].rel = xstrdup(line);
		m->dep[m->ndep].deps = xstrdup(colon + 1);
		m->ndep++;
	}
	free(text);
	path = xasprintf("%s/modules.builtin", moddir);
	if (read_file(path, 64 << 20, &text, NULL, err) == 0) {
		save = NULL;
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			m->builtin = xrealloc(m->builtin, (m->nbuiltin + 1) * sizeof(*m->builtin));
			m->builtin[m->nbuiltin++] = module_name(line);
		}
		free(text);
	}
	free(path);
	error_clear(err);
	return 0;
}

static void modules_want(struct modules *m, const char *rel)
{
	for (size_t i = 0; i < m->nwant; i++) {
		if (!strcmp(m->want[i], rel))
			return;
	}
	m->want = xrealloc(m->want, (m->nwant + 1) * sizeof(*m->want));
	m->want[m->nwant++] = xstrdup(rel);
}

static int modules_add(struct modules *m, const char *requested, int optional, struct build *b,
		       struct zb_error *err)
{
	cleanup_free char *name = module_name(requested);
	size_t i;

	for (i = 0; i < m->ndep; i++) {
		if (!strcmp(m->dep[i].name, name))
			break;
	}
	if (i < m->ndep) {
		cleanup_free char *deps = xstrdup(m->dep[i].deps);
		char *save = NULL, *tok;

		modules_want(m, m->dep[i].rel);
		for (tok = strtok_r(deps, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			modules_want(m, tok);
		json_array_append_new(m->included, json_string(name));
		return 0;
	}
	for (i = 0; i < m->nbuiltin; i++) {
		if (!strcmp(m->builtin[i], name)) {
			build_log(b, "module '%s' is built into the kernel", requested);
			json_array_append_new(m->builtin_used, json_string(name));
			return 0;
		}
	}
	if (optional) {
		build_log(b, "optional module '%s' is not in this kernel: skipped", requested);
		json_array_append_new(m->absent, json_string(name));
		return 0;
	}
	return error_set(err, ENOENT,
			 "module '%s' is neither in modules.dep nor built into the kernel (move "
			 "it to \"optional_modules\" if this kernel may lack it)",
			 requested);
}

/* Copy one module, decompressing .ko.xz / .ko.zst / .ko.gz (the guest's kmod may lack the
 * decompressor, and an uncompressed module loads faster under TCG). */
static int module_copy(struct build *b, const char *src, const char *dst_dir, const char *rel,
		       struct zb_error *err)
{
	static const struct {
		const char *ext, *tool;
	} comp[] = { { ".xz", "xz" }, { ".zst", "zstd" }, { ".gz", "gzip" } };
	cleanup_free char *dst = xasprintf("%s/%s", dst_dir, rel);
	char *slash = strrchr(dst, '/');
	size_t len = strlen(dst);
	int rc;

	*slash = '\0';
	rc = mkdir_p(dst, 0755, err);
	*slash = '/';
	if (rc < 0 || copy_file(src, dst, err) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(comp); i++) {
		size_t el = strlen(comp[i].ext);

		if (len > el && !strcmp(dst + len - el, comp[i].ext)) {
			/* All three remove the compressed file and keep the name minus the
			 * extension. */
			const char *argv[] = { comp[i].tool, "-d", "-f", "-q", "--rm", dst, NULL };

			if (strcmp(comp[i].tool, "zstd")) {
				argv[4] = dst;
				argv[5] = NULL;
			}
			return build_run(b, argv, err);
		}
	}
	return 0;
}

/* --- disk buses -------------------------------------------------------------------------- */

/* What the guest kernel needs for each bus is disk_bus.h's table (needs, listed, legacy). */

/* A kernel config value: 'y', 'm', or 0 when the symbol is not set. */
static int kconfig_value(const char *config, const char *sym)
{
	size_t n = strlen(sym);

	for (const char *p = config; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, sym, n) && p[n] == '=')
			return p[n + 1] == 'y' || p[n + 1] == 'm' ? p[n + 1] : 0;
	}
	return 0;
}

int appliance_kernel_has_bus(const char *config, const char *bus,
			     int (*staged)(const char *module, void *arg), void *arg,
			     const char **missing)
{
	const struct disk_bus *b = disk_bus_find(bus);

	if (!b) {
		*missing = "an unknown bus";
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(b->needs) && b->needs[k].config; k++) {
		int v = config ? kconfig_value(config, b->needs[k].config) : 'm';

		if (v == 'y' || (v == 'm' && staged(b->needs[k].module, arg)))
			continue;
		*missing = b->needs[k].config;
		return 0;
	}
	return 1;
}

/* Whether `name` is in the initramfs (staged) or, with no kernel config to tell, built in. */
struct staged_query {
	const struct modules *m;
	int no_config;
};

static int module_staged(const char *name, void *arg)
{
	const struct staged_query *q = arg;

	for (size_t i = 0; i < q->m->nwant; i++) {
		char *have = module_name(q->m->want[i]);
		int same = !strcmp(have, name);

		free(have);
		if (same)
			return 1;
	}
	for (size_t i = 0; q->no_config && i < q->m->nbuiltin; i++) {
		if (!strcmp(q->m->builtin[i], name))
			return 1;
	}
	return 0;
}

/* The buses the root's kernel drives with the modules staged in `m`, from /boot/config-VER. A
 * root without the config file is judged by modules.builtin and the staged modules alone. */
static json_t *appliance_buses(struct build *b, const char *root, const char *kver,
			       const struct modules *m)
{
	char *path = xasprintf("%s/boot/config-%s", root, kver), *config = NULL;
	json_t *buses = json_array();
	struct zb_error e = { 0 };
	struct staged_query q = { .m = m };

	if (read_file(path, 16 << 20, &config, NULL, &e) < 0) {
		build_log(b, "no kernel config (%s): buses judged by the modules alone", e.msg);
		q.no_config = 1;
	}
	for (size_t i = 0; i < DISK_BUS_COUNT; i++) {
		const char *missing = NULL, *bus = disk_buses[i].name;

		if (appliance_kernel_has_bus(config, bus, module_staged, &q, &missing))
			json_array_append_new(buses, json_string(bus));
		else
			build_log(b, "bus '%s' unsupported: %s %s", bus, missing,
				  !config || kconfig_value(config, missing) == 'm'
				      ? "is a module not in the initramfs"
				      : "is not set");
	}
	free(config);
	free(path);
	return buses;
}

int image_has_bus(const struct image *img, const char *bus)
{
	const json_t *buses = json_object_get(img->manifest, "buses");
	size_t i;
	json_t *v;

	if (!json_is_array(buses)) {
		const struct disk_bus *b = disk_bus_find(bus);

		return b && b->legacy;
	}
	json_array_foreach (buses, i, v) {
		if (json_is_string(v) && !strcmp(json_string_value(v), bus))
			return 1;
	}
	return 0;
}

/* The bus's `listed` modules (disk_bus.h) are what a recipe names for it. */
int recipe_lists_bus(const struct recipe *r, const char *bus)
{
	const struct disk_bus *b = disk_bus_find(bus);

	if (!b)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(b->listed) && b->listed[k]; k++) {
		int found = 0;
		size_t j;
		json_t *v;

		json_array_foreach (r->modules, j, v) {
			char *name = module_name(json_string_value(v));

			found |= !strcmp(name, b->listed[k]);
			free(name);
		}
		if (!found)
			return 0;
	}
	return 1;
}

/* --- staging ----------------------------------------------------------------------------- */

/* The recipe's modules and optional modules, with what they need, into `m`. */
static int modules_pick(struct modules *m, const struct recipe *r, struct build *b,
			struct zb_error *err)
{
	size_t i;
	json_t *v;

	json_array_foreach (r->modules, i, v) {
		if (modules_add(m, json_string_value(v), 0, b, err) < 0)
			return -1;
	}
	json_array_foreach (r->optional_modules, i, v) {
		if (modules_add(m, json_string_value(v), 1, b, err) < 0)
			return -1;
	}
	return 0;
}

/* Copy the picked modules and the index files depmod reads to `dst_dir`. */
static int modules_copy(struct modules *m, struct build *b, const char *moddir, const char *dst_dir,
			struct zb_error *err)
{
	static const char *const meta[] = { "modules.builtin", "modules.builtin.modinfo",
					    "modules.order" };

	for (size_t i = 0; i < m->nwant; i++) {
		cleanup_free char *src = xasprintf("%s/%s", moddir, m->want[i]);

		if (module_copy(b, src, dst_dir, m->want[i], err) < 0)
			return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(meta); i++) {
		cleanup_free char *src = xasprintf("%s/%s", moddir, meta[i]);
		cleanup_free char *dst = xasprintf("%s/%s", dst_dir, meta[i]);

		if (path_exists(src) && copy_file(src, dst, err) < 0)
			return -1;
	}
	return 0;
}

/* modules.dep and its indexes for the subset, by the root's own depmod (the host may have none,
 * and the guest's kmod reads what its own version writes): the staging tree is bind-mounted on
 * the root's /mnt for the duration. */
static int modules_depmod(struct stager *s, const char *kver, struct zb_error *err)
{
	cleanup_free char *mnt = xasprintf("%s/mnt", s->root);
	const char *argv[] = { "chroot", s->root, "depmod", "-b", "/mnt", kver, NULL };
	int rc;

	image_private_mounts();
	if (mount(s->staging, mnt, NULL, MS_BIND, NULL) < 0)
		return error_sys(err, errno, "bind-mounting '%s' on '%s'", s->staging, mnt);
	rc = build_run(s->b, argv, err);
	if (umount2(mnt, 0) < 0)
		umount2(mnt, MNT_DETACH);
	return rc;
}

int stage_modules(struct stager *s, const struct recipe *r, const char *kver, json_t *report,
		  json_t **buses, struct zb_error *err)
{
	cleanup_free char *moddir = xasprintf("%s/lib/modules/%s", s->root, kver);
	cleanup_free char *dst_dir = NULL;
	struct modules m = { .included = json_array(),
			     .builtin_used = json_array(),
			     .absent = json_array() };
	char resolved[PATH_MAX];
	int rc = modules_load(&m, moddir, err);

	if (rc == 0)
		rc = modules_pick(&m, r, s->b, err);
	/* The module directory itself, through the same symlinks as in the root. */
	if (rc == 0 && stage_path(s, "/lib/modules", resolved, sizeof(resolved), err) != 0)
		rc = error_set(err, ENOENT, "no /lib/modules in the root");
	if (rc == 0) {
		dst_dir = xasprintf("%s%s/%s", s->staging, resolved, kver);
		rc = mkdir_p(dst_dir, 0755, err);
	}
	if (rc == 0)
		rc = modules_copy(&m, s->b, moddir, dst_dir, err);
	if (rc == 0)
		rc = modules_depmod(s, kver, err);
	if (rc == 0) {
		*buses = appliance_buses(s->b, s->root, kver, &m);
		json_object_set(report, "included", m.included);
		json_object_set(report, "builtin", m.builtin_used);
		json_object_set(report, "absent", m.absent);
		json_object_set_new(report, "files", json_integer((json_int_t)m.nwant));
	}
	modules_release(&m);
	return rc;
}
