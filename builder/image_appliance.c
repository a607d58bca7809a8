/* The second cache level: the appliance assembled from a finished root. The kernel is taken
 * from the root's /boot (and its ELF vmlinux extracted for a fast PVH boot); the initramfs
 * holds the guest agent as /init, the workload engine, the recipe's programs with every shared
 * library they need (read from their ELF headers), the kernel modules the recipe names with
 * their dependencies, udev's rules and helpers, and a directory skeleton. Nothing in the root
 * is changed, and nothing from the guest root is run on the host except depmod, in a chroot. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "elf_deps.h"
#include "image.h"
#include "image_build.h"
#include "initramfs.h"
#include "util.h"
#include "version.h"
#include "vmlinux.h"

#define APPLIANCE_STEPS 5
#define SYMLINK_MAX	40

int appliance_nsteps(void)
{
	return APPLIANCE_STEPS;
}

/* --- paths inside a root ----------------------------------------------------------------- */

int root_resolve(const char *root, const char *path, char *out, size_t len, struct zb_error *err)
{
	char rest[2 * PATH_MAX], resolved[PATH_MAX] = "", full[2 * PATH_MAX];
	int links = 0;

	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
	for (char *p = rest;;) {
		char comp[NAME_MAX + 1], candidate[PATH_MAX];
		struct stat st;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX)
			return error_set(err, ENAMETOOLONG, "'%s': a component is too long", path);
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(resolved, '/');

			if (slash)
				*slash = '\0';
			continue;
		}
		if (snprintf(candidate, sizeof(candidate), "%s/%s", resolved, comp) >=
		    (int)sizeof(candidate))
			return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
		snprintf(full, sizeof(full), "%s%s", root, candidate);
		if (lstat(full, &st) < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				return error_sys(err, errno, "inspecting '%s'", full);
			/* Missing: the rest is appended unresolved. */
			if (snprintf(out, len, "%s%s", candidate, p) >= (int)len)
				return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
			return 1;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX], next[2 * PATH_MAX];
			ssize_t t = readlink(full, target, sizeof(target) - 1);

			if (t < 0)
				return error_sys(err, errno, "reading link '%s'", full);
			target[t] = '\0';
			if (++links > SYMLINK_MAX)
				return error_set(err, ELOOP, "'%s': too many symbolic links", path);
			if (target[0] == '/')
				resolved[0] = '\0';
			if (snprintf(next, sizeof(next), "%s/%s", target, p) >= (int)sizeof(next))
				return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
			memcpy(rest, next, sizeof(rest));
			p = rest;
			continue;
		}
		memcpy(resolved, candidate, sizeof(resolved));
	}
	if (snprintf(out, len, "%s", resolved[0] ? resolved : "/") >= (int)len)
		return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
	return 0;
}

/* --- staging: copying paths from the root, symlinks kept --------------------------------- */

struct stager {
	const char *root;    /* the Debian root */
	const char *staging; /* the initramfs tree being built */
	struct build *b;
	char **done; /* in-root paths (resolved) whose dependencies were already added */
	size_t ndone;
};

static int stager_seen(struct stager *s, const char *path)
{
	for (size_t i = 0; i < s->ndone; i++) {
		if (!strcmp(s->done[i], path))
			return 1;
	}
	s->done = xrealloc(s->done, (s->ndone + 1) * sizeof(*s->done));
	s->done[s->ndone++] = xstrdup(path);
	return 0;
}

/* Mirror one path from the root into the staging tree: every symlink met on the way is
 * recreated as the same symlink (so merged-/usr and split layouts both come out as they are in
 * the root), directories are created with their mode, the final file is copied. `resolved`
 * receives the in-root path of what was copied. Returns 1 if the path does not exist. */
static int stage_path(struct stager *s, const char *path, char *resolved, size_t len,
		      struct zb_error *err)
{
	char rest[2 * PATH_MAX], cur[PATH_MAX] = "";
	int links = 0;

