/* Image recipes, the content-hashed cache and the build orchestration (docs/images.md). */
#include "image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_build.h"
#include "util.h"

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
			   "s?o, s?s}",
			   "name", &r->name, "description", &(const char *){ NULL }, "distro",
			   &r->distro, "suite", &r->suite, "components", &r->components,
			   "backports", &r->backports, "mirror", &r->mirror, "kernel_packages",
			   &r->kernel_packages, "packages", &r->packages, "modules", &r->modules,
			   "optional_modules", &r->optional_modules, "files", &r->files,
			   "optional_files", &r->optional_files, "trees", &r->trees, "exclude",
			   &r->exclude, "initramfs_compression", &r->compression) < 0) {
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
	if (check_strings(path, "components", r->components, 0, err) < 0 ||
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

/* --- progress and logs ------------------------------------------------------------------- */

void build_log(struct build *b, const char *fmt, ...)
{
	FILE *f = fopen(b->log_path, "a");
	va_list ap;

	if (!f)
		return;
	fputs("zbench: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

void build_step_begin(struct build *b, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	b->step++;
	b->step_t0 = now_monotonic();
	free((char *)b->step_name);
	b->step_name = xstrdup(name);
	fprintf(stderr, "[%d/%d] %s ...", b->step, b->nsteps, name);
	fflush(stderr);
	build_log(b, "==> [%d/%d] %s", b->step, b->nsteps, name);
}

void build_step_end(struct build *b)
{
	double dt = now_monotonic() - b->step_t0;

	fprintf(stderr, " %.1fs\n", dt);
	build_log(b, "<== %s: %.1fs", b->step_name, dt);
	json_array_append_new(b->steps, json_pack("{s:s, s:f}", "name", b->step_name, "seconds",
						  (double)(long)(dt * 10 + 0.5) / 10));
}

/* The last `n` lines of the log, indented, bounded. */
static char *log_tail(const char *path, int n)
{
	char *text = NULL, *p;
	size_t len = 0;
	struct zb_error e;
	int lines = 0;
	char *out;

	if (read_file(path, 64 << 20, &text, &len, &e) < 0)
		return xstrdup("");
	while (len > 0 && text[len - 1] == '\n')
		text[--len] = '\0';
	p = text + len;
	while (p > text && lines < n) {
		p--;
		if (*p == '\n')
			lines++;
	}
	if (*p == '\n')
		p++;
	if (strlen(p) > 1200)
		p += strlen(p) - 1200;
	out = xstrdup(p);
	free(text);
	return out;
}

int build_step_fail(struct build *b, struct zb_error *err)
{
	char *tail;

	fprintf(stderr, " failed after %.1fs\n", now_monotonic() - b->step_t0);
	build_log(b, "step failed: %s", err->msg);
	tail = log_tail(b->log_path, 12);
	error_wrap(err, "step %d/%d '%s' failed", b->step, b->nsteps, b->step_name);
	/* Appended, not prefixed: the log's tail reads best after the cause. */
	snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
		 "\n--- last lines of '%s' ---\n%s\n---", b->log_path, tail);
	free(tail);
	return -1;
}

int build_run(struct build *b, const char *const argv[], struct zb_error *err)
{
	int rc;

	{
		FILE *f = fopen(b->log_path, "a");

		if (f) {
			fputs("$", f);
			for (int i = 0; argv[i]; i++)
				fprintf(f, " %s", argv[i]);
			fputc('\n', f);
			fclose(f);
		}
	}
	rc = run_command((char *const *)argv, b->log_path, err);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return error_set(err, 0, "'%s%s%s' exited with status %d", argv[0],
				 argv[1] ? " " : "", argv[1] ? argv[1] : "", rc);
	return 0;
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
	char env[32], exe[PATH_MAX], *slash;
	const char *s;
	ssize_t n;
	size_t i;

	snprintf(env, sizeof(env), "ZBENCH_%s", name);
	for (i = 0; env[i]; i++)
		env[i] = (char)(env[i] >= 'a' && env[i] <= 'z' ? env[i] - 32 : env[i]);
	if ((s = getenv(env)) && *s)
		return xstrdup(s);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return xasprintf("guest/zbench-%s", name);
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	return xasprintf("%s/guest/zbench-%s", exe, name);
}

char *image_recipe_locate(const char *path, const char *matrix_path)
{
	char exe[PATH_MAX], *slash, *repo = NULL, *beside = NULL;
	ssize_t n;

	if (path[0] == '/')
		return xstrdup(path);
	/* the repository: the zbench executable's directory */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		repo = xasprintf("%s/%s", exe, path);
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

/* Fill `out` from a finished cache entry. Returns 1 if there is none. */
static int image_open(const char *dir, const char *hash, struct image *out, struct zb_error *err)
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

/* Remove temporaries left by interrupted builds; called with the lock held. */
static void remove_stale(const char *dir, struct build *b)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct zb_error e;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strstr(de->d_name, ".tmp")) {
			char *p = xasprintf("%s/%s", dir, de->d_name);

			if (remove_tree(p, &e) < 0)
				build_log(b, "cannot remove stale '%s': %s", p, e.msg);
			free(p);
		}
	}
	closedir(d);
}

/* Take an exclusive flock on `path` (which this function frees), waiting with a note if another
 * zbench holds it. */
static int lock_file(char *path, int *fd_out, struct zb_error *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0) {
		error_sys(err, errno, "opening lock file '%s'", path);
		free(path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr, "waiting for another zbench build (lock '%s') ...\n", path);
		if (flock(fd, LOCK_EX) < 0) {
			error_sys(err, errno, "locking '%s'", path);
			close(fd);
			free(path);
			return -1;
		}
	}
	free(path);
	*fd_out = fd;
	return 0;
}

