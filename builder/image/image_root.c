/* The first cache level: a Debian root made with debootstrap, with the recipe's kernel, udev,
 * kmod and OpenZFS installed and zfs-dkms's modules built for that kernel (the slow part: about
 * 8 minutes on 2 cores). The appliance is later assembled from it without changing it. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"
#include "image_build.h"

/* --- the host's mirror ------------------------------------------------------------------- */

static int word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\t' || p[n] == '\n'))
			return 1;
		p += n;
	}
	return 0;
}

static char *first_word(const char *s)
{
	size_t n;

	s += strspn(s, " \t");
	n = strcspn(s, " \t\n");
	return n ? strndup(s, n) : NULL;
}

/* One deb822 file: paragraphs separated by blank lines; fields "Key: value", comments '#'. */
static char *mirror_from_deb822(const char *text, const char *suite)
{
	char *uris = NULL, *suites = NULL, *found = NULL;
	const char *p = text;

	while (!found) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len > 0 && strspn(p, " \t\r") < len && p[0] != '#') {
			if (!strncasecmp(p, "URIs:", 5)) {
				free(uris);
				uris = strndup(p + 5, len - 5);
			} else if (!strncasecmp(p, "Suites:", 7)) {
				free(suites);
				suites = strndup(p + 7, len - 7);
			}
		} else if (len == 0 || strspn(p, " \t\r") >= len) {
			/* A blank line ends the paragraph. */
			if (uris && suites && word_in(suites, suite) && !strstr(uris, "security"))
				found = first_word(uris);
			free(uris);
			free(suites);
			uris = suites = NULL;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (!found && uris && suites && word_in(suites, suite) && !strstr(uris, "security"))
		found = first_word(uris);
	free(uris);
	free(suites);
	return found;
}

