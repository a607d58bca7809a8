/* Inspection of a user's cloud image for `zbench image import` (docs/images.md, "Importing a
 * cloud image"): one libguestfs session finds what the guest is and refuses, with one line that
 * names the missing piece, what cannot run a cell. */
#include "image_inspect.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"
#include "decompress.h"
#include "elf_deps.h"
#include "guestfs_util.h"

/* The largest kernel module we read for its .modinfo (OpenZFS's unstripped DKMS module: 40 MB). */
#define MODULE_MAX (256u << 20)

/* Where a distribution may keep zpool and zfs, and systemd itself. */
static const char *const bin_dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin",
					"/usr/local/sbin" };
static const char *const systemd_paths[] = { "/usr/lib/systemd/systemd", "/lib/systemd/systemd" };

void import_facts_release(struct import_facts *f)
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
	gfs_strings_free(lines);
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

/* Download the module to `local`, decompressed to `plain` if it is compressed. */
static int module_fetch(guestfs_h *g, const char *module, const char *local, const char *log,
			struct zb_error *err)
{
	const char *ext = strrchr(module, '/') + 1 + strlen("zfs.ko");
	const char *tool = !strcmp(ext, ".xz")	  ? "xz"
			   : !strcmp(ext, ".zst") ? "zstd"
			   : !strcmp(ext, ".gz")  ? "gzip"
						  : NULL;
	cleanup_free char *plain =
	    xasprintf("%.*s/zfs.ko", (int)(strrchr(local, '/') - local), local);

	if (gfs_download_capped(g, module, local, MODULE_MAX, err) < 0)
		return -1;
	if (!*ext)
		return 0;
	if (!tool)
		return error_set(err, EINVAL, "'%s': unknown module compression", module);
	return decompress_capped(tool, local, plain, MODULE_MAX, 0, log, err) < 0
		   ? error_wrap(err, "'%s'", module)
		   : 0;
}

/* Download the module into `tmpdir`, decompress it there if it is compressed, and read the
 * version and vermagic out of its .modinfo section (builder/image/elf_deps.c). */
static int module_version(guestfs_h *g, struct import_facts *f, const char *tmpdir, const char *log,
			  struct zb_error *err)
{
	cleanup_free char *local = xasprintf("%s/%s", tmpdir, strrchr(f->module, '/') + 1);
	cleanup_free char *plain = xasprintf("%s/zfs.ko", tmpdir);
	cleanup_free char *buf = NULL;
	size_t size = 0;
	int x = module_fetch(g, f->module, local, log, err);

