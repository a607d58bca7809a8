/* OpenZFS from source into an appliance image (builder/image/image_zfs_src.h, docs/images.md). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/util.h"
#include "git_tree.h"
#include "image_zfs_src.h"

#define ZFS_DIFF_MAX	(64u << 20)	  /* bytes of a dirty tree's diff */
#define ZFS_PATCH_MAX	((off_t)64 << 20) /* bytes of a patch file */
#define ZFS_TARBALL_MAX ((off_t)1 << 30)  /* bytes of a source tarball (OpenZFS 2.2: 30 MiB) */

/* --- the recipe's "zfs_source" ----------------------------------------------------------- */

/* Debian package names and versions: [A-Za-z0-9.+~:-], not starting with '-'. */
static int plain_word(const char *s)
{
	if (!*s || s[0] == '-')
		return 0;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || strchr(".+~:-", *s)))
			return 0;
	return 1;
}

/* A configure option: "--name" or "--name=value", printable, no shell needed (argv). */
static int configure_option(const char *s)
{
	if (strncmp(s, "--", 2) || !s[2] || s[2] == '=')
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/* `rel` against the directory of `recipe_path`, unless absolute. */
static char *beside(const char *recipe_path, const char *rel)
{
	const char *slash = strrchr(recipe_path, '/');

	if (rel[0] == '/' || !slash)
		return xstrdup(rel);
	return xasprintf("%.*s/%s", (int)(slash - recipe_path), recipe_path, rel);
}

static int load_patches(const char *rp, json_t *patches, struct zfs_src *zs, struct zb_error *err)
{
	size_t i;
	json_t *v;

	if (!patches)
		return 0;
	if (!json_is_array(patches))
		return error_set(err, EINVAL, "'%s': \"zfs_source\".\"patches\" must be an array",
				 rp);
	zs->patches = xcalloc(json_array_size(patches) + 1, sizeof(*zs->patches));
	json_array_foreach (patches, i, v) {
		if (!json_is_string(v) || !*json_string_value(v))
			return error_set(
			    err, EINVAL,
			    "'%s': \"zfs_source\".\"patches\"[%zu] must be a file name", rp, i);
		zs->patches[zs->n_patches++].path = beside(rp, json_string_value(v));
	}
	return 0;
}

int zfs_src_load(const char *rp, json_t *spec, struct zfs_src *zs, struct zb_error *err)
{
	const char *path = NULL;
	json_t *patches = NULL;
	json_error_t je;
	size_t i;
	json_t *v;

	memset(zs, 0, sizeof(*zs));
	if (json_unpack_ex(spec, &je, JSON_STRICT, "{s:s, s?s, s?s, s?s, s?s, s?o, s?o}", "kind",
			   &zs->kind, "package", &zs->package, "version", &zs->version, "sha256",
			   &zs->pinned_sha, "path", &path, "patches", &patches, "configure",
			   &zs->configure) < 0)
		return error_set(err, EINVAL, "'%s': \"zfs_source\": %s", rp, je.text);
	if (strcmp(zs->kind, "debian") && strcmp(zs->kind, "tarball") && strcmp(zs->kind, "dir"))
		return error_set(err, EINVAL,
				 "'%s': \"zfs_source\".\"kind\" '%s' must be 'debian', 'tarball' "
				 "or 'dir'",
				 rp, zs->kind);
	if (!strcmp(zs->kind, "debian")) {
		if (!zs->package)
			zs->package = "zfs-linux";
		if (path || !plain_word(zs->package) || (zs->version && !plain_word(zs->version)))
			return error_set(err, EINVAL,
					 "'%s': \"zfs_source\" of kind 'debian' takes a plain "
					 "\"package\" and \"version\", no \"path\"",
					 rp);
		if (zs->pinned_sha && (!zs->version || strlen(zs->pinned_sha) != 64 ||
				       strspn(zs->pinned_sha, "0123456789abcdef") != 64))
			return error_set(err, EINVAL,
					 "'%s': \"zfs_source\".\"sha256\" must be the .dsc's "
					 "SHA-256 (64 lowercase hex digits), with a \"version\"",
					 rp);
	} else {
		if (!path || !*path || zs->package || zs->version || zs->pinned_sha)
			return error_set(
			    err, EINVAL,
			    "'%s': \"zfs_source\" of kind '%s' takes a \"path\" (and no "
			    "\"package\" or \"version\")",
			    rp, zs->kind);
		zs->path = beside(rp, path);
	}
	if (zs->configure && !json_is_array(zs->configure))
		return error_set(err, EINVAL, "'%s': \"zfs_source\".\"configure\" must be an array",
				 rp);
	json_array_foreach (zs->configure, i, v) {
		if (!json_is_string(v) || !configure_option(json_string_value(v)))
			return error_set(
			    err, EINVAL,
			    "'%s': \"zfs_source\".\"configure\"[%zu] must be an option "
			    "'--name[=value]' without control characters",
			    rp, i);
	}
	return load_patches(rp, patches, zs, err);
}

void zfs_src_release(struct zfs_src *zs)
{
	for (size_t i = 0; i < zs->n_patches; i++)
		free(zs->patches[i].path);
	free(zs->patches);
	free(zs->path);
	free(zs->dsc);
	free(zs->dsc_version);
	free(zs->diff);
	free(zs->module_version);
	memset(zs, 0, sizeof(*zs));
}

/* --- identities -------------------------------------------------------------------------- */

/* The .dsc apt would fetch for the package (offline: from apt's lists), and its SHA-256; or the
 * one the recipe pins (no apt needed until the build: the key is the recipe's alone). */
static int key_debian(struct zfs_src *zs, struct zb_error *err)
{
	if (zs->pinned_sha) {
		const char *colon = strchr(zs->version, ':'); /* file names have no epoch */

		zs->dsc = xasprintf("%s_%s.dsc", zs->package, colon ? colon + 1 : zs->version);
		zs->dsc_version = xstrdup(zs->version);
		memcpy(zs->source_sha, zs->pinned_sha, 65);
		return 0;
	}

	cleanup_free char *what =
	    zs->version ? xasprintf("%s=%s", zs->package, zs->version) : xstrdup(zs->package);
	const char *argv[] = { "apt-get", "source", "--print-uris", "-qq", what, NULL };
	cleanup_free char *out = NULL;
	char *save = NULL, *line;
	int rc = run_capture((char *const *)argv, NULL, 1 << 20, &out, err);

	if (rc != 0)
		return rc > 0 ? error_set(
				    err, 0,
				    "'apt-get source --print-uris %s' exited with status %d "
				    "(is there a deb-src entry? builder/install-deps.sh adds it)",
				    what, rc)
			      : -1;
	/* 'URI' NAME SIZE SHA256:HEX */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[256], hash[80];
		unsigned long long size;
		size_t n;

		if (sscanf(line, "%*s %255s %llu %79s", name, &size, hash) != 3)
			continue;
		n = strlen(name);
		size_t np = strlen(zs->package);

		if (n < np + 6 || strcmp(name + n - 4, ".dsc") || strncmp(name, zs->package, np) ||
		    name[np] != '_' || strncmp(hash, "SHA256:", 7) || strlen(hash + 7) != 64 ||
		    strspn(hash + 7, "0123456789abcdef") != 64)
			continue;
		name[n - 4] = '\0';
		if (!plain_word(name + np + 1))
			continue;
		name[n - 4] = '.';
		zs->dsc = xstrdup(name);
		memcpy(zs->source_sha, hash + 7, 65);
		/* PACKAGE_VERSION.dsc */
		zs->dsc_version = xasprintf("%.*s", (int)(n - 4 - np - 1), name + np + 1);
		return 0;
	}
	return error_set(err, ENOENT, "apt knows no source package '%s' with a SHA-256", what);
}