int image_cache_open(const char *dir, const char *hash, struct image *out, struct zb_error *err)
{
	return image_open(dir, hash, out, err);
}

int image_cache_find(const char *cache, const char *hash, unsigned flags, const char *name,
		     const char *recipe_path, const char *root_for, struct image *out,
		     struct zb_error *err)
{
	char *img_dir = xasprintf("%s/images/%s", cache, hash);
	int rc = 1;

	if (!(flags & (IMAGE_REBUILD | IMAGE_REBUILD_ROOT)))
		rc = image_open(img_dir, hash, out, err);
	free(img_dir);
	if (rc <= 0)
		return rc;
	if (!(flags & (IMAGE_BUILD_IF_MISSING | IMAGE_REBUILD | IMAGE_REBUILD_ROOT)))
		return error_set(err, ENOENT,
				 "'%s' %.12s is not in the cache '%s': build it with 'sudo zbench "
				 "image build %s'",
				 name, hash, cache, recipe_path);
	if (geteuid() != 0)
		return error_set(err, EPERM,
				 "building image '%s' needs root (%s): run 'sudo zbench image "
				 "build %s'",
				 name, root_for, recipe_path);
	return 1;
}

int image_cache_absolute(char **cache, char **img_dir, const char *img_hash, struct zb_error *err)
{
	char *abs;

	if (mkdir_p(*cache, 0755, err) < 0)
		return -1;
	abs = realpath(*cache, NULL);
	if (!abs)
		return error_sys(err, errno, "resolving '%s'", *cache);
	free(*cache);
	*cache = abs;
	free(*img_dir);
	*img_dir = xasprintf("%s/images/%s", *cache, img_hash);
	return 0;
}

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

int image_cache_lock(char *path, int *fd_out, struct zb_error *err)
{
	return lock_file(path, fd_out, err);
}

/* Build what is missing, under the lock. `img_dir` is the final images/<hash> directory. */
static int build_locked(const struct recipe *r, const char *cache, unsigned flags,
			const char *img_hash, const char *img_dir, const char *agent,
			const char *engine, const char *agent_sha, const char *engine_sha,
			struct zb_error *err)
{
	char *roots = xasprintf("%s/roots", cache), *images = xasprintf("%s/images", cache);
	char *builds = xasprintf("%s/builds", cache);
	char *root_dir = xasprintf("%s/%s", roots, r->root_hash);
	char *root_json = xasprintf("%s/root.json", root_dir);
	char *root_tmp = xasprintf("%s/%s.tmp", roots, r->root_hash);
	char *img_tmp = xasprintf("%s.tmp", img_dir);
	char *log = xasprintf("%s/%s.log", builds, img_hash);
	struct build b = { .log_path = log, .steps = json_array() };
	json_t *info = NULL;
	json_error_t je;
	char dur[32];
	int rc = -1, need_root;