	snprintf(rest, sizeof(rest), "%s", path);
	for (char *p = rest;;) {
		char comp[NAME_MAX + 1], cand[PATH_MAX], src[2 * PATH_MAX], dst[2 * PATH_MAX];
		struct stat st;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX)
			return error_set(err, ENAMETOOLONG, "'%s': a component is too long", path);
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(cur, '/');

			if (slash)
				*slash = '\0';
			continue;
		}
		if (snprintf(cand, sizeof(cand), "%s/%s", cur, comp) >= (int)sizeof(cand))
			return error_set(err, ENAMETOOLONG, "path '%s' is too long", path);
		snprintf(src, sizeof(src), "%s%s", s->root, cand);
		snprintf(dst, sizeof(dst), "%s%s", s->staging, cand);
		if (lstat(src, &st) < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				return 1;
			return error_sys(err, errno, "inspecting '%s'", src);
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX], next[2 * PATH_MAX];
			ssize_t t = readlink(src, target, sizeof(target) - 1);

			if (t < 0)
				return error_sys(err, errno, "reading link '%s'", src);
			target[t] = '\0';
			if (symlink(target, dst) < 0 && errno != EEXIST)
				return error_sys(err, errno, "creating link '%s'", dst);
			if (++links > SYMLINK_MAX)
				return error_set(err, ELOOP, "'%s': too many symbolic links", path);
			if (target[0] == '/')
				cur[0] = '\0';
			snprintf(next, sizeof(next), "%s/%s", target, p);
			memcpy(rest, next, sizeof(rest));
			p = rest;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (mkdir(dst, st.st_mode & 07777) < 0 && errno != EEXIST)
				return error_sys(err, errno, "creating directory '%s'", dst);
		} else if (S_ISREG(st.st_mode)) {
			if (*p && strspn(p, "/") != strlen(p))
				return error_set(err, ENOTDIR, "'%s': '%s' is not a directory",
						 path, cand);
			if (!path_exists(dst) && copy_file(src, dst, err) < 0)
				return -1;
		} else {
			return error_set(err, EINVAL,
					 "'%s' in the root is not a file, directory or "
					 "symlink",
					 cand);
		}
		memcpy(cur, cand, sizeof(cur));
	}
	snprintf(resolved, len, "%s", cur[0] ? cur : "/");
	return 0;
}

static int stage_file(struct stager *s, const char *path, int optional, struct zb_error *err);

static const char *const lib_dirs[] = { "/lib/x86_64-linux-gnu",
					"/usr/lib/x86_64-linux-gnu",
					"/lib64",
					"/usr/lib64",
					"/lib",
					"/usr/lib" };

/* Find a DT_NEEDED library the way the dynamic loader would: RUNPATH (with $ORIGIN), then the
 * system directories. */
static int stage_library(struct stager *s, const char *needer, const struct elf_deps *d,
			 const char *name, struct zb_error *err)
{
	char origin[PATH_MAX], probe[2 * PATH_MAX + NAME_MAX], res[PATH_MAX];
	char *slash;
	int rc;

	if (strchr(name, '/'))
		return stage_file(s, name, 0, err);
	snprintf(origin, sizeof(origin), "%s", needer);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < d->nrunpath + ARRAY_SIZE(lib_dirs); i++) {
		const char *dir = i < d->nrunpath ? d->runpath[i] : lib_dirs[i - d->nrunpath];
		char expanded[PATH_MAX];

		if (!strncmp(dir, "$ORIGIN", 7))
			snprintf(expanded, sizeof(expanded), "%s%s", origin, dir + 7);
		else if (!strncmp(dir, "${ORIGIN}", 9))
			snprintf(expanded, sizeof(expanded), "%s%s", origin, dir + 9);
		else
			snprintf(expanded, sizeof(expanded), "%s", dir);
		snprintf(probe, sizeof(probe), "%s/%s", expanded, name);
		rc = root_resolve(s->root, probe, res, sizeof(res), err);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return stage_file(s, probe, 0, err);
	}
	return error_set(err, ENOENT, "'%s' needs '%s', which is not in the root", needer, name);
}