/* HEAD and the diff of a checkout, read as data (builder/image/git_tree.h): the checkout's own
 * configuration never reaches git. */
static int key_dir(struct zfs_src *zs, struct zb_error *err)
{
	struct git_tree g;
	int rc = git_tree_open(&g, zs->path, err);

	if (rc == 0) {
		/* the manifest names the absolute path */
		free(zs->path);
		zs->path = xstrdup(g.path);
		memcpy(zs->commit, g.commit, sizeof(zs->commit));
		rc = git_tree_diff(&g, ZFS_DIFF_MAX, &zs->diff, err);
	}
	git_tree_close(&g);
	if (rc < 0)
		return -1;
	zs->dirty = zs->diff && *zs->diff;
	if (zs->dirty)
		sha256_hex(zs->diff, strlen(zs->diff), zs->diff_sha);
	return 0;
}

/* The build script: beside the zbench executable (the repository), or $ZBENCH_ZFS_BUILD. */
static char *script_path(void)
{
	return self_file("ZBENCH_ZFS_BUILD", "builder/image/image_zfs_build.sh");
}

/* The SHA-256 of a recipe's tarball or patch: a regular file of at most `max` bytes (a device
 * such as /dev/zero never ends; the recipe may be someone else's). */
static int sha256_regular(const char *path, off_t max, char out[65], struct zb_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return error_sys(err, errno, "'%s'", path);
	if (!S_ISREG(st.st_mode))
		return error_set(err, EINVAL, "'%s' is not a regular file", path);
	if (st.st_size > max)
		return error_set(err, EFBIG, "'%s' is larger than %lld MiB", path,
				 (long long)(max >> 20));
	return sha256_file_hex(path, out, err);
}