	if (mkdir_p(roots, 0755, err) < 0 || mkdir_p(images, 0755, err) < 0 ||
	    mkdir_p(builds, 0755, err) < 0)
		goto out;
	if (truncate(log, 0) < 0 && errno != ENOENT) {
		error_sys(err, errno, "truncating '%s'", log);
		goto out;
	}
	need_root = (flags & IMAGE_REBUILD_ROOT) || !path_exists(root_json);
	/* Leftovers of interrupted builds: roots' only under the cache lock (held when a root is
	 * built), and this image's own (its lock is held); other images may be mid-assembly. */
	if (need_root)
		remove_stale(roots, &b);
	if (path_exists(img_tmp) && remove_tree(img_tmp, err) < 0)
		goto out;
	b.t0 = now_monotonic();
	build_log(&b, "building image %s from '%s' (recipe %s, root %s)", img_hash, r->path,
		  r->hash, r->root_hash);

	b.nsteps = appliance_nsteps() + (need_root ? root_nsteps() : 0);
	fprintf(stderr, "building image '%s' %.12s (log: %s)\n", r->name, img_hash, log);
	if (need_root) {
		fprintf(stderr, "root %.12s: not cached, building (about 10 minutes)\n",
			r->root_hash);
		if (mkdir_p(root_tmp, 0755, err) < 0)
			goto out;
		if (root_build(r, cache, root_tmp, &b, err) < 0) {
			error_wrap(err, "building root %.12s", r->root_hash);
			goto out;
		}
		if (path_exists(root_dir) && remove_tree(root_dir, err) < 0)
			goto out;
		if (rename(root_tmp, root_dir) < 0) {
			error_sys(err, errno, "renaming '%s' to '%s'", root_tmp, root_dir);
			goto out;
		}
	} else {
		fprintf(stderr, "root %.12s: cached\n", r->root_hash);
	}
	info = json_load_file(root_json, 0, &je);
	if (!info) {
		error_set(err, EINVAL, "'%s': %s (remove '%s' to rebuild the root)", root_json,
			  je.text, root_dir);
		goto out;
	}

	if (mkdir_p(img_tmp, 0755, err) < 0)
		goto out;
	{
		struct appliance_inputs in = {
			.recipe = r,
			.root_dir = root_dir,
			.root_info = info,
			.agent = agent,
			.engine = engine,
			.agent_sha = agent_sha,
			.engine_sha = engine_sha,
			.image_hash = img_hash,
		};

		if (appliance_build(&in, img_tmp, &b, err) < 0) {
			error_wrap(err, "assembling image %.12s", img_hash);
			goto out;
		}
	}
	if (path_exists(img_dir) && remove_tree(img_dir, err) < 0)
		goto out;
	if (rename(img_tmp, img_dir) < 0) {
		error_sys(err, errno, "renaming '%s' to '%s'", img_tmp, img_dir);
		goto out;
	}
	fprintf(stderr, "image '%s' %.12s ready in %s: %s\n", r->name, img_hash,
		format_duration(now_monotonic() - b.t0, dur, sizeof(dur)), img_dir);
	rc = 0;
out:
	if (rc < 0) {
		struct zb_error e;

		/* A failed root stays on disk for inspection until the next build removes it. */
		if (path_exists(img_tmp))
			remove_tree(img_tmp, &e);
	}
	json_decref(info);
	json_decref(b.steps);
	free((char *)b.step_name);
	free(roots);
	free(images);
	free(builds);
	free(root_dir);
	free(root_json);
	free(root_tmp);
	free(img_tmp);
	free(log);
	return rc;
}

int image_get(const char *recipe_path, const char *cache_dir, unsigned flags, struct image *out,
	      struct zb_error *err)
{
	char *agent = image_guest_binary("agent"), *engine = image_guest_binary("engine");
	char agent_sha[65], engine_sha[65], img_hash[65];
	char *cache = NULL, *img_dir = NULL, *key;
	struct recipe r;
	int rc = -1, lock_fd = -1, img_lock_fd = -1;

