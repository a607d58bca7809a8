/* Image recipes and what the cache holds: loading and checking recipes (images/NAME.json), the
 * cache directory, the guest files that go into every image, and opening a finished entry by its
 * manifest (docs/images.md). The flavors (image_flavor.h) and the cache transaction build on these.
 */
#include "image.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/term.h"
#include "core/util.h"
#include "image_build.h"
#include "image_zfs_src.h"

/* --- recipes ----------------------------------------------------------------------------- */

void recipe_release(struct recipe *r)
{
	json_decref(r->json);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

static int check_strings(const char *path, const char *key, json_t *arr, int may_be_empty,
			 struct zb_error *err)
{
	size_t i;
	json_t *v;

	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return error_set(err, EINVAL, "'%s': \"%s\" must be an array of strings", path,
				 key);
	if (!may_be_empty && json_array_size(arr) == 0)
		return error_set(err, EINVAL, "'%s': \"%s\" must not be empty", path, key);
	json_array_foreach (arr, i, v) {
		const char *s = json_string_value(v);

		if (!s || !*s)
			return error_set(err, EINVAL,
					 "'%s': \"%s\"[%zu] must be a non-empty string", path, key,
					 i);
		/* Package names and module names go on command lines: no option look-alikes. */
		if (s[0] == '-')
			return error_set(err, EINVAL, "'%s': \"%s\"[%zu] '%s' starts with '-'",
					 path, key, i, s);
	}
	return 0;
}

/* Whitespace, a control character or DEL anywhere in s. */
static int has_space(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 1;
	return 0;
}

static int check_words(const char *path, const char *key, json_t *arr, struct zb_error *err)
{
	size_t i;
	json_t *v;

	json_array_foreach (arr, i, v) {
		if (json_is_string(v) && has_space(json_string_value(v)))
			return error_set(err, EINVAL,
					 "'%s': \"%s\"[%zu] contains whitespace or a control "
					 "character",
					 path, key, i);
	}
	return 0;
}

static int check_paths(const char *path, const char *key, json_t *arr, struct zb_error *err)
{
	size_t i;
	json_t *v;

	if (check_strings(path, key, arr, 1, err) < 0)
		return -1;
	json_array_foreach (arr, i, v) {
		const char *s = json_string_value(v);
		size_t n = strlen(s);

		/* "/" and "/a" are shorter than "/..": no look before the string (fuzz_recipe) */
		if (s[0] != '/' || strstr(s, "/../") || (n >= 3 && !strcmp(s + n - 3, "/..")))
			return error_set(err, EINVAL,
					 "'%s': \"%s\"[%zu] '%s' must be an absolute path without "
					 "'..'",
					 path, key, i, s);
	}
	return 0;
}

/* The recipe keys that shape the root; the others only affect the appliance. An optional key
 * absent from a recipe is absent from the hashed object too, so adding one here leaves the root
 * hash of every recipe without it unchanged (no rebuild of cached roots). */
static const char *const root_keys[] = { "distro",	    "suite",	"components", "mirror",
					 "kernel_packages", "packages", "backports" };

/* Package entries are apt arguments: "name", or "name/RELEASE" to take that package (and what
 * it needs that only RELEASE has) from another release of the root's sources. The releases the
 * root has: SUITE, SUITE-updates, and SUITE-backports if "backports" is true. */
static int check_release(const char *path, const char *key, json_t *arr, const struct recipe *r,
			 struct zb_error *err)
{
	size_t i, n = strlen(r->suite);
	json_t *v;

	json_array_foreach (arr, i, v) {
		const char *s = json_string_value(v), *rel = strchr(s, '/');

		if (!rel)
			continue;
		rel++;
		if (rel == s + 1 || strncmp(rel, r->suite, n) ||
		    (rel[n] && strcmp(rel + n, "-updates") && strcmp(rel + n, "-backports")))
			return error_set(err, EINVAL,
					 "'%s': \"%s\"[%zu] '%s': the release after '/' must be "
					 "'%s', '%s-updates' or '%s-backports'",
					 path, key, i, s, r->suite, r->suite, r->suite);
		if (!strcmp(rel + n, "-backports") && !r->backports)
			return error_set(err, EINVAL,
					 "'%s': \"%s\"[%zu] '%s' needs \"backports\": true", path,
					 key, i, s);
	}
	return 0;
}

int recipe_load(const char *path, struct recipe *r, struct zb_error *err)
{
	char *text;
	size_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	if (read_file(path, RECIPE_FILE_MAX, &text, &len, err) < 0)
		return error_wrap(err, "recipe '%s'", path);
	rc = recipe_load_buffer(path, text, len, r, err);
	free(text);
	return rc;
}

int recipe_load_buffer(const char *path, const char *text, size_t len, struct recipe *r,
		       struct zb_error *err)
{
	json_error_t je;
	json_t *j, *root_part;
	char *canon;

	memset(r, 0, sizeof(*r));
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return error_set(err, EINVAL, "'%s': line %d, column %d: %s", path, je.line,
				 je.column, je.text);
	r->json = j;
	r->path = xstrdup(path);
	r->compression = "none";
	if (json_unpack_ex(j, &je, JSON_STRICT,
			   "{s:s, s?s, s:s, s:s, s:o, s?b, s:s, s:o, s:o, s:o, s?o, s:o, s?o, s?o, "
			   "s?o, s?s, s?o}",
			   "name", &r->name, "description", &(const char *){ NULL }, "distro",
			   &r->distro, "suite", &r->suite, "components", &r->components,
			   "backports", &r->backports, "mirror", &r->mirror, "kernel_packages",
			   &r->kernel_packages, "packages", &r->packages, "modules", &r->modules,
			   "optional_modules", &r->optional_modules, "files", &r->files,
			   "optional_files", &r->optional_files, "trees", &r->trees, "exclude",
			   &r->exclude, "initramfs_compression", &r->compression, "zfs_source",
			   &r->zfs_source) < 0) {
		error_set(err, EINVAL, "'%s': %s", path, je.text);
		goto fail;
	}
	if (strcmp(r->distro, "debian")) {
		error_set(err, EINVAL, "'%s': \"distro\" '%s' is not supported (only 'debian')",
			  path, r->distro);
		goto fail;
	}
	if (strcmp(r->compression, "none") && strcmp(r->compression, "gzip")) {
		error_set(err, EINVAL,
			  "'%s': \"initramfs_compression\" '%s' must be 'none' or 'gzip'", path,
			  r->compression);
		goto fail;
	}
	if (!*r->name || strchr(r->name, '/') || !*r->suite || strchr(r->suite, '/') ||
	    r->suite[0] == '-') {
		error_set(err, EINVAL, "'%s': \"name\" and \"suite\" must be plain words", path);
		goto fail;
	}
	if (strcmp(r->mirror, "host") && strncmp(r->mirror, "http://", 7) &&
	    strncmp(r->mirror, "https://", 8) && strncmp(r->mirror, "file:/", 6)) {
		error_set(err, EINVAL,
			  "'%s': \"mirror\" must be 'host' or an http(s):// or file: URI", path);
		goto fail;
	}
	/* both land in the root's apt sources, one line per entry: a space or a line break would
	 * add a source of the author's */
	if (has_space(r->mirror)) {
		error_set(err, EINVAL,
			  "'%s': \"mirror\" contains whitespace or a control character", path);
		goto fail;
	}
	if (check_words(path, "components", r->components, err) < 0 ||
	    check_strings(path, "components", r->components, 0, err) < 0 ||
	    check_strings(path, "kernel_packages", r->kernel_packages, 0, err) < 0 ||
	    check_strings(path, "packages", r->packages, 1, err) < 0 ||
	    check_strings(path, "modules", r->modules, 1, err) < 0 ||
	    check_strings(path, "optional_modules", r->optional_modules, 1, err) < 0 ||
	    check_paths(path, "files", r->files, err) < 0 ||
	    check_paths(path, "optional_files", r->optional_files, err) < 0 ||
	    check_paths(path, "trees", r->trees, err) < 0 ||
	    check_paths(path, "exclude", r->exclude, err) < 0 ||
	    check_release(path, "kernel_packages", r->kernel_packages, r, err) < 0 ||
	    check_release(path, "packages", r->packages, r, err) < 0)
		goto fail;
	if (r->zfs_source) {
		struct zfs_src zs;
		int rc = zfs_src_load(path, r->zfs_source, &zs, err);

		zfs_src_release(&zs);
		if (rc < 0)
			goto fail;
	}

	/* Canonical JSON (sorted keys, compact) so formatting and key order do not change hashes.
	 */
	canon = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	sha256_hex(canon, strlen(canon), r->hash);
	free(canon);

	root_part = json_object();
	for (size_t i = 0; i < ARRAY_SIZE(root_keys); i++)
		json_object_set(root_part, root_keys[i], json_object_get(j, root_keys[i]));
	/* "backports": false is the default: hash it as if absent. */
	if (!r->backports)
		json_object_del(root_part, "backports");
	json_object_set_new(root_part, "zbench_root_version", json_integer(IMAGE_ROOT_VERSION));
	canon = json_dumps(root_part, JSON_SORT_KEYS | JSON_COMPACT);
	sha256_hex(canon, strlen(canon), r->root_hash);
	free(canon);
	json_decref(root_part);
	return 0;
fail:
	recipe_release(r);
	return -1;
}

/* --- the cache --------------------------------------------------------------------------- */

const char *image_cache_dir_default(void)
{
	static char *dir;
	const char *s;

	if (dir)
		return dir;
	if ((s = getenv("ZBENCH_CACHE_DIR")) && *s)
		dir = xstrdup(s);
	else if ((s = getenv("XDG_CACHE_HOME")) && *s)
		dir = xasprintf("%s/zbench", s);
	else if ((s = getenv("HOME")) && *s)
		dir = xasprintf("%s/.cache/zbench", s);
	else
		dir = xstrdup("/var/cache/zbench");
	return dir;
}

/* The agent's unit file: beside the agent binary (guest/ in the build tree), or $ZBENCH_UNIT. */
char *image_unit_path(const char *agent)
{
	const char *s = getenv("ZBENCH_UNIT");
	const char *slash = strrchr(agent, '/');

	if (s && *s)
		return xstrdup(s);
	if (!slash)
		return xstrdup("zbench-agent.service");
	return xasprintf("%.*s/zbench-agent.service", (int)(slash - agent), agent);
}

char *image_guest_binary(const char *name)
{
	char env[32], rel[64];

	snprintf(env, sizeof(env), "ZBENCH_%s", name);
	for (size_t i = 0; env[i]; i++)
		env[i] = (char)(env[i] >= 'a' && env[i] <= 'z' ? env[i] - 32 : env[i]);
	snprintf(rel, sizeof(rel), "guest/zbench-%s", name);
	return self_file(env, rel);
}

char *image_recipe_locate(const char *path, const char *matrix_path)
{
	char *slash, *repo = NULL, *beside = NULL, *exe_dir;

	if (path[0] == '/')
		return xstrdup(path);
	/* the repository: the zbench executable's directory */
	exe_dir = self_dir();
	if (exe_dir) {
		repo = xasprintf("%s/%s", exe_dir, path);
		free(exe_dir);
		if (access(repo, F_OK) == 0)
			return repo;
	}
	/* the matrix file's directory (never the current directory as such) */
	if (matrix_path) {
		slash = strrchr(matrix_path, '/');
		beside = slash ? xasprintf("%.*s/%s", (int)(slash - matrix_path), matrix_path, path)
			       : xasprintf("./%s", path);
		if (access(beside, F_OK) == 0) {
			free(repo);
			return beside;
		}
	}
	/* neither: the repository's, for the error message */
	free(beside);
	return repo ? repo : xstrdup(path);
}

void image_release(struct image *img)
{
	free(img->dir);
	free(img->kernel);
	free(img->bzimage);
	free(img->initramfs);
	free(img->manifest_path);
	free(img->disk);
	free(img->cmdline);
	json_decref(img->manifest);
	memset(img, 0, sizeof(*img));
}

/* A name in a cache entry's manifest for a file of that entry: a plain file name. */
static const char *mib(json_int_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
	return buf;
}

void image_describe(const struct image *img, FILE *f)
{
	const char *name = "?", *kver = "?", *zfs = "?", *compression = "?", *os;
	json_int_t size = 0, files = 0;
	char buf[32];

	json_unpack(img->manifest, "{s:{s:s}}", "recipe", "name", &name);
	json_unpack(img->manifest, "{s:s}", "kernel_version", &kver);
	json_unpack(img->manifest, "{s:s}", "zfs_version", &zfs);
	/* Manifest text (an imported image's OS name comes from the user's qcow2) reaches the
	 * terminal through the one sanitiser. */
	fprintf(f, "image      %s %.12s%s\n", TERM(name), img->hash,
		json_is_true(json_object_get(img->manifest, "imported")) ? " (imported)" : "");
	fprintf(f, "dir        %s\n", img->dir);
	fprintf(f, "kernel     %s (%s)\n", img->kernel, TERM(kver));
	if (img->disk) {
		/* The cloud flavor: the distribution's initrd and a qcow2 root (docs/images.md). */
		json_unpack(img->manifest, "{s:{s:{s:I}}}", "files", "initrd.img", "size", &size);
		fprintf(f, "initrd     %s (%s, initramfs-tools)\n", img->initramfs,
			mib(size, buf, sizeof(buf)));
		fprintf(f, "disk       %s (qcow2; boot args '%s')\n", img->disk,
			img->cmdline ? img->cmdline : "");
		if (json_unpack(img->manifest, "{s:{s:s}}", "os", "product_name", &os) == 0)
			fprintf(f, "os         %s\n", TERM(os));
	} else {
		/* Each key alone: a manifest written before "entries" still gives the size. */
		const json_t *ent =
		    json_object_get(json_object_get(img->manifest, "files"), "initramfs");

		json_unpack((json_t *)ent, "{s:I}", "size", &size);
		json_unpack((json_t *)ent, "{s:I}", "entries", &files);
		json_unpack((json_t *)ent, "{s:s}", "compression", &compression);
		fprintf(f, "initramfs  %s (%s, %lld entries, compression %s)\n", img->initramfs,
			mib(size, buf, sizeof(buf)), (long long)files, TERM(compression));
	}
	fprintf(f, "flavor     %s\n", img->flavor);
	fprintf(f, "openzfs    %s\n", TERM(zfs));
	fprintf(f, "manifest   %s\n", img->manifest_path);
}

static int entry_name(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

int image_manifest_parse(const char *dir, const char *hash, const char *text, size_t len,
			 struct image *out, struct zb_error *err)
{
	json_error_t je;
	json_t *m, *boot;
	const char *kernel = NULL, *initrd, *disk, *cmdline;

	memset(out, 0, sizeof(*out));
	m = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return error_set(err, EINVAL,
				 "cached manifest in '%s': %s (remove it to rebuild it)", dir,
				 je.text);
	if (json_unpack(m, "{s:{s:s}}", "boot", "kernel", &kernel) < 0 || !entry_name(kernel)) {
		json_decref(m);
		return error_set(err, EINVAL,
				 "cached manifest in '%s' has no boot.kernel (remove '%s')", dir,
				 dir);
	}
	/* A cloud image (image_cloud.c) names its initrd, disk and root arguments. */
	boot = json_object_get(m, "boot");
	initrd = json_string_value(json_object_get(boot, "initramfs"));
	disk = json_string_value(json_object_get(boot, "disk"));
	cmdline = json_string_value(json_object_get(boot, "cmdline"));
	if ((initrd && !entry_name(initrd)) || (disk && !entry_name(disk))) {
		initrd = disk = NULL;
		cmdline = NULL;
	}
	out->dir = xstrdup(dir);
	out->kernel = xasprintf("%s/%s", dir, kernel);
	out->bzimage = xasprintf("%s/bzImage", dir);
	out->initramfs = xasprintf("%s/%s", dir, initrd ? initrd : "initramfs.img");
	if (disk)
		out->disk = xasprintf("%s/%s", dir, disk);
	out->cmdline = cmdline ? xstrdup(cmdline) : NULL;
	out->flavor = disk ? "cloud" : "appliance";
	out->manifest_path = xasprintf("%s/manifest.json", dir);
	out->manifest = m;
	snprintf(out->hash, sizeof(out->hash), "%s", hash);
	return 0;
}

int image_open(const char *dir, const char *hash, struct image *out, struct zb_error *err)
{
	char *manifest_path = xasprintf("%s/manifest.json", dir), *text;
	size_t len;
	int rc;

	if (!path_exists(manifest_path)) {
		free(manifest_path);
		return 1;
	}
	rc = read_file(manifest_path, IMAGE_MANIFEST_MAX, &text, &len, err);
	free(manifest_path);
	if (rc < 0)
		return -1;
	rc = image_manifest_parse(dir, hash, text, len, out, err);
	free(text);
	if (rc < 0)
		return -1;
	if (!path_exists(out->kernel) || !path_exists(out->initramfs) ||
	    (out->disk && !path_exists(out->disk))) {
		error_set(err, ENOENT, "cache entry '%s' is incomplete (remove it to rebuild)",
			  dir);
		image_release(out);
		return -1;
	}
	return 0;
}

/* --- what goes into every image ---------------------------------------------------------- */

void guest_files_init(struct guest_files *g)
{
	memset(g, 0, sizeof(*g));
	g->agent = image_guest_binary("agent");
	g->engine = image_guest_binary("engine");
	g->unit = image_unit_path(g->agent);
}

int guest_files_hash(struct guest_files *g, struct zb_error *err)
{
	if (sha256_file_hex(g->agent, g->agent_sha, err) < 0 ||
	    sha256_file_hex(g->engine, g->engine_sha, err) < 0 ||
	    sha256_file_hex(g->unit, g->unit_sha, err) < 0)
		return -1;
	return 0;
}

void guest_files_record(const struct guest_files *g, int unit, json_t *files)
{
	json_object_set_new(files, "agent",
			    json_pack("{s:s, s:s}", "source", g->agent, "sha256", g->agent_sha));
	json_object_set_new(files, "engine",
			    json_pack("{s:s, s:s}", "source", g->engine, "sha256", g->engine_sha));
	if (unit)
		json_object_set_new(
		    files, "unit",
		    json_pack("{s:s, s:s}", "source", g->unit, "sha256", g->unit_sha));
}

void guest_files_release(struct guest_files *g)
{
	free(g->agent);
	free(g->engine);
	free(g->unit);
	memset(g, 0, sizeof(*g));
}

/* --- manifests --------------------------------------------------------------------------- */

int image_file_entry(json_t *files, const char *name, const char *path, struct zb_error *err)
{
	char sha[65];
	struct stat st;

	if (stat(path, &st) < 0)
		return error_sys(err, errno, "'%s'", path);
	if (sha256_file_hex(path, sha, err) < 0)
		return -1;
	json_object_set_new(files, name,
			    json_pack("{s:s, s:I}", "sha256", sha, "size", (json_int_t)st.st_size));
	return 0;
}

int image_file_entries(json_t *files, const char *dir, const char *boot_kernel,
		       const char *const *names, struct zb_error *err)
{
	static const char *const kernels[] = { "vmlinux", "bzImage" };

	for (size_t i = 0; i < ARRAY_SIZE(kernels); i++) {
		char *path = xasprintf("%s/%s", dir, kernels[i]);
		int rc = i == 0 && strcmp(boot_kernel, "vmlinux")
			     ? 0
			     : image_file_entry(files, kernels[i], path, err);

		free(path);
		if (rc < 0)
			return -1;
	}
	for (size_t i = 0; names && names[i]; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		int rc = image_file_entry(files, names[i], path, err);

		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int image_manifest_write(const char *path, json_t *manifest, struct zb_error *err)
{
	char *dump = json_dumps(manifest, JSON_INDENT(2) | JSON_SORT_KEYS);
	int rc = write_file_atomic(path, dump, strlen(dump), 0644, err);

	free(dump);
	return rc;
}

void image_date_now(char buf[32])
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