/* One-line format: "deb [options] URI suite component...". */
static char *mirror_from_list(const char *text, const char *suite)
{
	char *copy = xstrdup(text), *save = NULL, *line, *found = NULL;

	for (line = strtok_r(copy, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tok[8], *s2 = NULL, *t;
		int n = 0, i = 1;

		for (t = strtok_r(line, " \t", &s2); t && n < 8; t = strtok_r(NULL, " \t", &s2))
			tok[n++] = t;
		if (n < 3 || strcmp(tok[0], "deb"))
			continue;
		if (tok[1][0] == '[') {
			while (i < n && !strchr(tok[i], ']'))
				i++;
			i++;
		}
		if (i + 1 < n && !strcmp(tok[i + 1], suite) && !strstr(tok[i], "security"))
			found = xstrdup(tok[i]);
	}
	free(copy);
	return found;
}

int image_host_mirror(const char *suite, char **out, struct zb_error *err)
{
	glob_t g;
	char *text, *found = NULL;

	if (glob("/etc/apt/sources.list.d/*.sources", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !found; i++) {
			if (read_file(g.gl_pathv[i], 1 << 20, &text, NULL, err) < 0)
				continue;
			found = mirror_from_deb822(text, suite);
			free(text);
		}
		globfree(&g);
	}
	if (!found && read_file("/etc/apt/sources.list", 1 << 20, &text, NULL, err) == 0) {
		found = mirror_from_list(text, suite);
		free(text);
	}
	if (!found)
		return error_set(
		    err, ENOENT,
		    "no Debian '%s' mirror in the host's apt configuration "
		    "(/etc/apt/sources.list.d/*.sources, /etc/apt/sources.list): add one "
		    "or set \"mirror\" to a URI in the recipe",
		    suite);
	error_clear(err);
	*out = found;
	return 0;
}

/* --- mounts ------------------------------------------------------------------------------ */

void image_private_mounts(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	/* Best effort: without a namespace the mounts are still undone by mounts_release(). */
	if (unshare(CLONE_NEWNS) == 0)
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

struct mounts {
	char *path[8];
	int n;
};

static int mounts_add(struct mounts *m, const char *src, const char *dst, const char *type,
		      unsigned long flags, struct zb_error *err)
{
	if (m->n == (int)ARRAY_SIZE(m->path))
		return error_set(err, E2BIG, "too many mounts");
	if (mount(src, dst, type, flags, NULL) < 0)
		return error_sys(err, errno, "mounting '%s' on '%s'", src, dst);
	m->path[m->n++] = xstrdup(dst);
	return 0;
}

static void mounts_release(struct mounts *m)
{
	while (m->n > 0) {
		char *p = m->path[--m->n];

		if (umount2(p, 0) < 0)
			umount2(p, MNT_DETACH);
		free(p);
	}
}

/* --- interruption ------------------------------------------------------------------------ */

/* While the chroot is mounted, a signal must not kill us before the mounts are undone: record
 * it, let the running command die of it (a terminal's ^C reaches it too), clean up, fail. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static const int caught_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void signals_catch(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	for (size_t i = 0; i < ARRAY_SIZE(caught_signals); i++)
		sigaction(caught_signals[i], &sa, &old[i]);
}

static void signals_restore(const struct sigaction *old)
{
	for (size_t i = 0; i < ARRAY_SIZE(caught_signals); i++)
		sigaction(caught_signals[i], &old[i], NULL);
}

/* --- steps ------------------------------------------------------------------------------- */

static char *join_array(json_t *arr, const char *sep)
{
	size_t i;
	json_t *v;
	char *out = xstrdup("");

	json_array_foreach (arr, i, v) {
		char *next = xasprintf("%s%s%s", out, i ? sep : "", json_string_value(v));

		free(out);
		out = next;
	}
	return out;
}

static int write_apt_config(const struct recipe *r, const char *root, const char *mirror,
			    struct zb_error *err)
{
	char *comps = join_array(r->components, " ");
	char *list = xasprintf("deb %s %s %s\ndeb %s %s-updates %s\n", mirror, r->suite, comps,
			       mirror, r->suite, comps);

	/* Backports has priority 100: only packages named "PKG/SUITE-backports" come from it. */
	if (r->backports) {
		char *more = xasprintf("%sdeb %s %s-backports %s\n", list, mirror, r->suite, comps);

		free(list);
		list = more;
	}
	char *path = xasprintf("%s/etc/apt/sources.list", root);
	static const char policy[] = "#!/bin/sh\n# zbench: no services start in the build root\n"
				     "exit 101\n";
	char *policy_path = xasprintf("%s/usr/sbin/policy-rc.d", root);
	int rc;

	rc = write_file_atomic(path, list, strlen(list), 0644, err);
	if (rc == 0)
		rc = write_file_atomic(policy_path, policy, strlen(policy), 0755, err);
	free(comps);
	free(list);
	free(path);
	free(policy_path);
	return rc;
}

/* Debian's 6.12 headers carry vmlinux, 6.1's do not. Without debug info such a kernel's module
 * fails to link (no BTF), and OpenZFS's configure takes that for a kernel without module
 * support. */
int root_kernel_builds_btf(const char *root)
{
	char *pat = xasprintf("%s/usr/src/linux-headers-*/vmlinux", root);
	glob_t g;
	int rc = glob(pat, 0, NULL, &g), found = rc == 0 && g.gl_pathc > 0;

	if (rc == 0)
		globfree(&g);
	free(pat);
	return found;
}

/* apt-get install in the root. What the packages' scripts build is never booted as it is:
 * INITRD=No keeps the kernel's postinst from making an initrd (the appliance assembles its own
 * initramfs; a derived root that boots the distribution's way makes one, step_initramfs), and
 * KCFLAGS=-g0 compiles DKMS modules without debug info, which DKMS strips from the installed
 * modules anyway (docs/performance.md, "From scratch": minutes of a cold build), unless the
 * kernel makes BTF for its modules from that debug info (root_kernel_builds_btf). */
static int apt_install(struct build *b, const char *root, json_t *pkgs, struct zb_error *err)
{
	size_t n = json_array_size(pkgs), i;
	const char **argv = xcalloc(n + 11, sizeof(*argv));
	int k = 0, rc;

	argv[k++] = "env";
	argv[k++] = "INITRD=No";
	if (!root_kernel_builds_btf(root))
		argv[k++] = "KCFLAGS=-g0";
	argv[k++] = "chroot";
	argv[k++] = root;
	argv[k++] = "apt-get";
	argv[k++] = "install";
	argv[k++] = "-y";
	argv[k++] = "-q";
	argv[k++] = "--no-install-recommends";
	for (i = 0; i < n; i++)
		argv[k++] = json_string_value(json_array_get(pkgs, i));
	argv[k] = NULL;
	rc = build_run(b, argv, err);
	free(argv);
	return rc;
}

/* The kernel version: the /lib/modules entry with a matching /boot/vmlinuz; the newest if more. */
static int find_kernel(const char *root, char **ver, struct zb_error *err)
{
	char *moddir = xasprintf("%s/lib/modules", root);
	DIR *d = opendir(moddir);
	struct dirent *de;
	char *best = NULL;

	if (!d) {
		error_sys(err, errno, "listing '%s'", moddir);
		free(moddir);
		return -1;
	}
	while ((de = readdir(d))) {
		char *boot;

		if (de->d_name[0] == '.')
			continue;
		boot = xasprintf("%s/boot/vmlinuz-%s", root, de->d_name);
		if (path_exists(boot) && (!best || strverscmp(de->d_name, best) > 0)) {
			free(best);
			best = xstrdup(de->d_name);
		}
		free(boot);
	}
	closedir(d);
	free(moddir);
	if (!best)
		return error_set(err, ENOENT,
				 "no kernel in the root (no /boot/vmlinuz-* with "
				 "/lib/modules/*): check \"kernel_packages\"");
	*ver = best;
	return 0;
}

static int has_package(json_t *pkgs, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach (pkgs, i, v) {
		const char *s = json_string_value(v);
		size_t n = strcspn(s, "/=");

		if (n == strlen(name) && !strncmp(s, name, n))
			return 1;
	}
	return 0;
}

/* Whether zfs-dkms, when the root has it, built its module for kernel `ver`. */
static int check_dkms(const struct recipe *r, const char *root, const char *ver,
		      struct zb_error *err)
{
	static const char *const exts[] = { "ko", "ko.xz", "ko.zst" };

	if (!has_package(r->packages, "zfs-dkms"))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
		cleanup_free char *ko =
		    xasprintf("%s/lib/modules/%s/updates/dkms/zfs.%s", root, ver, exts[i]);

		if (path_exists(ko))
			return 0;
	}
	return error_set(err, ENOENT,
			 "zfs-dkms built no module for kernel '%s' (no "
			 "/lib/modules/%s/updates/dkms/zfs.ko): see the DKMS output",
			 ver, ver);
}

/* Record what the root holds: root.json, read back by the image's assembly. */
static int inspect_root(const struct recipe *r, const char *dir, const char *root, struct build *b,
			struct zb_error *err)
{
	const char *argv[] = { "chroot", root, "dpkg-query",
			       "-W",	 "-f", "${Package}\\t${Version}\\n",
			       NULL };
	cleanup_free char *out = NULL;
	cleanup_free char *ver = NULL;
	cleanup_free char *path = xasprintf("%s/root.json", dir);
	cleanup_json json_t *info = NULL;
	char date[32], *save = NULL, *line;
	json_t *pkgs;
	int rc;

	if (find_kernel(root, &ver, err) < 0)
		return -1;
	build_log(b, "kernel version %s", ver);
	if (check_dkms(r, root, ver, err) < 0)
		return -1;
	rc = run_capture((char *const *)argv, b->log_path, 4 << 20, &out, err);
	if (rc != 0)
		return rc > 0
			   ? error_set(err, 0, "'dpkg-query' in the root exited with status %d", rc)
			   : -1;
	pkgs = json_object();
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');

		if (!tab)
			continue;
		*tab = '\0';
		json_object_set_new(pkgs, line, json_string(tab + 1));
	}
	image_date_now(date);
	info =
	    json_pack("{s:s, s:s, s:s, s:o, s:O, s:s}", "root_hash", r->root_hash, "kernel_version",
		      ver, "suite", r->suite, "packages", pkgs, "steps", b->steps, "built", date);
	return image_manifest_write(path, info, err);
}