/* Stage a file and, if it is a dynamic ELF program or library, its loader and libraries. */
static int stage_file(struct stager *s, const char *path, int optional, struct zb_error *err)
{
	char resolved[PATH_MAX], full[2 * PATH_MAX];
	struct elf_deps d;
	struct stat st;
	int rc = stage_path(s, path, resolved, sizeof(resolved), err);

	if (rc < 0)
		return error_wrap(err, "copying '%s'", path);
	if (rc > 0) {
		if (optional) {
			build_log(s->b, "optional '%s' is not in the root: skipped", path);
			return 0;
		}
		return error_set(err, ENOENT, "'%s' is not in the root", path);
	}
	snprintf(full, sizeof(full), "%s%s", s->root, resolved);
	if (stat(full, &st) < 0 || !S_ISREG(st.st_mode) || stager_seen(s, resolved))
		return 0;
	rc = elf_read_deps(full, &d, err);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return 0;
	rc = 0;
	if (d.interp)
		rc = stage_file(s, d.interp, 0, err);
	for (size_t i = 0; i < d.nneeded && rc == 0; i++)
		rc = stage_library(s, resolved, &d, d.needed[i], err);
	elf_deps_release(&d);
	return rc;
}

static int json_has(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach (arr, i, v) {
		if (!strcmp(json_string_value(v), s))
			return 1;
	}
	return 0;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copy a directory of the root recursively (minus the recipe's "exclude" paths). */
static int stage_tree(struct stager *s, const char *path, json_t *exclude, struct zb_error *err)
{
	char resolved[PATH_MAX], full[2 * PATH_MAX];
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *dir;
	int rc;

	rc = stage_path(s, path, resolved, sizeof(resolved), err);
	if (rc != 0)
		return rc < 0 ? error_wrap(err, "copying '%s'", path)
			      : error_set(err, ENOENT, "tree '%s' is not in the root", path);
	snprintf(full, sizeof(full), "%s%s", s->root, resolved);
	dir = opendir(full);
	if (!dir)
		return error_sys(err, errno, "listing '%s'", full);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), cmp_cstr);
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *child = xasprintf("%s/%s", path, names[i]);
		char *child_full = xasprintf("%s%s/%s", s->root, resolved, names[i]);
		struct stat st;

		if (rc == 0 && !json_has(exclude, child)) {
			if (lstat(child_full, &st) == 0 && S_ISDIR(st.st_mode))
				rc = stage_tree(s, child, exclude, err);
			else
				rc = stage_file(s, child, 0, err);
		}
		free(child);
		free(child_full);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Copy a host file to an in-staging path, creating the (resolved) parent directory. */
static int stage_host_file(struct stager *s, const char *src, const char *path, mode_t mode,
			   struct zb_error *err)
{
	char resolved[PATH_MAX], *dst, *parent, *slash;
	int rc;

	if (root_resolve(s->staging, path, resolved, sizeof(resolved), err) < 0)
		return -1;
	dst = xasprintf("%s%s", s->staging, resolved);
	parent = xstrdup(dst);
	slash = strrchr(parent, '/');
	*slash = '\0';
	rc = mkdir_p(parent, 0755, err);
	if (rc == 0)
		rc = copy_file(src, dst, err);
	if (rc == 0 && chmod(dst, mode) < 0)
		rc = error_sys(err, errno, "chmod '%s'", dst);
	free(parent);
	free(dst);
	return rc;
}

static int stage_skeleton(struct stager *s, struct zb_error *err)
{
	static const struct {
		const char *path;
		mode_t mode;
	} dirs[] = {
		{ "/dev", 0755 },  { "/proc", 0555 },	  { "/sys", 0555 },  { "/run", 0755 },
		{ "/tmp", 01777 }, { "/mnt", 0755 },	  { "/etc", 0755 },  { "/etc/zfs", 0755 },
		{ "/var", 0755 },  { "/var/tmp", 01777 }, { "/root", 0700 },
	};
	char resolved[PATH_MAX], *p;

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (root_resolve(s->staging, dirs[i].path, resolved, sizeof(resolved), err) < 0)
			return -1;
		p = xasprintf("%s%s", s->staging, resolved);
		if ((mkdir(p, dirs[i].mode) < 0 && errno != EEXIST) || chmod(p, dirs[i].mode) < 0) {
			error_sys(err, errno, "creating '%s'", p);
			free(p);
			return -1;
		}
		free(p);
	}
	/* The kernel opens /dev/console for /init's stdio before anything mounts devtmpfs. */
	p = xasprintf("%s/dev/console", s->staging);
	if (mknod(p, S_IFCHR | 0600, makedev(5, 1)) < 0 && errno != EEXIST) {
		error_sys(err, errno, "creating '%s'", p);
		free(p);
		return -1;
	}
	free(p);
	p = xasprintf("%s/etc/mtab", s->staging);
	if (symlink("../proc/self/mounts", p) < 0 && errno != EEXIST) {
		error_sys(err, errno, "creating '%s'", p);
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

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
}

static int modules_load(struct modules *m, const char *moddir, struct zb_error *err)
{
	char *path = xasprintf("%s/modules.dep", moddir), *text, *save = NULL, *line;

	if (read_file(path, 64 << 20, &text, NULL, err) < 0) {
		free(path);
		return -1;
	}
	free(path);
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
	char *name = module_name(requested);
	int rc = 0;
	size_t i;

	for (i = 0; i < m->ndep; i++) {
		if (!strcmp(m->dep[i].name, name))
			break;
	}
	if (i < m->ndep) {
		char *deps = xstrdup(m->dep[i].deps), *save = NULL, *tok;

		modules_want(m, m->dep[i].rel);
		for (tok = strtok_r(deps, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			modules_want(m, tok);
		free(deps);
		json_array_append_new(m->included, json_string(name));
		goto out;
	}
	for (i = 0; i < m->nbuiltin; i++) {
		if (!strcmp(m->builtin[i], name)) {
			build_log(b, "module '%s' is built into the kernel", requested);
			json_array_append_new(m->builtin_used, json_string(name));
			goto out;
		}
	}
	if (optional) {
		build_log(b, "optional module '%s' is not in this kernel: skipped", requested);
		json_array_append_new(m->absent, json_string(name));
		goto out;
	}
	rc = error_set(err, ENOENT,
		       "module '%s' is neither in modules.dep nor built into the kernel (move it "
		       "to \"optional_modules\" if this kernel may lack it)",
		       requested);
out:
	free(name);
	return rc;
}

/* Copy one module, decompressing .ko.xz / .ko.zst / .ko.gz (the guest's kmod may lack the
 * decompressor, and an uncompressed module loads faster under TCG). */
static int module_copy(struct build *b, const char *src, const char *dst_dir, const char *rel,
		       struct zb_error *err)
{
	static const struct {
		const char *ext, *tool;
	} comp[] = { { ".xz", "xz" }, { ".zst", "zstd" }, { ".gz", "gzip" } };
	char *dst = xasprintf("%s/%s", dst_dir, rel), *slash;
	size_t len = strlen(dst);
	int rc = -1;

	slash = strrchr(dst, '/');
	*slash = '\0';
	if (mkdir_p(dst, 0755, err) < 0)
		goto out;
	*slash = '/';
	if (copy_file(src, dst, err) < 0)
		goto out;
	rc = 0;
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
			rc = build_run(b, argv, err);
			break;
		}
	}
out:
	free(dst);
	return rc;
}

/* --- disk buses -------------------------------------------------------------------------- */

/* What the guest kernel needs for each disk bus (disk.c's names; vm_qemu.c says which QEMU
 * devices they are): every config symbol built in (=y), or a module (=m) that is in the
 * initramfs. `listed` are the modules a recipe names for the bus (the rest follow from
 * modules.dep): without a built image, that is how image_recipe_with_bus() guesses. */
static const struct bus_needs {
	const char *bus;
	struct {
		const char *config, *module;
	} need[4];
	const char *listed[2];
} bus_needs[] = {
	{ "virtio-blk",
	  { { "CONFIG_VIRTIO_PCI", "virtio_pci" }, { "CONFIG_VIRTIO_BLK", "virtio_blk" } },
	  { "virtio_blk" } },
	{ "virtio-scsi",
	  { { "CONFIG_VIRTIO_PCI", "virtio_pci" },
	    { "CONFIG_SCSI_VIRTIO", "virtio_scsi" },
	    { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	  { "virtio_scsi" } },
	{ "nvme", { { "CONFIG_BLK_DEV_NVME", "nvme" } }, { "nvme" } },
	{ "sata",
	  { { "CONFIG_SATA_AHCI", "ahci" }, { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	  { "ahci" } },
	{ "usb2",
	  { { "CONFIG_USB_EHCI_HCD", "ehci_hcd" },
	    { "CONFIG_USB_EHCI_PCI", "ehci_pci" },
	    { "CONFIG_USB_STORAGE", "usb_storage" },
	    { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	  { "ehci_pci", "usb_storage" } },
	{ "usb3",
	  { { "CONFIG_USB_XHCI_HCD", "xhci_hcd" },
	    { "CONFIG_USB_XHCI_PCI", "xhci_pci" },
	    { "CONFIG_USB_STORAGE", "usb_storage" },
	    { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	  { "xhci_pci", "usb_storage" } },
};

/* Images built before the manifest had "buses" all ran Debian's cloud kernel (6.1 or 6.12),
 * whose config has virtio and NVMe but neither AHCI nor USB. */
static const char *const legacy_buses[] = { "virtio-blk", "virtio-scsi", "nvme" };

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
	for (size_t i = 0; i < ARRAY_SIZE(bus_needs); i++) {
		const struct bus_needs *bn = &bus_needs[i];

		if (strcmp(bn->bus, bus))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(bn->need) && bn->need[k].config; k++) {
			int v = config ? kconfig_value(config, bn->need[k].config) : 'm';

			if (v == 'y' || (v == 'm' && staged(bn->need[k].module, arg)))
				continue;
			*missing = bn->need[k].config;
			return 0;
		}
		return 1;
	}
	*missing = "an unknown bus";
	return 0;
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
	for (size_t i = 0; i < ARRAY_SIZE(bus_needs); i++) {
		const char *missing = NULL;

		if (appliance_kernel_has_bus(config, bus_needs[i].bus, module_staged, &q, &missing))
			json_array_append_new(buses, json_string(bus_needs[i].bus));
		else
			build_log(b, "bus '%s' unsupported: %s %s", bus_needs[i].bus, missing,
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
		for (i = 0; i < ARRAY_SIZE(legacy_buses); i++) {
			if (!strcmp(legacy_buses[i], bus))
				return 1;
		}
		return 0;
	}
	json_array_foreach (buses, i, v) {
		if (json_is_string(v) && !strcmp(json_string_value(v), bus))
			return 1;
	}
	return 0;
}

/* Whether `r` names every module bus_needs lists for `bus` (a guess for an unbuilt image:
 * "modules" entries must exist, so the built image will have them). */
static int recipe_lists_bus(const struct recipe *r, const char *bus)
{
	for (size_t i = 0; i < ARRAY_SIZE(bus_needs); i++) {
		if (strcmp(bus_needs[i].bus, bus))
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(bus_needs[i].listed); k++) {
			const char *want = bus_needs[i].listed[k];
			int found = 0;
			size_t j;
			json_t *v;

			if (!want)
				break;
			json_array_foreach (r->modules, j, v) {
				char *name = module_name(json_string_value(v));

				found |= !strcmp(name, want);
				free(name);
			}
			if (!found)
				return 0;
		}
		return 1;
	}
	return 0;
}

static int json_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the recipe at `path` gives an image with every bus in `buses`: its cached image says
 * so, or, not built yet, it lists their modules. Sets *same when its packages (so its OpenZFS)
 * are those of `self`. */
static int recipe_has_buses(const char *path, const char *cache_dir, const char *const *buses,
			    size_t n, const struct recipe *self, int *same)
{
	struct zb_error e = { 0 };
	struct image img;
	struct recipe r;
	int ok = 1;

	if (recipe_load(path, &r, &e) < 0)
		return 0;
	*same = self && json_equal(r.packages, self->packages);
	if (image_get(path, cache_dir, 0, &img, &e) == 0) {
		for (size_t i = 0; i < n; i++)
			ok &= image_has_bus(&img, buses[i]);
		image_release(&img);
	} else {
		for (size_t i = 0; i < n; i++)
			ok &= recipe_lists_bus(&r, buses[i]);
	}
	recipe_release(&r);
	return ok;
}

char *image_recipe_with_buses(const char *recipe_path, const char *cache_dir,
			      const char *const *buses, size_t nbuses)
{
	char *dir = xstrdup(recipe_path), *slash = strrchr(dir, '/'), *found = NULL;
	char self_real[PATH_MAX] = "", **names = NULL;
	struct zb_error e = { 0 };
	struct recipe self;
	int have_self, found_same = 0;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if (slash)
		slash[1] = '\0';
	else
		dir[0] = '\0';
	if (!realpath(recipe_path, self_real))
		self_real[0] = '\0';
	have_self = recipe_load(recipe_path, &self, &e) == 0;
	d = opendir(dir[0] ? dir : ".");
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".json")) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xasprintf("%s%s", dir, de->d_name);
		}
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), json_name_cmp);
	/* In name order; one with the same packages (the same OpenZFS) first. */
	for (size_t i = 0; i < n && !found_same; i++) {
		char real[PATH_MAX];
		int same = 0;

		if (realpath(names[i], real) && !strcmp(real, self_real))
			continue;
		if (!recipe_has_buses(names[i], cache_dir, buses, nbuses, have_self ? &self : NULL,
				      &same))
			continue;
		if (!found || same) {
			free(found);
			found = xstrdup(names[i]);
			found_same = same;
		}
	}
	if (have_self)
		recipe_release(&self);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
	return found;
}

static int stage_modules(struct stager *s, const struct recipe *r, const char *kver, json_t *report,
			 json_t **buses, struct zb_error *err)
{
	char *moddir = xasprintf("%s/lib/modules/%s", s->root, kver);
	char resolved[PATH_MAX], *dst_dir = NULL, *mnt = NULL;
	struct modules m = { .included = json_array(),
			     .builtin_used = json_array(),
			     .absent = json_array() };
	size_t i;
	json_t *v;
	int rc = -1, mounted = 0;

	if (modules_load(&m, moddir, err) < 0)
		goto out;
	json_array_foreach (r->modules, i, v) {
		if (modules_add(&m, json_string_value(v), 0, s->b, err) < 0)
			goto out;
	}
	json_array_foreach (r->optional_modules, i, v) {
		if (modules_add(&m, json_string_value(v), 1, s->b, err) < 0)
			goto out;
	}
	/* The module directory itself, through the same symlinks as in the root. */
	if (stage_path(s, "/lib/modules", resolved, sizeof(resolved), err) != 0) {
		error_set(err, ENOENT, "no /lib/modules in the root");
		goto out;
	}
	dst_dir = xasprintf("%s%s/%s", s->staging, resolved, kver);
	if (mkdir_p(dst_dir, 0755, err) < 0)
		goto out;
	for (i = 0; i < m.nwant; i++) {
		char *src = xasprintf("%s/%s", moddir, m.want[i]);

		rc = module_copy(s->b, src, dst_dir, m.want[i], err);
		free(src);
		if (rc < 0)
			goto out;
	}
	rc = -1;
	{
		static const char *const meta[] = { "modules.builtin", "modules.builtin.modinfo",
						    "modules.order" };

		for (i = 0; i < ARRAY_SIZE(meta); i++) {
			char *src = xasprintf("%s/%s", moddir, meta[i]);
			char *dst = xasprintf("%s/%s", dst_dir, meta[i]);
			int crc = path_exists(src) ? copy_file(src, dst, err) : 0;

			free(src);
			free(dst);
			if (crc < 0)
				goto out;
		}
	}
	/* modules.dep and its indexes for the subset, by the root's own depmod (the host may
	 * have none, and the guest's kmod reads what its own version writes): the staging tree
	 * is bind-mounted on the root's /mnt for the duration. */
	mnt = xasprintf("%s/mnt", s->root);
	image_private_mounts();
	if (mount(s->staging, mnt, NULL, MS_BIND, NULL) < 0) {
		error_sys(err, errno, "bind-mounting '%s' on '%s'", s->staging, mnt);
		goto out;
	}
	mounted = 1;
	{
		const char *argv[] = { "chroot", s->root, "depmod", "-b", "/mnt", kver, NULL };

		if (build_run(s->b, argv, err) < 0)
			goto out;
	}
	*buses = appliance_buses(s->b, s->root, kver, &m);
	json_object_set_new(report, "included", m.included);
	json_object_set_new(report, "builtin", m.builtin_used);
	json_object_set_new(report, "absent", m.absent);
	json_object_set_new(report, "files", json_integer((json_int_t)m.nwant));
	m.included = m.builtin_used = m.absent = NULL;
	rc = 0;
out:
	if (mounted && umount2(mnt, 0) < 0)
		umount2(mnt, MNT_DETACH);
	json_decref(m.included);
	json_decref(m.builtin_used);
	json_decref(m.absent);
	modules_release(&m);
	free(moddir);
	free(dst_dir);
	free(mnt);
	return rc;
}

/* --- the build --------------------------------------------------------------------------- */

static int file_info(const char *path, json_t *obj, struct zb_error *err)
{
	char sha[65];
	struct stat st;

	if (stat(path, &st) < 0)
		return error_sys(err, errno, "inspecting '%s'", path);
	if (sha256_file_hex(path, sha, err) < 0)
		return -1;
	json_object_set_new(obj, "sha256", json_string(sha));
	json_object_set_new(obj, "size", json_integer((json_int_t)st.st_size));
	return 0;
}

static char *iso_date(double t)
{
	char buf[64];
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

int appliance_build(const struct appliance_inputs *in, const char *dir, struct build *b,
		    struct zb_error *err)
{
	const struct recipe *r = in->recipe;
	char *root = xasprintf("%s/root", in->root_dir);
	char *staging = xasprintf("%s/staging", dir);
	char *bzimage = xasprintf("%s/bzImage", dir), *vmlinux = xasprintf("%s/vmlinux", dir);
	char *initramfs = xasprintf("%s/initramfs.img", dir);
	char *manifest_path = xasprintf("%s/manifest.json", dir), *src = NULL, *date = NULL;
	const char *kver = NULL, *boot_kernel = "vmlinux";
	struct stager s = { .root = root, .staging = staging, .b = b };
	struct initramfs_stats stats = { 0, 0 };
	size_t first_step = json_array_size(b->steps), i;
	json_t *mods = json_object(), *files = json_object(), *manifest = NULL, *v, *steps;
	json_t *buses = NULL;
	char *dump;
	int rc = -1, x;

	if (json_unpack(in->root_info, "{s:s}", "kernel_version", &kver) < 0) {
		error_set(err, EINVAL, "root.json has no kernel_version");
		goto out;
	}

	build_step_begin(b, "kernel %s", kver);
	src = xasprintf("%s/boot/vmlinuz-%s", root, kver);
	if (copy_file(src, bzimage, err) < 0)
		goto fail;
	x = vmlinux_extract(bzimage, vmlinux, b->log_path, err);
	if (x < 0)
		goto fail;
	if (x > 0) {
		build_log(b, "unknown payload format in '%s': the image boots the bzImage", src);
		boot_kernel = "bzImage";
	}
	build_step_end(b);

	build_step_begin(b, "programs, libraries, udev");
	if (mkdir_p(staging, 0755, err) < 0)
		goto fail;
	json_array_foreach (r->files, i, v) {
		if (stage_file(&s, json_string_value(v), 0, err) < 0)
			goto fail;
	}
	json_array_foreach (r->optional_files, i, v) {
		if (stage_file(&s, json_string_value(v), 1, err) < 0)
			goto fail;
	}
	json_array_foreach (r->trees, i, v) {
		if (stage_tree(&s, json_string_value(v), r->exclude, err) < 0)
			goto fail;
	}
	if (stage_skeleton(&s, err) < 0 || stage_host_file(&s, in->agent, "/init", 0755, err) < 0 ||
	    stage_host_file(&s, in->engine, "/bin/zbench-engine", 0755, err) < 0)
		goto fail;
	build_step_end(b);

	build_step_begin(b, "kernel modules");
	if (stage_modules(&s, r, kver, mods, &buses, err) < 0)
		goto fail;
	build_step_end(b);

	build_step_begin(b, "initramfs (%s)", r->compression);
	if (initramfs_write_dir(staging, initramfs, &stats, err) < 0)
		goto fail;
	if (!strcmp(r->compression, "gzip")) {
		const char *argv[] = { "gzip", "-n", "-f", initramfs, NULL };
		char *gz = xasprintf("%s.gz", initramfs);

		x = build_run(b, argv, err);
		if (x == 0 && rename(gz, initramfs) < 0)
			x = error_sys(err, errno, "renaming '%s'", gz);
		free(gz);
		if (x < 0)
			goto fail;
	}
	if (remove_tree(staging, err) < 0)
		goto fail;
	build_step_end(b);

	build_step_begin(b, "manifest");
	{
		json_t *f;

		f = json_object();
		if (!strcmp(boot_kernel, "vmlinux")) {
			if (file_info(vmlinux, f, err) < 0) {
				json_decref(f);
				goto fail;
			}
			json_object_set_new(files, "vmlinux", f);
			f = json_object();
		}
		if (file_info(bzimage, f, err) < 0) {
			json_decref(f);
			goto fail;
		}
		json_object_set_new(files, "bzImage", f);
		f = json_pack("{s:s, s:I}", "compression", r->compression, "entries",
			      (json_int_t)stats.entries);
		json_object_set_new(files, "initramfs", f);
		if (file_info(initramfs, f, err) < 0)
			goto fail;
		f = json_pack("{s:s, s:s}", "source", in->agent, "sha256", in->agent_sha);
		json_object_set_new(files, "agent", f);
		f = json_pack("{s:s, s:s}", "source", in->engine, "sha256", in->engine_sha);
		json_object_set_new(files, "engine", f);
	}
	steps = json_array();
	for (i = first_step; i < json_array_size(b->steps); i++)
		json_array_append(steps, json_array_get(b->steps, i));
	date = iso_date(now_wall());
	{
		json_t *pkgs = json_object_get(in->root_info, "packages");
		const char *zfs = json_string_value(json_object_get(pkgs, "zfsutils-linux"));

		manifest = json_pack(
		    "{s:i, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:O}, s:s, s:s?, s:O, "
		    "s:{s:s, s:s}, s:o, s:o, s:{s:O, s:o}}",
		    "format", 1, "zbench_version", ZBENCH_VERSION, "image_hash", in->image_hash,
		    "built", date, "recipe", "name", r->name, "path", r->path, "hash", r->hash,
		    "root_hash", r->root_hash, "content", r->json, "kernel_version", kver,
		    "zfs_version", zfs, "packages", pkgs, "boot", "kernel", boot_kernel,
		    "initramfs", "initramfs.img", "files", files, "modules", mods, "steps", "root",
		    json_object_get(in->root_info, "steps"), "appliance", steps);
		files = mods = NULL;
		if (manifest)
			json_object_set(manifest, "buses", buses);
	}
	if (!manifest) {
		error_set(err, EINVAL, "cannot assemble the manifest (missing root.json fields?)");
		goto fail;
	}
	dump = json_dumps(manifest, JSON_INDENT(2) | JSON_SORT_KEYS);
	x = write_file_atomic(manifest_path, dump, strlen(dump), 0644, err);
	free(dump);
	if (x < 0)
		goto fail;
	build_step_end(b);
	rc = 0;
	goto out;
fail:
	build_step_fail(b, err);
out:
	json_decref(manifest);
	json_decref(files);
	json_decref(mods);
	json_decref(buses);
	for (i = 0; i < s.ndone; i++)
		free(s.done[i]);
	free(s.done);
	free(root);
	free(staging);
	free(bzimage);
	free(vmlinux);
	free(initramfs);
	free(manifest_path);
	free(src);
	free(date);
	return rc;
}