int zfs_src_key(struct zfs_src *zs, const char *root_hash, struct zb_error *err)
{
	cleanup_free char *script = script_path();
	cleanup_free char *conf = zs->configure ? json_dumps(zs->configure, JSON_COMPACT) : NULL;
	cleanup_free char *id = NULL;
	char *key;
	int rc = 0;

	if (!strcmp(zs->kind, "debian"))
		rc = key_debian(zs, err);
	else if (!strcmp(zs->kind, "tarball"))
		rc = sha256_regular(zs->path, ZFS_TARBALL_MAX, zs->source_sha, err);
	else
		rc = key_dir(zs, err);
	if (rc < 0)
		return error_wrap(err, "OpenZFS source (%s)", zs->kind);
	if (sha256_file_hex(script, zs->script_sha, err) < 0)
		return error_wrap(err, "the OpenZFS build script");
	id = xasprintf("zfs-build %d\nkind %s\nsource %s\nconfigure %s\nroot %s\n", ZFS_SRC_VERSION,
		       zs->kind, !strcmp(zs->kind, "dir") ? zs->commit : zs->source_sha,
		       conf ? conf : "[]", root_hash);
	sha256_hex(id, strlen(id), zs->build_id);
	key = xasprintf("zfs %s\ndiff %s\nscript %s\n", zs->build_id,
			zs->dirty ? zs->diff_sha : "-", zs->script_sha);
	for (size_t i = 0; i < zs->n_patches; i++) {
		char *more;

		if (sha256_regular(zs->patches[i].path, ZFS_PATCH_MAX, zs->patches[i].sha, err) < 0)
			return error_wrap(err, "OpenZFS patch");
		more = xasprintf("%spatch %s\n", key, zs->patches[i].sha);
		free(key);
		key = more;
	}
	sha256_hex(key, strlen(key), zs->key);
	free(key);
	return 0;
}

json_t *zfs_src_describe(const struct zfs_src *zs)
{
	json_t *o = json_pack("{s:s, s:s, s:b, s:o, s:f}", "kind", zs->kind, "build_tree",
			      zs->build_id, "dirty", zs->dirty, "configure",
			      zs->configure ? json_deep_copy(zs->configure) : json_array(),
			      "build_seconds", zs->seconds);
	json_t *patches = json_array();

	if (!strcmp(zs->kind, "debian"))
		json_object_set_new(o, "package",
				    json_pack("{s:s, s:s?, s:s?}", "name", zs->package, "version",
					      zs->dsc_version, "dsc", zs->dsc));
	else
		json_object_set_new(o, "path", json_string(zs->path));
	if (!strcmp(zs->kind, "dir"))
		json_object_set_new(o, "commit", json_string(zs->commit));
	else
		json_object_set_new(o, "sha256", json_string(zs->source_sha));
	if (zs->dirty)
		json_object_set_new(o, "diff_sha256", json_string(zs->diff_sha));
	for (size_t i = 0; i < zs->n_patches; i++)
		json_array_append_new(patches, json_pack("{s:s, s:s}", "path", zs->patches[i].path,
							 "sha256", zs->patches[i].sha));
	json_object_set_new(o, "patches", patches);
	json_object_set_new(o, "script_sha256", json_string(zs->script_sha));
	json_object_set_new(o, "key", json_string(zs->key));
	if (zs->module_version)
		json_object_set_new(o, "module_version", json_string(zs->module_version));
	return o;
}