int root_info_load(const char *root_dir, json_t **info, const char **kver, struct zb_error *err)
{
	cleanup_free char *path = xasprintf("%s/root.json", root_dir);
	json_error_t je;

	*info = json_load_file(path, 0, &je);
	if (!*info || json_unpack(*info, "{s:s}", "kernel_version", kver) < 0)
		return error_set(err, EINVAL, "'%s': %s (remove '%s' to rebuild the root)", path,
				 *info ? "no kernel_version" : je.text, root_dir);
	return 0;
}

/* --- the builds: tables of steps --------------------------------------------------------- */

/* One root build or derivation. */
struct root_job {
	const struct recipe *r;
	const char *cache;     /* absolute */
	const char *dir;       /* the temporary directory: dir/root, dir/root.json */
	const char *base_root; /* derived: the base root's directory */
	char *root;	       /* dir/root */
	char *debs;	       /* cache/debs: downloaded .debs, shared by every build */
	char *mirror;	       /* built: the Debian mirror */
	struct mounts mounts;
};

/* A step that failed while a signal was caught failed because of it: say so. */
static int root_result(int rc, struct zb_error *err)
{
	if (rc < 0 && interrupted)
		return error_set(err, EINTR, "interrupted by signal %d", (int)interrupted);
	return rc;
}