	if (x == 0)
		x = read_file(plain, MODULE_MAX, &buf, &size, err);
	unlink(local);
	unlink(plain);
	if (x < 0)
		return -1;
	x = elf_modinfo_get(buf, size, "version", &f->zfs_version, err);
	if (x == 0)
		x = elf_modinfo_get(buf, size, "vermagic", &f->vermagic, err);
	if (x < 0)
		return error_wrap(err, "'%s'", f->module);
	if (!f->zfs_version)
		return error_set(err, EINVAL, "'%s' has no modinfo version", f->module);
	f->openzfs = xasprintf("%.*s", (int)strcspn(f->zfs_version, "-"), f->zfs_version);
	return 0;
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
	gfs_strings_free(mps);
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

/* The one operating system in the image: Linux, with a root file system to boot from by UUID
 * or label; its file systems mounted. */
static int inspect_os(guestfs_h *g, struct import_facts *f, struct zb_error *err)
{
	char **roots = guestfs_inspect_os(g);

	if (!roots)
		return gfs_fail(g, "inspecting the image", err);
	if (!roots[0]) {
		gfs_strings_free(roots);
		return error_set(err, ENOENT, "libguestfs found no operating system in it");
	}
	if (roots[1]) {
		error_set(err, EINVAL, "it holds more than one operating system (%s, %s, ...)",
			  roots[0], roots[1]);
		gfs_strings_free(roots);
		return -1;
	}
	f->root = xstrdup(roots[0]);
	gfs_strings_free(roots);
	f->type = guestfs_inspect_get_type(g, f->root);
	f->distro = guestfs_inspect_get_distro(g, f->root);
	f->product = guestfs_inspect_get_product_name(g, f->root);
	f->version = xasprintf("%d.%d", guestfs_inspect_get_major_version(g, f->root),
			       guestfs_inspect_get_minor_version(g, f->root));
	if (!f->type || strcmp(f->type, "linux"))
		return error_set(err, EINVAL, "its operating system is '%s', not Linux",
				 f->type ? f->type : "unknown");
	f->root_uuid = guestfs_vfs_uuid(g, f->root);
	f->root_label = guestfs_vfs_label(g, f->root);
	if ((!f->root_uuid || !*f->root_uuid) && (!f->root_label || !*f->root_label))
		return error_set(err, EINVAL,
				 "its root file system %s has neither a UUID nor a label to boot "
				 "from",
				 f->root);
	return mount_guest(g, f->root, err);
}

/* The kernel that boots: the newest /boot/vmlinuz-VER with a ZFS module, and its initrd. */
static int inspect_kernel(guestfs_h *g, struct import_facts *f, struct zb_error *err)
{
	char **boot = guestfs_is_dir(g, "/boot") > 0 ? guestfs_ls(g, "/boot") : NULL;
	cleanup_free char **kvers = NULL;
	size_t nk = 0;
	int rc = 0;

	for (size_t i = 0; boot && boot[i]; i++) {
		if (strncmp(boot[i], "vmlinuz-", 8) || !boot[i][8])
			continue;
		kvers = xrealloc(kvers, (nk + 1) * sizeof(*kvers));
		kvers[nk++] = boot[i] + 8;
	}
	if (nk) {
		qsort(kvers, nk, sizeof(*kvers), cmp_version_desc);
		f->kernels = json_array();
	}
	for (size_t i = 0; i < nk; i++)
		json_array_append_new(f->kernels, json_string(kvers[i]));
	for (size_t i = 0; i < nk && !f->module; i++) {
		f->module = find_zfs_module(g, kvers[i]);
		if (f->module)
			f->kver = xstrdup(kvers[i]);
	}
	if (nk == 0)
		rc = error_set(err, ENOENT, "it has no kernel (/boot/vmlinuz-VERSION)");
	else if (!f->module)
		rc = error_set(err, ENOENT,
			       "no ZFS kernel module (zfs.ko) for its kernel %s%s under "
			       "/lib/modules/%s: install the distribution's ZFS module (zfs-dkms, "
			       "or the kernel's own) in the image first",
			       kvers[0], nk > 1 ? " or any other in /boot" : "", kvers[0]);
	gfs_strings_free(boot);
	if (rc < 0)
		return -1;
	f->vmlinuz = xasprintf("/boot/vmlinuz-%s", f->kver);
	f->initrd = xasprintf("/boot/initrd.img-%s", f->kver);
	if (gfs_is_file(g, f->initrd))
		return 0;
	free(f->initrd);
	f->initrd = xasprintf("/boot/initramfs-%s.img", f->kver);
	if (gfs_is_file(g, f->initrd))
		return 0;
	return error_set(err, ENOENT,
			 "no initrd for its kernel %s (/boot/initrd.img-%s or "
			 "/boot/initramfs-%s.img): the direct kernel boot needs one",
			 f->kver, f->kver, f->kver);
}

/* OpenZFS's userland and systemd. */
static int inspect_programs(guestfs_h *g, struct import_facts *f, struct zb_error *err)
{
	f->zpool = find_program(g, "zpool");
	f->zfs = find_program(g, "zfs");
	if (!f->zpool || !f->zfs)
		return error_set(err, ENOENT,
				 "it has the ZFS module %s but no '%s' program (looked in "
				 "/usr/sbin, /sbin, /usr/bin, /bin, /usr/local/sbin): install the "
				 "ZFS userland (zfsutils-linux) in the image first",
				 f->module, f->zpool ? "zfs" : "zpool");
	for (size_t i = 0; i < ARRAY_SIZE(systemd_paths) && !f->systemd; i++) {
		if (gfs_is_file(g, systemd_paths[i]))
			f->systemd = xstrdup(systemd_paths[i]);
	}
	if (!f->systemd)
		return error_set(
		    err, ENOENT,
		    "it has no systemd (/usr/lib/systemd/systemd): zbench's agent runs "
		    "as a systemd service there");
	f->cloud_init = guestfs_is_dir(g, "/etc/cloud") > 0;
	return 0;
}

int import_inspect(guestfs_h *g, struct import_facts *f, const char *tmpdir, const char *log,
		   struct zb_error *err)
{
	if (inspect_os(g, f, err) < 0 || inspect_kernel(g, f, err) < 0 ||
	    inspect_programs(g, f, err) < 0 || module_version(g, f, tmpdir, log, err) < 0)
		return -1;
	if (f->vermagic && strncmp(f->vermagic, f->kver, strlen(f->kver)))
		return error_set(err, EINVAL,
				 "its ZFS module %s was built for kernel '%.*s', not %s", f->module,
				 (int)strcspn(f->vermagic, " "), f->vermagic, f->kver);
	zfs_packages(g, f);
	return 0;
}

/* --- the facts as the sandbox reports them --------------------------------------------------- */

/* The facts' strings: `req` ones must be there; `tok` ones reach the kernel command line
 * (root=UUID=..., root=LABEL=...) or file names (the kernel's version), so they are one token. */
static const struct fact_key {
	const char *key;
	size_t off;
	int req, tok;
} fact_keys[] = {
#define FK(name, req, tok)                                                                         \
	{                                                                                          \
#name, offsetof(struct import_facts, name), req, tok                               \
	}
	FK(root, 1, 0),		FK(type, 1, 0),	     FK(distro, 0, 0),	   FK(product, 0, 0),
	FK(version, 1, 0),	FK(root_uuid, 0, 1), FK(root_label, 0, 1), FK(kver, 1, 1),
	FK(vmlinuz, 1, 0),	FK(initrd, 1, 0),    FK(module, 1, 0),	   FK(zfs_version, 1, 0),
	FK(openzfs, 1, 0),	FK(vermagic, 0, 0),  FK(zpool, 1, 0),	   FK(zfs, 1, 0),
	FK(zfs_userland, 0, 0), FK(systemd, 1, 0),
#undef FK
};

#define FACT_TEXT_MAX 1024 /* bytes of one string */
#define FACT_LIST_MAX 256  /* kernels, packages */

static char **fact_at(struct import_facts *f, const struct fact_key *k)
{
	return (char **)((char *)f + k->off);
}

json_t *import_facts_json(const struct import_facts *f)
{
	json_t *o = json_object();

	for (size_t i = 0; i < ARRAY_SIZE(fact_keys); i++) {
		const char *v = *fact_at((struct import_facts *)f, &fact_keys[i]);

		if (v)
			json_object_set_new(o, fact_keys[i].key, json_string(v));
	}
	json_object_set_new(o, "cloud_init", json_boolean(f->cloud_init));
	json_object_set_new(o, "kernels", f->kernels ? json_incref(f->kernels) : json_array());
	json_object_set_new(o, "applications",
			    f->applications ? json_incref(f->applications) : json_object());
	return o;
}

/* Text that may reach a terminal line, a manifest and the kernel command line: printable, at
 * most FACT_TEXT_MAX bytes; a token is [A-Za-z0-9._+~:-] only. */
static int fact_text_ok(const char *s, int tok)
{
	size_t n = strlen(s);

	if (n > FACT_TEXT_MAX)
		return 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			return 0;
		if (tok && !(isalnum(*c) || strchr("._+~:-", *c)))
			return 0;
	}
	return 1;
}