/* Copy `keys` of `from` that are present into `to`. */
static void copy_keys(json_t *to, const json_t *from, const char *const *keys)
{
	for (; *keys; keys++) {
		json_t *v = json_object_get(from, *keys);

		if (v)
			json_object_set_new(to, *keys, json_deep_copy(v));
	}
}

json_t *zfs_src_record(const json_t *image_manifest)
{
	static const char *const keys[] = { "kind",  "sha256",	       "commit",
					    "dirty", "diff_sha256",    "configure",
					    "key",   "module_version", NULL };
	const json_t *src = json_object_get(image_manifest, "zfs_source");
	const json_t *built = json_object_get(image_manifest, "zfs_version");
	const json_t *pkg = json_object_get(src, "package");
	json_t *patches, *p, *o;
	size_t i;

	if (!json_is_object(src))
		return json_is_string(built)
			   ? json_pack("{s:s, s:O}", "kind", "package", "module_version", built)
			   : NULL;
	o = json_object();
	copy_keys(o, src, keys);
	if (json_is_object(pkg)) {
		static const char *const pkeys[] = { "version", "dsc", NULL };

		json_object_set(o, "package", json_object_get(pkg, "name"));
		copy_keys(o, pkg, pkeys);
	}
	patches = json_array();
	json_array_foreach (json_object_get(src, "patches"), i, p) {
		const char *path = json_string_value(json_object_get(p, "path"));
		const char *base = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

		json_array_append_new(patches, json_pack("{s:s?, s:O?}", "name", base, "sha256",
							 json_object_get(p, "sha256")));
	}
	json_object_set_new(o, "patches", patches);
	return o;
}

/* --- the kept build tree ----------------------------------------------------------------- */

/* One build tree: cache/zfs-build/<build id>/{tree, applied/, src.tar}, under its lock. */
struct tree_job {
	struct zfs_src *zs;
	struct build *b;
	const char *cache;
	char *dir, *tree, *applied;
	/* `git apply` in the tree with a private, empty GIT_DIR: neither a repository above it
	 * (the cache inside someone's checkout) nor a `.git` the source ships is taken for its own,
	 * so no filter of theirs runs (builder/image/git_tree.h). */
	struct git_tree git;
};

/* `git archive` of the checkout's commit (its objects only: no filter of its configuration can
 * run; builder/image/git_tree.h), extracted into `tmp`. */
static int extract_commit(struct tree_job *t, const char *tmp, struct zb_error *err)
{
	cleanup_free char *tar = xasprintf("%s/src.tar", t->dir);
	const char *args[] = { "archive", "-o", tar, "--end-of-options", t->zs->commit, NULL };
	const char *x[] = { "tar", "-x", "-f", tar, "-C", tmp, "--no-same-owner", NULL };
	struct git_tree g;
	int rc = git_tree_open(&g, t->zs->path, err);

	if (rc == 0) {
		cleanup_free const char **argv = git_tree_argv(&g, args);

		rc = build_run(t->b, argv, err);
	}
	git_tree_close(&g);
	if (rc < 0 || build_run(t->b, x, err) < 0)
		return -1;
	return unlink(tar) < 0 ? error_sys(err, errno, "removing '%s'", tar) : 0;
}