/* proc, sys, dev, and the shared .deb cache as the root's apt archive (downloaded packages land
 * in the cache, not in the root). */
static int root_mount(struct root_job *j, struct zb_error *err)
{
	static const struct {
		const char *src, *dst, *type;
		unsigned long flags;
	} mounts[] = {
		{ "proc", "proc", "proc", 0 },
		{ "/sys", "sys", NULL, MS_BIND },
		{ "/dev", "dev", NULL, MS_BIND },
		{ NULL, "var/cache/apt/archives", NULL, MS_BIND },
	};

	image_private_mounts();
	for (size_t i = 0; i < ARRAY_SIZE(mounts); i++) {
		cleanup_free char *dst = xasprintf("%s/%s", j->root, mounts[i].dst);

		if (mounts_add(&j->mounts, mounts[i].src ? mounts[i].src : j->debs, dst,
			       mounts[i].type, mounts[i].flags, err) < 0)
			return -1;
	}
	return 0;
}

static int root_update(struct root_job *j, struct build *b, struct zb_error *err)
{
	const char *update[] = { "chroot", j->root, "apt-get", "update", "-q", NULL };

	return build_run(b, update, err);
}

static int step_debs(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;

	return mkdir_p(j->debs, 0755, err);
}

static void title_debootstrap(const void *ctx, char *buf, size_t len)
{
	const struct root_job *j = ctx;

	snprintf(buf, len, "debootstrap %s", j->r->suite);
}

static int step_debootstrap(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;
	cleanup_free char *comps = join_array(j->r->components, ",");
	cleanup_free char *comps_opt = xasprintf("--components=%s", comps);
	cleanup_free char *cache_opt = xasprintf("--cache-dir=%s", j->debs);
	const char *argv[] = { "debootstrap", "--variant=minbase",
			       comps_opt,     cache_opt,
			       j->r->suite,   j->root,
			       j->mirror,     NULL };

	return root_result(build_run(b, argv, err), err);
}

static int step_apt_update(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;
	int rc = write_apt_config(j->r, j->root, j->mirror, err);

	if (rc == 0)
		rc = root_mount(j, err);
	if (rc == 0)
		rc = root_update(j, b, err);
	return root_result(rc, err);
}

static void title_kernel(const void *ctx, char *buf, size_t len)
{
	const struct root_job *j = ctx;

	snprintf(buf, len, "install kernel (%zu packages)", json_array_size(j->r->kernel_packages));
}

