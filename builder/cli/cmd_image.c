/* zbench image: build, locate or list the cached guest appliances (docs/images.md). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "core/term.h"
#include "core/util.h"
#include "image/image.h"
#include "options.h"

/* What the command line sets. */
struct image_cli {
	const char *cache_dir;
	int rebuild, rebuild_root, overlay, json;
};

/* build and import differ only in how the image is made: one body, the maker as a parameter */
static int image_make_cmd(const struct image_cli *c, const char *file, int import)
{
	unsigned flags = (import ? 0 : IMAGE_BUILD_IF_MISSING) | (c->rebuild ? IMAGE_REBUILD : 0) |
			 (c->rebuild_root ? IMAGE_REBUILD_ROOT : 0);
	struct zb_error err = { 0 };
	struct image img;
	double t0 = now_monotonic();
	int rc;

	rc = import ? image_import(file, c->cache_dir, flags, c->overlay, &img, &err)
		    : image_get(file, c->cache_dir, flags, &img, &err);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	image_describe(&img, stdout);
	fprintf(stderr, "done in %.2fs\n", now_monotonic() - t0);
	image_release(&img);
	return 0;
}

static int image_build_cmd(void *ctx, int argc, char **argv)
{
	return image_make_cmd(ctx, argv[0], 0);
}

static int image_import_cmd(void *ctx, int argc, char **argv)
{
	return image_make_cmd(ctx, argv[0], 1);
}

static int image_path_cmd(void *ctx, int argc, char **argv)
{
	const struct image_cli *c = ctx;
	struct zb_error err = { 0 };
	struct image img;
	int rc;

	if (image_file_is_qcow2(argv[0]))
		rc = image_import_lookup(argv[0], c->cache_dir, &img, &err);
	else
		rc = image_get(argv[0], c->cache_dir, 0, &img, &err);
	if (rc < 0) {
		die_message(err.msg);
		return err.errnum == IMAGE_NOT_CACHED ? 1 : 2;
	}
	printf("%s\n", img.dir);
	image_release(&img);
	return 0;
}

static const char *mib(json_int_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One cache entry as `image list` shows it: {hash, name, flavor, built, kernel_version, openzfs,
 * size, complete}; null for what its manifest does not say, and everything but the hash null
 * (complete false) when it has none (docs/results.md). */
/* A manifest's string, or NULL: the JSON form passes on no other type. */
static json_t *string_or_null(json_t *v)
{
	return json_is_string(v) ? v : NULL;
}

static json_t *list_entry(const char *dir, const char *hash)
{
	char *path = xasprintf("%s/%s/manifest.json", dir, hash);
	json_t *m = json_load_file(path, 0, NULL), *files, *size, *e;
	const char *flavor = json_string_value(json_object_get(m, "flavor"));

	free(path);
	files = json_object_get(m, "files");
	size = json_object_get(json_object_get(files, "initramfs"), "size");
	if (!json_is_integer(size))
		size = json_object_get(json_object_get(files, "disk.qcow2"), "size");
	/* Each key alone: appliance, cloud and imported manifests differ. */
	e = json_pack("{s:s, s:O?, s:s?, s:O?, s:O?, s:O?, s:O?, s:b}", "hash", hash, "name",
		      string_or_null(json_object_get(json_object_get(m, "recipe"), "name")),
		      "flavor",
		      !m					     ? NULL
		      : json_is_true(json_object_get(m, "imported")) ? "imported"
		      : flavor					     ? flavor
								     : "appliance",
		      "built", string_or_null(json_object_get(m, "built")), "kernel_version",
		      string_or_null(json_object_get(m, "kernel_version")), "openzfs",
		      string_or_null(json_object_get(m, "zfs_version")), "size",
		      json_is_integer(size) ? size : NULL, "complete", m != NULL);
	json_decref(m);
	return e;
}

static const char *str_or(const json_t *e, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(e, key));

	return s ? s : dflt;
}

static void list_print(const json_t *list, const char *dir)
{
	const json_t *e;
	size_t i;

	printf("%-12s  %-20s  %-9s  %-20s  %-24s  %-10s  %s\n", "IMAGE", "NAME", "FLAVOR", "BUILT",
	       "KERNEL", "SIZE", "OPENZFS");
	json_array_foreach ((json_t *)list, i, e) {
		char buf[32];

		if (!json_is_true(json_object_get(e, "complete"))) {
			printf("%.12s  (incomplete: no manifest)\n", str_or(e, "hash", "?"));
			continue;
		}
		/* a manifest's text reaches the terminal through the one sanitiser */
		printf("%.12s  %-20s  %-9s  %-20s  %-24s  %-10s  %s\n", str_or(e, "hash", "?"),
		       TERM(str_or(e, "name", "?")), TERM(str_or(e, "flavor", "?")),
		       TERM(str_or(e, "built", "?")), TERM(str_or(e, "kernel_version", "?")),
		       mib(json_integer_value(json_object_get(e, "size")), buf, sizeof(buf)),
		       TERM(str_or(e, "openzfs", "?")));
	}
	printf("%zu image(s) in '%s'\n", json_array_size(list), dir);
}

