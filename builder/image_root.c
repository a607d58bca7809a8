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

#include "image_build.h"
#include "util.h"

#define ROOT_STEPS 5

int root_nsteps(void)
{
	return ROOT_STEPS;
}

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

static int apt_install(struct build *b, const char *root, json_t *pkgs, struct zb_error *err)
{
	size_t n = json_array_size(pkgs), i;
	const char **argv = xcalloc(n + 8, sizeof(*argv));
	int k = 0, rc;

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

/* Record what the root holds: root.json, read back by the appliance assembly. */
static int inspect_root(const struct recipe *r, const char *dir, const char *root, struct build *b,
			struct zb_error *err)
{
	const char *argv[] = { "chroot", root, "dpkg-query",
			       "-W",	 "-f", "${Package}\\t${Version}\\n",
			       NULL };
	char *out = NULL, *ver = NULL, *save = NULL, *line, *dump, *path;
	char date[32];
	json_t *info, *pkgs;
	int rc;

	if (find_kernel(root, &ver, err) < 0)
		return -1;
	build_log(b, "kernel version %s", ver);
	if (has_package(r->packages, "zfs-dkms")) {
		static const char *const exts[] = { "ko", "ko.xz", "ko.zst" };
		int found = 0;

		for (size_t i = 0; i < ARRAY_SIZE(exts) && !found; i++) {
			char *ko =
			    xasprintf("%s/lib/modules/%s/updates/dkms/zfs.%s", root, ver, exts[i]);

			found = path_exists(ko);
			free(ko);
		}
		if (!found) {
			error_set(err, ENOENT,
				  "zfs-dkms built no module for kernel '%s' (no "
				  "/lib/modules/%s/updates/dkms/zfs.ko): see the DKMS output",
				  ver, ver);
			free(ver);
			return -1;
		}
	}
	rc = run_capture((char *const *)argv, b->log_path, 4 << 20, &out, err);
	if (rc != 0) {
		if (rc > 0)
			error_set(err, 0, "'dpkg-query' in the root exited with status %d", rc);
		free(ver);
		return -1;
	}
	pkgs = json_object();
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');

		if (!tab)
			continue;
		*tab = '\0';
		json_object_set_new(pkgs, line, json_string(tab + 1));
	}
	free(out);
	{
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	info =
	    json_pack("{s:s, s:s, s:s, s:o, s:O, s:s}", "root_hash", r->root_hash, "kernel_version",
		      ver, "suite", r->suite, "packages", pkgs, "steps", b->steps, "built", date);
	free(ver);
	dump = json_dumps(info, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(info);
	path = xasprintf("%s/root.json", dir);
	rc = write_file_atomic(path, dump, strlen(dump), 0644, err);
	free(path);
	free(dump);
	return rc;
}

static int run_steps(const struct recipe *r, const char *cache, const char *dir, const char *root,
		     const char *mirror, struct build *b, struct mounts *m, struct zb_error *err)
{
	char *cache_opt = xasprintf("--cache-dir=%s/debs", cache);
	char *comps = join_array(r->components, ",");
	char *comps_opt = xasprintf("--components=%s", comps);
	char *debs = xasprintf("%s/debs", cache);
	char *path;
	const char *debootstrap[] = { "debootstrap", "--variant=minbase",
				      comps_opt,     cache_opt,
				      r->suite,	     root,
				      mirror,	     NULL };
	const char *update[] = { "chroot", root, "apt-get", "update", "-q", NULL };
	int rc = -1;

	if (mkdir_p(debs, 0755, err) < 0)
		goto out;

	build_step_begin(b, "debootstrap %s", r->suite);
	if (build_run(b, debootstrap, err) < 0)
		goto fail;
	build_step_end(b);

	build_step_begin(b, "apt-get update");
	if (write_apt_config(r, root, mirror, err) < 0)
		goto fail;
	image_private_mounts();
	path = xasprintf("%s/proc", root);
	rc = mounts_add(m, "proc", path, "proc", 0, err);
	free(path);
	if (rc < 0)
		goto fail;
	path = xasprintf("%s/sys", root);
	rc = mounts_add(m, "/sys", path, NULL, MS_BIND, err);
	free(path);
	if (rc < 0)
		goto fail;
	path = xasprintf("%s/dev", root);
	rc = mounts_add(m, "/dev", path, NULL, MS_BIND, err);
	free(path);
	if (rc < 0)
		goto fail;
	/* Downloaded packages land in the shared cache, not in the root. */
	path = xasprintf("%s/var/cache/apt/archives", root);
	rc = mounts_add(m, debs, path, NULL, MS_BIND, err);
	free(path);
	if (rc < 0)
		goto fail;
	rc = -1;
	if (build_run(b, update, err) < 0)
		goto fail;
	build_step_end(b);

	build_step_begin(b, "install kernel (%zu packages)", json_array_size(r->kernel_packages));
	if (interrupted || apt_install(b, root, r->kernel_packages, err) < 0)
		goto fail;
	build_step_end(b);

	build_step_begin(b, "install packages, DKMS build (%zu packages)",
			 json_array_size(r->packages));
	if (interrupted || apt_install(b, root, r->packages, err) < 0)
		goto fail;
	build_step_end(b);
	mounts_release(m);

	build_step_begin(b, "inspect root");
	if (interrupted || inspect_root(r, dir, root, b, err) < 0)
		goto fail;
	build_step_end(b);
	rc = 0;
	goto out;
fail:
	if (interrupted)
		error_set(err, EINTR, "interrupted by signal %d", (int)interrupted);
	build_step_fail(b, err);
out:
	free(cache_opt);
	free(comps);
	free(comps_opt);
	free(debs);
	return rc;
}

int root_build(const struct recipe *r, const char *cache, const char *dir, struct build *b,
	       struct zb_error *err)
{
	struct sigaction old[ARRAY_SIZE(caught_signals)];
	struct mounts m = { .n = 0 };
	char *root = xasprintf("%s/root", dir);
	char *mirror = NULL;
	int rc;

	if (!strcmp(r->mirror, "host")) {
		if (image_host_mirror(r->suite, &mirror, err) < 0) {
			free(root);
			return -1;
		}
	} else {
		mirror = xstrdup(r->mirror);
	}
	build_log(b, "mirror %s", mirror);
	setenv("DEBIAN_FRONTEND", "noninteractive", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	signals_catch(old);
	rc = run_steps(r, cache, dir, root, mirror, b, &m, err);
	mounts_release(&m);
	signals_restore(old);
	free(mirror);
	free(root);
	return rc;
}

/* --- derived roots (the cloud flavor, docs/images.md) ------------------------------------ */

int root_derive_nsteps(void)
{
	return 4;
}

static int derive_steps(const struct recipe *r, const char *base_root, const char *cache,
			const char *dir, const char *root, struct build *b, struct mounts *m,
			struct zb_error *err)
{
	char *debs = xasprintf("%s/debs", cache), *path;
	const char *copy[] = { "cp", "-a", "--reflink=auto", base_root, root, NULL };
	const char *update[] = { "chroot", root, "apt-get", "update", "-q", NULL };
	const char *initramfs[] = { "chroot", root, "update-initramfs", "-u", "-k", "all", NULL };
	int rc = -1;

	build_step_begin(b, "copy the base root");
	if (build_run(b, copy, err) < 0)
		goto fail;
	build_step_end(b);

	build_step_begin(b, "apt-get update, install %zu packages", json_array_size(r->packages));
	image_private_mounts();
	path = xasprintf("%s/proc", root);
	rc = mounts_add(m, "proc", path, "proc", 0, err);
	free(path);
	if (rc == 0) {
		path = xasprintf("%s/sys", root);
		rc = mounts_add(m, "/sys", path, NULL, MS_BIND, err);
		free(path);
	}
	if (rc == 0) {
		path = xasprintf("%s/dev", root);
		rc = mounts_add(m, "/dev", path, NULL, MS_BIND, err);
		free(path);
	}
	if (rc == 0) {
		path = xasprintf("%s/var/cache/apt/archives", root);
		rc = mounts_add(m, debs, path, NULL, MS_BIND, err);
		free(path);
	}
	if (rc < 0)
		goto fail;
	rc = -1;
	if (interrupted || build_run(b, update, err) < 0 ||
	    apt_install(b, root, r->packages, err) < 0)
		goto fail;
	build_step_end(b);

	/* initramfs-tools rebuilds the initrd for what the root now holds (systemd's udev rules
	 * and hooks): the one the cloud image boots with. */
	build_step_begin(b, "update-initramfs");
	if (interrupted || build_run(b, initramfs, err) < 0)
		goto fail;
	build_step_end(b);
	mounts_release(m);

	build_step_begin(b, "inspect root");
	if (interrupted || inspect_root(r, dir, root, b, err) < 0)
		goto fail;
	build_step_end(b);
	rc = 0;
	goto out;
fail:
	if (interrupted)
		error_set(err, EINTR, "interrupted by signal %d", (int)interrupted);
	build_step_fail(b, err);
out:
	free(debs);
	return rc;
}

int root_derive(const struct recipe *r, const char *base_root, const char *cache, const char *dir,
		struct build *b, struct zb_error *err)
{
	struct sigaction old[ARRAY_SIZE(caught_signals)];
	struct mounts m = { .n = 0 };
	char *root = xasprintf("%s/root", dir);
	int rc;

	setenv("DEBIAN_FRONTEND", "noninteractive", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	signals_catch(old);
	rc = derive_steps(r, base_root, cache, dir, root, b, &m, err);
	mounts_release(&m);
	signals_restore(old);
	free(root);
	return rc;
}