int root_initramfs_updates(const char *root, int on, struct zb_error *err)
{
	static const char key[] = "update_initramfs=";
	cleanup_free char *path = xasprintf("%s/etc/initramfs-tools/update-initramfs.conf", root);
	cleanup_free char *text = NULL, *out = NULL;
	const char *line = NULL, *value, *nl;
	size_t len;

	if (!path_exists(path))
		return 0;
	if (read_file(path, 1 << 16, &text, &len, err) < 0)
		return -1;
	/* The assignment at the start of a line (the comments above it name it too). */
	for (const char *p = text; p && *p; p = (nl = strchr(p, '\n')) ? nl + 1 : NULL) {
		if (!strncmp(p, key, sizeof(key) - 1)) {
			line = p;
			break;
		}
	}
	if (!line)
		return error_set(err, EINVAL, "'%s': no %s line", path, key);
	value = line + sizeof(key) - 1;
	out = xasprintf("%.*s%s%s", (int)(value - text), text, on ? "yes" : "no",
			value + strcspn(value, "\n"));
	return write_file_atomic(path, out, strlen(out), 0644, err);
}

static int step_kernel(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;
	int rc = interrupted ? -1 : apt_install(b, j->root, j->r->kernel_packages, err);

	/* No initrd either when the packages after it (zfs-dkms) trigger an update. */
	if (rc == 0)
		rc = root_initramfs_updates(j->root, 0, err);
	return root_result(rc, err);
}

static void title_packages(const void *ctx, char *buf, size_t len)
{
	const struct root_job *j = ctx;

	snprintf(buf, len, "install packages, DKMS build (%zu packages)",
		 json_array_size(j->r->packages));
}

static int step_packages(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;

	return root_result(interrupted ? -1 : apt_install(b, j->root, j->r->packages, err), err);
}

static int step_unmount(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;

	mounts_release(&j->mounts);
	return 0;
}

static int step_inspect(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;

	return root_result(interrupted ? -1 : inspect_root(j->r, j->dir, j->root, b, err), err);
}

static const struct build_step root_steps[] = {
	{ .name = "the shared .deb cache", .quiet = 1, .run = step_debs },
	{ .name = "debootstrap", .title = title_debootstrap, .run = step_debootstrap },
	{ .name = "apt-get update", .run = step_apt_update },
	{ .name = "install kernel", .title = title_kernel, .run = step_kernel },
	{ .name = "install packages", .title = title_packages, .run = step_packages },
	{ .name = "unmount", .quiet = 1, .run = step_unmount },
	{ .name = "inspect root", .run = step_inspect },
};

int root_nsteps(void)
{
	return build_steps_count(root_steps, ARRAY_SIZE(root_steps), NULL);
}

/* Run `steps` for `j` with the environment a chroot build wants and the signals caught; the
 * mounts are undone whatever happens. */
static int root_run(struct root_job *j, const struct build_step *steps, size_t n, struct build *b,
		    struct zb_error *err)
{
	struct sigaction old[ARRAY_SIZE(caught_signals)];
	int rc;

	j->root = xasprintf("%s/root", j->dir);
	j->debs = xasprintf("%s/debs", j->cache);
	setenv("DEBIAN_FRONTEND", "noninteractive", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	signals_catch(old);
	rc = build_steps_run(steps, n, j, b, err);
	mounts_release(&j->mounts);
	signals_restore(old);
	free(j->root);
	free(j->debs);
	return rc;
}

int root_build(const struct recipe *r, const char *cache, const char *dir, struct build *b,
	       struct zb_error *err)
{
	struct root_job j = { .r = r, .cache = cache, .dir = dir };
	int rc;

