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

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: zbench image build RECIPE [--cache-dir DIR] [--rebuild] [--rebuild-root]\n"
	    "       zbench image import FILE.qcow2 [--cache-dir DIR] [--overlay] [--rebuild]\n"
	    "       zbench image path RECIPE|FILE.qcow2 [--cache-dir DIR]\n"
	    "       zbench image list [--cache-dir DIR] [--json]\n"
	    "\n"
	    "  build   build the appliance of RECIPE (images/*.json) unless it is cached, then\n"
	    "          describe it; needs root. A cold build takes about 10 minutes (debootstrap,\n"
	    "          kernel, zfs-dkms); a change to the guest binaries only reassembles the\n"
	    "          initramfs (seconds); nothing changed: well under a second.\n"
	    "  import  make a cloud-flavor image of your own qcow2 cloud image: inspect it with\n"
	    "          libguestfs (OS, kernels, the ZFS module of the kernel that boots and its\n"
	    "          version, zpool/zfs, systemd), refuse it if one is missing, else inject\n"
	    "          zbench-agent, zbench-engine and zbench-agent.service into a copy in the\n"
	    "          cache, with the kernel and initrd beside it for a direct kernel boot.\n"
	    "          FILE is only read, never written. Under TCG about a minute; the same\n"
	    "          file again: a cache hit (the time to hash it). No root needed.\n"
	    "  path    print the cached image's directory (a recipe's, or an imported\n"
	    "          FILE.qcow2's); exit 1 if it is not there\n"
	    "  list    list the cached images; --json: one document {\"cache\", \"images\":\n"
	    "          [{\"hash\", \"name\", \"flavor\", \"built\", \"kernel_version\",\n"
	    "          \"openzfs\", \"size\", \"complete\"}]} (docs/results.md)\n"
	    "\n"
	    "  --cache-dir DIR  the cache (default: $ZBENCH_CACHE_DIR, $XDG_CACHE_HOME/zbench,\n"
	    "                   ~/.cache/zbench; now '%s')\n"
	    "  --rebuild        build: reassemble the appliance even if it is cached (keeps the\n"
	    "                   root); import: import again even if cached\n"
	    "  --rebuild-root   build: rebuild the root too (debootstrap and DKMS: minutes)\n"
	    "  --overlay        import: keep the cached disk a thin qcow2 overlay backed by FILE\n"
	    "                   (no copy; FILE must then stay where it is, unchanged)\n"
	    "\n"
	    "Exit status: 0 done; 1 path: the image is not in the cache; 2 errors.\n"
	    "\n"
	    "The guest binaries are guest/zbench-agent and guest/zbench-engine beside this\n"
	    "executable, or $ZBENCH_AGENT and $ZBENCH_ENGINE; the unit is\n"
	    "guest/zbench-agent.service beside the agent, or $ZBENCH_UNIT. libguestfs runs with\n"
	    "LIBGUESTFS_BACKEND=direct and, where /dev/kvm exists, force_tcg, unless those\n"
	    "variables are set.\n",
	    image_cache_dir_default());
}

struct image_args {
	const char *recipe;
	const char *cache_dir;
	unsigned flags;
	int overlay;
	int json; /* list: --json */
};

/* Parse "[RECIPE] [options]"; `want_recipe` says whether RECIPE is required. */
static int parse_args(int argc, char **argv, int want_recipe, int allow_rebuild,
		      struct image_args *a)
{
	int import = !strcmp(argv[0], "import");

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cache-dir") && i + 1 < argc) {
			a->cache_dir = argv[++i];
		} else if (!strncmp(argv[i], "--cache-dir=", 12)) {
			a->cache_dir = argv[i] + 12;
		} else if (allow_rebuild && !strcmp(argv[i], "--rebuild")) {
			a->flags |= IMAGE_REBUILD;
		} else if (!strcmp(argv[0], "list") && !strcmp(argv[i], "--json")) {
			a->json = 1;
		} else if (import && !strcmp(argv[i], "--overlay")) {
			a->overlay = 1;
		} else if (allow_rebuild && !import && !strcmp(argv[i], "--rebuild-root")) {
			a->flags |= IMAGE_REBUILD_ROOT;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "zbench image %s: unknown option '%s'\n", argv[0], argv[i]);
			return -1;
		} else if (want_recipe && !a->recipe) {
			a->recipe = argv[i];
		} else {
			fprintf(stderr, "zbench image %s: unexpected argument '%s'\n", argv[0],
				argv[i]);
			return -1;
		}
	}
	if (want_recipe && !a->recipe) {
		fprintf(stderr, "zbench image %s: %s is required\n", argv[0],
			import ? "a FILE.qcow2" : "a RECIPE (images/*.json)");
		return -1;
	}
	return 0;
}

/* build and import differ only in how the image is made: one body, the maker as a parameter */
static int image_make_cmd(int argc, char **argv, int import)
{
	struct image_args a = { .flags = import ? 0 : IMAGE_BUILD_IF_MISSING };
	struct zb_error err = { 0 };
	struct image img;
	double t0 = now_monotonic();
	int rc;

	if (parse_args(argc, argv, 1, 1, &a) < 0)
		return 2;
	rc = import ? image_import(a.recipe, a.cache_dir, a.flags, a.overlay, &img, &err)
		    : image_get(a.recipe, a.cache_dir, a.flags, &img, &err);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	image_describe(&img, stdout);
	fprintf(stderr, "done in %.2fs\n", now_monotonic() - t0);
	image_release(&img);
	return 0;
}

static int image_build_cmd(int argc, char **argv)
{
	return image_make_cmd(argc, argv, 0);
}

static int image_import_cmd(int argc, char **argv)
{
	return image_make_cmd(argc, argv, 1);
}

static int image_path_cmd(int argc, char **argv)
{
	struct image_args a = { 0 };
	struct zb_error err = { 0 };
	struct image img;
	int rc;

	if (parse_args(argc, argv, 1, 0, &a) < 0)
		return 2;
	if (image_file_is_qcow2(a.recipe))
		rc = image_import_lookup(a.recipe, a.cache_dir, &img, &err);
	else
		rc = image_get(a.recipe, a.cache_dir, 0, &img, &err);
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

static int image_list_cmd(int argc, char **argv)
{
	struct image_args a = { 0 };
	char *dir, **names = NULL;
	size_t n = 0;
	struct dirent *de;
	json_t *list = json_array();
	DIR *d;

	if (parse_args(argc, argv, 0, 0, &a) < 0)
		return 2;
	dir = xasprintf("%s/images", a.cache_dir ? a.cache_dir : image_cache_dir_default());
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
	if (a.json) {
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

int cmd_image(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} subs[] = {
		{ "build", image_build_cmd },
		{ "import", image_import_cmd },
		{ "path", image_path_cmd },
		{ "list", image_list_cmd },
	};

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
		if (!strcmp(argv[1], subs[i].name)) {
			for (int j = 2; j < argc; j++) {
				if (!strcmp(argv[j], "--help") || !strcmp(argv[j], "-h")) {
					usage(stdout);
					return 0;
				}
			}
			return subs[i].fn(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "zbench image: unknown subcommand '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