/* Extract the pristine source into `tmp` (a fresh path). */
static int extract(struct tree_job *t, const char *tmp, struct zb_error *err)
{
	struct zfs_src *zs = t->zs;

	if (!strcmp(zs->kind, "debian")) {
		cleanup_free char *srcdir = xasprintf("%s/src", t->cache);
		cleanup_free char *dsc = xasprintf("%s/%s", srcdir, zs->dsc);
		cleanup_free char *what = xasprintf("%s=%s", zs->package, zs->dsc_version);
		const char *get[] = { "env", "-C", srcdir, "apt-get", "source", "--download-only",
				      "-q",  what, NULL };
		const char *x[] = { "dpkg-source", "--require-strong-checksums", "-x", dsc, tmp,
				    NULL };
		char sha[65];

		if (mkdir_p(srcdir, 0755, err) < 0)
			return -1;
		if (!path_exists(dsc) && build_run(t->b, get, err) < 0)
			return -1;
		if (sha256_file_hex(dsc, sha, err) < 0)
			return -1;
		if (strcmp(sha, zs->source_sha))
			return error_set(err, EINVAL, "'%s' is not the .dsc apt lists (SHA-256 %s)",
					 dsc, zs->source_sha);
		return build_run(t->b, x, err);
	}
	if (mkdir_p(tmp, 0755, err) < 0)
		return -1;
	if (!strcmp(zs->kind, "tarball")) {
		const char *x[] = { "tar",
				    "-x",
				    "-f",
				    zs->path,
				    "-C",
				    tmp,
				    "--strip-components=1",
				    "--no-same-owner",
				    "--no-same-permissions",
				    NULL };

		return build_run(t->b, x, err);
	}
	return extract_commit(t, tmp, err);
}

/* Undo the patches the last build applied (their copies in applied/, last first). 1 when one
 * does not reverse (the tree is then extracted again). */
static int revert(struct tree_job *t, struct zb_error *err)
{
	for (int i = 99; i >= 0; i--) {
		cleanup_free char *p = xasprintf("%s/%02d.patch", t->applied, i);
		const char *args[] = { "apply", "-R", p, NULL };
		cleanup_free const char **argv = git_tree_argv(&t->git, args);
		struct zb_error e;

		if (!path_exists(p))
			continue;
		if (build_run(t->b, argv, &e) < 0) {
			build_log(t->b, "cannot revert '%s' (%s): extracting the source again", p,
				  e.msg);
			return 1;
		}
		if (unlink(p) < 0)
			return error_sys(err, errno, "removing '%s'", p);
	}
	return 0;
}

/* Apply `path` (a copy kept as applied/NN.patch first, so a later build can revert it). */
static int apply_one(struct tree_job *t, int n, const char *path, struct zb_error *err)
{
	cleanup_free char *copy = xasprintf("%s/%02d.patch", t->applied, n);
	const char *args[] = { "apply", "--whitespace=nowarn", copy, NULL };
	cleanup_free const char **argv = git_tree_argv(&t->git, args);

	if (copy_file(path, copy, err) < 0)
		return -1;
	if (build_run(t->b, argv, err) < 0) {
		unlink(copy);
		return error_wrap(err, "applying '%s'", path);
	}
	return 0;
}

static int apply_all(struct tree_job *t, struct zb_error *err)
{
	struct zfs_src *zs = t->zs;
	int n = 0;

	if (zs->n_patches + 1 > 100)
		return error_set(err, E2BIG, "more than 99 OpenZFS patches");
	if (zs->dirty) {
		cleanup_free char *diff = xasprintf("%s/dirty.diff", t->dir);

		if (write_file_atomic(diff, zs->diff, strlen(zs->diff), 0644, err) < 0 ||
		    apply_one(t, n++, diff, err) < 0)
			return error_wrap(err, "the checkout's uncommitted changes");
	}
	for (size_t i = 0; i < zs->n_patches; i++)
		if (apply_one(t, n++, zs->patches[i].path, err) < 0)
			return -1;
	return 0;
}

/* The tree as the source plus this build's diff and patches, its build products kept. */
static int tree_prepare(struct tree_job *t, struct zb_error *err)
{
	cleanup_free char *tmp = xasprintf("%s.tmp", t->tree);
	int rc = 0;

	if (path_exists(t->tree) && path_exists(t->applied))
		rc = revert(t, err);
	if (rc < 0)
		return -1;
	if (rc > 0 || !path_exists(t->tree) || !path_exists(t->applied)) {
		build_log(t->b, "extracting the OpenZFS source into '%s'", t->tree);
		if ((path_exists(t->tree) && remove_tree(t->tree, err) < 0) ||
		    (path_exists(t->applied) && remove_tree(t->applied, err) < 0) ||
		    (path_exists(tmp) && remove_tree(tmp, err) < 0))
			return -1;
		if (extract(t, tmp, err) < 0)
			return error_wrap(err, "extracting the OpenZFS source");
		if (rename(tmp, t->tree) < 0)
			return error_sys(err, errno, "renaming '%s'", tmp);
		if (mkdir_p(t->applied, 0755, err) < 0)
			return -1;
	} else {
		build_log(t->b, "reusing the OpenZFS build tree '%s'", t->tree);
	}
	return apply_all(t, err);
}