	if (!strcmp(r->mirror, "host")) {
		if (image_host_mirror(r->suite, &j.mirror, err) < 0)
			return -1;
	} else {
		j.mirror = xstrdup(r->mirror);
	}
	build_log(b, "mirror %s", j.mirror);
	rc = root_run(&j, root_steps, ARRAY_SIZE(root_steps), b, err);
	free(j.mirror);
	return rc;
}

/* --- commands in a root (OpenZFS from source, builder/image/image_zfs_src.c) -------------------
 */

int root_chroot_run(const char *root, const struct root_bind *binds, size_t n,
		    const char *const argv[], struct build *b, struct zb_error *err)
{
	static const char *const sys[][3] = { { "proc", "proc", "proc" },
					      { "/sys", "sys", NULL },
					      { "/dev", "dev", NULL } };
	struct sigaction old[ARRAY_SIZE(caught_signals)];
	struct mounts m = { 0 };
	int rc = 0;

	image_private_mounts();
	setenv("DEBIAN_FRONTEND", "noninteractive", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	signals_catch(old);
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(sys); i++) {
		cleanup_free char *dst = xasprintf("%s/%s", root, sys[i][1]);

		rc = mounts_add(&m, sys[i][0], dst, sys[i][2], sys[i][2] ? 0 : MS_BIND, err);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		cleanup_free char *dst = xasprintf("%s/%s", root, binds[i].dst);

		rc = mkdir_p(dst, 0755, err);
		if (rc == 0)
			rc = mounts_add(&m, binds[i].src, dst, NULL, MS_BIND, err);
	}
	if (rc == 0)
		rc = interrupted ? -1 : build_run(b, argv, err);
	rc = root_result(rc, err);
	mounts_release(&m);
	signals_restore(old);
	return rc;
}

/* --- derived roots (the cloud flavor, docs/images.md) ------------------------------------ */

static int step_copy_base(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;
	const char *argv[] = { "cp", "-a", "--reflink=auto", j->base_root, j->root, NULL };

	return root_result(build_run(b, argv, err), err);
}

static void title_derive_install(const void *ctx, char *buf, size_t len)
{
	const struct root_job *j = ctx;

	snprintf(buf, len, "apt-get update, install %zu packages", json_array_size(j->r->packages));
}

static int step_derive_install(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;
	int rc = root_mount(j, err);

	if (rc == 0)
		rc = interrupted ? -1 : root_update(j, b, err);
	if (rc == 0)
		rc = apt_install(b, j->root, j->r->packages, err);
	return root_result(rc, err);
}

/* initramfs-tools makes the initrd for what the root now holds (systemd's udev rules and
 * hooks): the one the cloud image boots with, and the only one made (the base root has none,
 * apt_install). Updates are switched back on: the image then behaves as Debian's does. */
static int step_initramfs(void *ctx, struct build *b, struct zb_error *err)
{
	struct root_job *j = ctx;
	const char *argv[] = { "chroot", j->root, "update-initramfs", "-c", "-k", "all", NULL };
	int rc = root_initramfs_updates(j->root, 1, err);

	if (rc == 0)
		rc = interrupted ? -1 : build_run(b, argv, err);
	return root_result(rc, err);
}

static const struct build_step derive_steps[] = {
	{ .name = "copy the base root", .run = step_copy_base },
	{ .name = "apt-get update, install",
	  .title = title_derive_install,
	  .run = step_derive_install },
	{ .name = "update-initramfs", .run = step_initramfs },
	{ .name = "unmount", .quiet = 1, .run = step_unmount },
	{ .name = "inspect root", .run = step_inspect },
};

int root_derive_nsteps(void)
{
	return build_steps_count(derive_steps, ARRAY_SIZE(derive_steps), NULL);
}

int root_derive(const struct recipe *r, const char *base_root, const char *cache, const char *dir,
		struct build *b, struct zb_error *err)
{
	struct root_job j = { .r = r, .cache = cache, .dir = dir, .base_root = base_root };

	return root_run(&j, derive_steps, ARRAY_SIZE(derive_steps), b, err);
}

void root_remove_stale(const char *roots, struct build *b)
{
	DIR *d = opendir(roots);
	struct dirent *de;
	struct zb_error e;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strstr(de->d_name, ".tmp")) {
			cleanup_free char *p = xasprintf("%s/%s", roots, de->d_name);

			if (remove_tree(p, &e) < 0)
				build_log(b, "cannot remove stale '%s': %s", p, e.msg);
		}
	}
	closedir(d);
}