static int image_list_cmd(void *ctx, int argc, char **argv)
{
	const struct image_cli *a = ctx;
	char *dir, **names = NULL;
	size_t n = 0;
	struct dirent *de;
	json_t *list = json_array();
	DIR *d;

	dir = xasprintf("%s/images", a->cache_dir ? a->cache_dir : image_cache_dir_default());
	d = opendir(dir);
	if (!d && errno != ENOENT) {
		fprintf(stderr, "zbench: listing '%s': %s\n", dir, strerror(errno));
		free(dir);
		json_decref(list);
		return 2;
	}
	while (d && (de = readdir(d))) {
		if (strlen(de->d_name) == 64 && !strchr(de->d_name, '.')) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xstrdup(de->d_name);
		}
	}
	if (d)
		closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(list, list_entry(dir, names[i]));
		free(names[i]);
	}
	free(names);
	if (a->json) {
		json_t *doc = json_pack("{s:s, s:O}", "cache", dir, "images", list);

		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	} else if (!d) {
		printf("no images in '%s'\n", dir);
	} else {
		list_print(list, dir);
	}
	json_decref(list);
	free(dir);
	return 0;
}

static const struct cli_sub image_subs[] = {
	{ .name = "build",
	  .args = "RECIPE",
	  .help = "build the appliance of RECIPE (images/*.json) unless it is cached, then\n"
		  "describe it; needs root. A cold build takes about 10 minutes (debootstrap,\n"
		  "kernel, zfs-dkms); a change to the guest binaries only reassembles the\n"
		  "initramfs (seconds); nothing changed: well under a second.",
	  .min_args = 1,
	  .max_args = 1,
	  .run = image_build_cmd },
	{ .name = "import",
	  .args = "FILE.qcow2",
	  .help = "make a cloud-flavor image of your own qcow2 cloud image: inspect it with\n"
		  "libguestfs (OS, kernels, the ZFS module of the kernel that boots and its\n"
		  "version, zpool/zfs, systemd), refuse it if one is missing, else inject\n"
		  "zbench-agent, zbench-engine and zbench-agent.service into a copy in the\n"
		  "cache, with the kernel and initrd beside it for a direct kernel boot.\n"
		  "FILE is only read, never written. Under TCG about a minute; the same\n"
		  "file again: a cache hit (the time to hash it). No root needed.",
	  .min_args = 1,
	  .max_args = 1,
	  .run = image_import_cmd },
	{ .name = "path",
	  .args = "RECIPE|FILE.qcow2",
	  .help = "print the cached image's directory (a recipe's, or an imported\n"
		  "FILE.qcow2's); exit 1 if it is not there",
	  .min_args = 1,
	  .max_args = 1,
	  .run = image_path_cmd },
	{ .name = "list",
	  .help = "list the cached images; --json: one document {\"cache\", \"images\":\n"
		  "[{\"hash\", \"name\", \"flavor\", \"built\", \"kernel_version\",\n"
		  "\"openzfs\", \"size\", \"complete\"}]} (docs/results.md)",
	  .run = image_list_cmd },
};

static const struct cli_option image_options[] = {
	CLI_OPT_STRING(0, "cache-dir", "DIR", struct image_cli, cache_dir,
		       "the cache (default: $ZBENCH_CACHE_DIR, $XDG_CACHE_HOME/zbench,\n"
		       "~/.cache/zbench; `zbench image list` names it)"),
	{ CLI_ROW_FLAG(0, "rebuild", struct image_cli, rebuild,
		       "build: reassemble the appliance even if it is cached (keeps\nthe root); "
		       "import: import again even if cached"),
	  .subs = "build|import" },
	{ CLI_ROW_FLAG(0, "rebuild-root", struct image_cli, rebuild_root,
		       "rebuild the root too (debootstrap and DKMS: minutes)"),
	  .subs = "build" },
	{ CLI_ROW_FLAG(0, "overlay", struct image_cli, overlay,
		       "keep the cached disk a thin qcow2 overlay backed by\nFILE (no copy; "
		       "FILE must then stay where it is, unchanged)"),
	  .subs = "import" },
	{ CLI_ROW_FLAG(0, "json", struct image_cli, json, "one JSON document (above)"),
	  .subs = "list" },
};

const struct cli_command cmd_image_command = {
	.name = "image",
	CLI_SUBS(image_subs),
	CLI_OPTIONS(image_options),
	.epilog =
	    "Exit status: 0 done; 1 path: the image is not in the cache; 2 errors.\n"
	    "\n"
	    "The guest binaries are guest/zbench-agent and guest/zbench-engine beside this\n"
	    "executable, or $ZBENCH_AGENT and $ZBENCH_ENGINE; the unit is\n"
	    "guest/zbench-agent.service beside the agent, or $ZBENCH_UNIT. libguestfs runs with\n"
	    "LIBGUESTFS_BACKEND=direct and, where /dev/kvm exists, force_tcg, unless those\n"
	    "variables are set.",
};

int cmd_image(int argc, char **argv)
{
	struct image_cli c = { 0 };

	return cli_run(&cmd_image_command, argc, argv, &c);
}
