/* zbench merge -o OUT RUNDIR...: join the shards of one run (zbench run --shard I/N) into one run
 * directory that report and compare accept. Refuses shards of different matrices or images. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "results.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: zbench merge -o OUT RUNDIR...\n"
		"\n"
		"Join run directories made with `zbench run --shard I/N` of the same matrix and\n"
		"image into OUT (a new run directory): every record once, every cell directory,\n"
		"and a manifest that lists the shards. OUT is 'complete' only if every shard\n"
		"1..N is there and complete.\n");
}

/* Copy a cell directory's files (console logs, command lines) into OUT/cells/NAME: hard links
 * where the file system allows, else copies. */
static int copy_cell_dir(const char *src, const char *dst, struct zb_error *err)
{
	DIR *d = opendir(src);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return error_sys(err, errno, "opening '%s'", src);
	if (mkdir(dst, 0700) < 0 && errno != EEXIST) {
		closedir(d);
		return error_sys(err, errno, "creating '%s'", dst);
	}
	while (rc == 0 && (de = readdir(d))) {
		char *a, *b;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		a = xasprintf("%s/%s", src, de->d_name);
		b = xasprintf("%s/%s", dst, de->d_name);
		if (lstat(a, &st) == 0 && S_ISREG(st.st_mode) && link(a, b) < 0)
			rc = copy_file(a, b, err);
		free(a);
		free(b);
	}
	closedir(d);
	return rc;
}

static int merge(const char *out, char **dirs, int n, struct zb_error *err)
{
	struct results res;
	json_t *first = NULL, *from = json_array(), *seen = json_object();
	int count = 0, complete = 1, rc = -1;
	unsigned long long have = 0;

	for (int i = 0; i < n; i++) {
		char *path = xasprintf("%s/manifest.json", dirs[i]);
		json_t *m = json_load_file(path, 0, NULL);
		json_t *sh = json_object_get(m, "shard");
		const char *ms =
		    json_string_value(json_object_get(json_object_get(m, "matrix"), "sha256"));
		const char *ih =
		    json_string_value(json_object_get(json_object_get(m, "image"), "hash"));
		int idx = (int)json_integer_value(json_object_get(sh, "index"));
		int cnt = (int)json_integer_value(json_object_get(sh, "count"));

		free(path);
		if (!ms || !ih) {
			json_decref(m);
			error_set(err, EINVAL, "'%s' is not a run directory", dirs[i]);
			goto out;
		}
		if (!first) {
			first = m;
			count = cnt;
		} else {
			const char *ms0 = json_string_value(
			    json_object_get(json_object_get(first, "matrix"), "sha256"));
			const char *ih0 = json_string_value(
			    json_object_get(json_object_get(first, "image"), "hash"));

			if (strcmp(ms, ms0) || strcmp(ih, ih0) || cnt != count) {
				error_set(
				    err, EINVAL,
				    "'%s' and '%s' are not shards of one run: matrix %.12s vs "
				    "%.12s, image %.12s vs %.12s, shards of %d vs %d",
				    dirs[0], dirs[i], ms0, ms, ih0, ih, count, cnt);
				json_decref(m);
				goto out;
			}
		}
		if (count > 0 && idx >= 1 && idx <= 64)
			have |= 1ULL << (idx - 1);
		if (strcmp(json_string_value(json_object_get(m, "status")) ?: "", "complete"))
			complete = 0;
		json_array_append_new(from, json_pack("{s:s, s:O?, s:O?}", "dir", dirs[i], "shard",
						      sh, "status", json_object_get(m, "status")));
		if (m != first)
			json_decref(m);
	}
	if (count > 0 && count <= 64 && have != (count == 64 ? ~0ULL : (1ULL << count) - 1)) {
		complete = 0;
		fprintf(stderr, "zbench merge: some of the %d shards are missing\n", count);
	}
	if (results_create(&res, out, err) < 0)
		goto out;
	json_object_update(res.manifest, first);
	json_object_del(res.manifest, "shard");
	json_object_del(res.manifest, "resumed");
	json_object_set_new(res.manifest, "merged_from", json_incref(from));
	json_object_set_new(res.manifest, "status",
			    json_string(complete ? "complete" : "incomplete"));
	for (int i = 0; i < n; i++) {
		json_t *cells;
		size_t k;
		json_t *rec;

		if (results_read_cells(dirs[i], &cells, err) < 0)
			goto out_res;
		json_array_foreach (cells, k, rec) {
			char key[96];
			const char *d = json_string_value(json_object_get(rec, "dir"));

			snprintf(key, sizeof(key), "%s/%lld/%lld",
				 json_string_value(json_object_get(rec, "cell")) ?: "?",
				 (long long)json_integer_value(json_object_get(rec, "repeat")),
				 (long long)json_integer_value(json_object_get(rec, "attempt")));
			if (json_object_get(seen, key))
				continue; /* the same attempt in two shards: keep the first */
			json_object_set_new(seen, key, json_true());
			if (results_append(&res, rec, err) < 0) {
				json_decref(cells);
				goto out_res;
			}
			if (d && !strchr(d, '/') && strcmp(d, "..") && strcmp(d, ".")) {
				char *src = xasprintf("%s/cells/%s", dirs[i], d);
				char *dst = xasprintf("%s/cells/%s", out, d);
				int r = copy_cell_dir(src, dst, err);

				free(src);
				free(dst);
				if (r < 0) {
					json_decref(cells);
					goto out_res;
				}
			}
		}
		json_decref(cells);
	}
	if (results_write_manifest(&res, err) < 0)
		goto out_res;
	fprintf(stderr, "zbench: merged %d run%s, %zu records, into %s (%s)\n", n,
		n == 1 ? "" : "s", json_object_size(seen), out,
		complete ? "complete" : "incomplete");
	printf("%s\n", out);
	rc = complete ? 0 : 1;
out_res:
	results_release(&res);
out:
	json_decref(first);
	json_decref(from);
	json_decref(seen);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct zb_error err = { 0 };
	const char *out = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!out || optind >= argc) {
		usage(stderr);
		return 2;
	}
	rc = merge(out, argv + optind, argc - optind, &err);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	return rc;
}