/* --- the build --------------------------------------------------------------------------- */

static int build_in_root(struct tree_job *t, const char *root, const char *kver,
			 struct zb_error *err)
{
	struct zfs_src *zs = t->zs;
	cleanup_free char *script = script_path();
	cleanup_free char *ccache = xasprintf("%s/ccache", t->cache);
	cleanup_free char *in_root = xasprintf("%s/usr/local/sbin/zbench-zfs-build", root);
	char jobs[24];
	size_t n = json_array_size(zs->configure), k = 0;
	const char **argv = xcalloc(n + 8, sizeof(*argv));
	const struct root_bind binds[] = { { t->tree, "usr/src/zbench-zfs" },
					   { ccache, "var/cache/zbench-ccache" } };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	snprintf(jobs, sizeof(jobs), "%ld", cpus > 0 ? cpus : 1);
	argv[k++] = "chroot";
	argv[k++] = root;
	argv[k++] = "/bin/sh";
	argv[k++] = "/usr/local/sbin/zbench-zfs-build";
	argv[k++] = kver;
	argv[k++] = jobs;
	for (size_t i = 0; i < n; i++)
		argv[k++] = json_string_value(json_array_get(zs->configure, i));
	rc = mkdir_p(ccache, 0755, err);
	if (rc == 0)
		rc = copy_file(script, in_root, err);
	if (rc == 0)
		rc = root_chroot_run(root, binds, ARRAY_SIZE(binds), argv, t->b, err);
	free(argv);
	return rc;
}

/* The version the module reports (/sys/module/zfs/version in the guest). */
static int module_version(struct zfs_src *zs, const char *root, const char *kver, struct build *b,
			  struct zb_error *err)
{
	const char *argv[] = {
		"chroot", root, "modinfo", "-k", kver, "-F", "version", "zfs", NULL
	};
	char *out = NULL;
	int rc = run_capture((char *const *)argv, b->log_path, 4096, &out, err);

	if (rc != 0 || !out || !*out) {
		free(out);
		return rc < 0 ? -1 : error_set(err, ENOENT, "no zfs module for kernel '%s'", kver);
	}
	out[strcspn(out, "\n")] = '\0';
	zs->module_version = text_printable(out);
	return 0;
}

int zfs_src_build(struct zfs_src *zs, const char *cache, const char *root, const char *kver,
		  struct build *b, struct zb_error *err)
{
	struct tree_job t = { .zs = zs, .b = b, .cache = cache };
	cleanup_free char *lock = NULL;
	cleanup_close int fd = -1;
	double t0 = now_monotonic();
	int rc;

	t.dir = xasprintf("%s/zfs-build/%s", cache, zs->build_id);
	t.tree = xasprintf("%s/tree", t.dir);
	t.applied = xasprintf("%s/applied", t.dir);
	lock = xasprintf("%s.lock", t.dir);
	rc = mkdir_p(t.dir, 0755, err);
	if (rc == 0)
		rc = git_tree_plain(&t.git, t.tree, err);
	if (rc == 0 && (fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
		rc = error_sys(err, errno, "opening '%s'", lock);
	/* One build at a time per tree; another image's build of the same tree waits. */
	if (rc == 0 && flock(fd, LOCK_EX) < 0)
		rc = error_sys(err, errno, "locking '%s'", lock);
	if (rc == 0)
		rc = tree_prepare(&t, err);
	if (rc == 0)
		rc = build_in_root(&t, root, kver, err);
	if (rc == 0)
		rc = module_version(zs, root, kver, b, err);
	zs->seconds = now_monotonic() - t0;
	build_log(b, "OpenZFS %s built in %.0f s (tree %s)",
		  zs->module_version ? zs->module_version : "?", zs->seconds, t.tree);
	free(t.dir);
	free(t.tree);
	free(t.applied);
	git_tree_close(&t.git);
	return rc;
}