	memset(out, 0, sizeof(*out));
	/* A user's cloud image: imported (a cache hit after the first time) and booted as a cloud
	 * image (docs/images.md, "Importing a cloud image"). */
	if (strlen(recipe_path) > 6 && !strcmp(recipe_path + strlen(recipe_path) - 6, ".qcow2")) {
		free(agent);
		free(engine);
		return image_import(recipe_path, cache_dir, flags, 0, out, err);
	}
	if (image_recipe_is_cloud(recipe_path)) {
		free(agent);
		free(engine);
		return cloud_image_get(recipe_path, cache_dir, flags, out, err);
	}
	if (recipe_load(recipe_path, &r, err) < 0) {
		free(agent);
		free(engine);
		return error_wrap(err, "loading image recipe");
	}
	if (sha256_file_hex(agent, agent_sha, err) < 0) {
		error_wrap(err, "guest agent (build it with 'make guest/zbench-agent', or set "
				"ZBENCH_AGENT)");
		goto out;
	}
	if (sha256_file_hex(engine, engine_sha, err) < 0) {
		error_wrap(err, "guest engine (build it with 'make guest/zbench-engine', or set "
				"ZBENCH_ENGINE)");
		goto out;
	}
	key = xasprintf("zbench-appliance %d\nrecipe %s\nroot %s\nagent %s\nengine %s\n",
			IMAGE_APPLIANCE_VERSION, r.hash, r.root_hash, agent_sha, engine_sha);
	sha256_hex(key, strlen(key), img_hash);
	free(key);

	cache = xstrdup(cache_dir ? cache_dir : image_cache_dir_default());
	img_dir = xasprintf("%s/images/%s", cache, img_hash);
	rc = image_cache_find(cache, img_hash, flags, r.name, recipe_path,
			      "debootstrap, chroot, mounts", out, err);
	if (rc <= 0)
		goto out;
	rc = -1;
	/* debootstrap and the bind mounts want an absolute cache path. */
	if (image_cache_absolute(&cache, &img_dir, img_hash, err) < 0)
		goto out;
	/* Two locks: the cache lock only while a root must be built (debootstrap, apt and the
	 * shared .deb cache are not safe to run twice at once), and one per image, so assembling an
	 * image whose root is cached (a second) never waits behind another recipe's root build
	 * (minutes). */
	{
		char *root_json = xasprintf("%s/roots/%s/root.json", cache, r.root_hash);
		char *img_lock = xasprintf("%s/images/%s.lock", cache, img_hash);
		char *images = xasprintf("%s/images", cache);
		int need_root = (flags & IMAGE_REBUILD_ROOT) || !path_exists(root_json);

		rc = mkdir_p(images, 0755, err);
		if (rc == 0 && need_root)
			rc = lock_file(xasprintf("%s/lock", cache), &lock_fd, err);
		if (rc == 0)
			rc = lock_file(img_lock, &img_lock_fd, err); /* frees img_lock */
		else
			free(img_lock);
		free(root_json);
		free(images);
		if (rc < 0)
			goto out;
	}
	/* Another build may have finished it while we waited for the lock. */
	if (!(flags & (IMAGE_REBUILD | IMAGE_REBUILD_ROOT))) {
		rc = image_open(img_dir, img_hash, out, err);
		if (rc <= 0)
			goto out;
	}
	rc = -1;
	if (build_locked(&r, cache, flags, img_hash, img_dir, agent, engine, agent_sha, engine_sha,
			 err) < 0)
		goto out;
	rc = image_open(img_dir, img_hash, out, err);
	if (rc > 0)
		rc = error_set(err, ENOENT, "image '%s' vanished after its build", img_dir);
out:
	if (rc < 0)
		error_wrap(err, "image '%s'", recipe_path);
	if (lock_fd >= 0)
		close(lock_fd);
	if (img_lock_fd >= 0)
		close(img_lock_fd);
	recipe_release(&r);
	free(agent);
	free(engine);
	free(cache);
	free(img_dir);
	return rc < 0 ? -1 : 0;
}

int image_resolve(const char *recipe_path, const char *cache_dir, int build_if_missing,
		  struct image *out, struct zb_error *err)
{
	return image_get(recipe_path, cache_dir, build_if_missing ? IMAGE_BUILD_IF_MISSING : 0, out,
			 err);
}