static int facts_lists(struct import_facts *f, json_t *o, struct zb_error *err)
{
	json_t *kernels = json_object_get(o, "kernels"), *apps = json_object_get(o, "applications");
	json_t *v;
	const char *k;
	size_t i;

	if (!json_is_array(kernels) || json_array_size(kernels) > FACT_LIST_MAX ||
	    !json_is_object(apps) || json_object_size(apps) > FACT_LIST_MAX)
		return error_set(err, EINVAL, "'kernels' or 'applications' is not a short list");
	json_array_foreach (kernels, i, v) {
		if (!json_is_string(v) || !fact_text_ok(json_string_value(v), 1))
			return error_set(err, EINVAL, "a kernel version is not one short token");
	}
	json_object_foreach (apps, k, v) {
		if (!fact_text_ok(k, 0) || !json_is_string(v) ||
		    !fact_text_ok(json_string_value(v), 0))
			return error_set(err, EINVAL, "a package is not short printable text");
	}
	f->kernels = json_incref(kernels);
	f->applications = json_incref(apps);
	return 0;
}

int import_facts_from_json(struct import_facts *f, json_t *o, struct zb_error *err)
{
	json_t *cloud = json_object_get(o, "cloud_init");
	const char *key;
	json_t *v;

	memset(f, 0, sizeof(*f));
	if (!json_is_object(o) || !json_is_boolean(cloud))
		return error_set(err, EINVAL, "the facts are not an object with 'cloud_init'");
	json_object_foreach (o, key, v) {
		size_t i = 0;

		while (i < ARRAY_SIZE(fact_keys) && strcmp(fact_keys[i].key, key))
			i++;
		if (i == ARRAY_SIZE(fact_keys)) {
			if (strcmp(key, "cloud_init") && strcmp(key, "kernels") &&
			    strcmp(key, "applications"))
				return error_set(err, EINVAL, "unknown fact '%.32s'", key);
			continue;
		}
		if (!json_is_string(v) || !fact_text_ok(json_string_value(v), fact_keys[i].tok))
			return error_set(err, EINVAL, "fact '%s' is not %s", key,
					 fact_keys[i].tok ? "one token" : "short printable text");
		*fact_at(f, &fact_keys[i]) = xstrdup(json_string_value(v));
	}
	for (size_t i = 0; i < ARRAY_SIZE(fact_keys); i++) {
		if (fact_keys[i].req && !*fact_at(f, &fact_keys[i]))
			return error_set(err, EINVAL, "fact '%s' is missing", fact_keys[i].key);
	}
	f->cloud_init = json_is_true(cloud);
	if (strcmp(f->type, "linux") || !*f->kver ||
	    ((!f->root_uuid || !*f->root_uuid) && (!f->root_label || !*f->root_label)))
		return error_set(err, EINVAL, "the facts name no Linux root to boot");
	if (f->vermagic && strncmp(f->vermagic, f->kver, strlen(f->kver)))
		return error_set(err, EINVAL, "the module's vermagic is not the kernel's");
	return facts_lists(f, o, err);
}
