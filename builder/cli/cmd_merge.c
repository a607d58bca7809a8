/* zbench merge -o OUT RUNDIR...: join the shards of one run (zbench run --shard I/N) into one run
 * directory that report and compare accept. Refuses shards of different matrices or images. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "core/outdir.h"
#include "core/term.h"
#include "core/util.h"
#include "matrix/canon.h"
#include "matrix/matrix.h"
#include "options.h"
#include "run/results.h"

/* One shard: its directory held open (everything under it is read without following a
 * symlink: builder/core/outdir.h) and its manifest. */
struct shard {
	const char *dir;
	struct outdir run;
	json_t *manifest;
};

/* Link (or copy) a cell directory's regular files (console logs, command lines) from the shard
 * into OUT/cells/NAME. A symlink anywhere on the way, the cell directory or a file in it, is
 * refused; sockets and the like a killed run left are not files to keep; a shard without the
 * directory has nothing to copy. */
static int copy_cell_dir(const struct outdir *src_run, const char *name,
			 const struct outdir *dst_run, struct zb_error *err)
{
	struct outdir src_cells, src, dst_cells, dst;
	struct dirent *de;
	DIR *d;
	int rc;

	if (outdir_sub(src_run, "cells", 0, 0, &src_cells, err) < 0)
		return err->errnum == ENOENT ? 0 : -1;
	rc = outdir_sub(&src_cells, name, 0, 0, &src, err);
	outdir_close(&src_cells);
	if (rc < 0)
		return err->errnum == ENOENT ? 0 : -1; /* the record without its logs */
	if (outdir_sub(dst_run, "cells", 0, 0, &dst_cells, err) < 0) {
		outdir_close(&src);
		return -1;
	}
	rc = outdir_sub(&dst_cells, name, OUTDIR_CREATE, 0700, &dst, err);
	outdir_close(&dst_cells);
	if (rc < 0) {
		outdir_close(&src);
		return -1;
	}
	d = fdopendir(dup(src.fd));
	if (!d)
		rc = error_sys(err, errno, "reading '%s'", src.path);
	while (rc == 0 && (de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.' ||
		    fstatat(src.fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue;
		/* a symlink is refused here; a name OUT already has (a shard given twice) stays */
		if (outdir_link_or_copy(&src, de->d_name, &dst, err) < 0 && err->errnum != EEXIST)
			rc = -1;
	}
	if (d)
		closedir(d);
	outdir_close(&src);
	outdir_close(&dst);
	return rc;
}

/* Whether shards 1..count are all there and complete: the ones that are not are named on stderr
 * ("shards 2, 5 of 6 are missing", "shard 3 is interrupted") and *complete is cleared. A shard
 * index the manifests give twice is not an error (a shard passed twice merges once). */
static void shards_cover(const struct shard *sh, int n, int count, int *complete)
{
	unsigned char *have = xcalloc((size_t)count + 1, 1);
	char list[256] = "";
	size_t len = 0;
	int nmissing = 0;

	for (int i = 0; i < n; i++) {
		json_t *m = sh[i].manifest;
		const char *st = json_string_value(json_object_get(m, "status")) ?: "?";
		int idx =
		    (int)json_integer_value(json_object_get(json_object_get(m, "shard"), "index"));

		have[idx] = 1; /* checked: 1 <= idx <= count */
		if (strcmp(st, "complete")) {
			fprintf(stderr, "zbench merge: shard %d ('%s') is %s\n", idx,
				TERM(sh[i].dir), TERM(st));
			*complete = 0;
		}
	}
	for (int k = 1; k <= count; k++) {
		if (have[k])
			continue;
		if (nmissing++ < 20 && len < sizeof(list) - 16)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
						len ? ", " : "", k);
		else if (nmissing == 21)
			len += (size_t)snprintf(list + len, sizeof(list) - len, ", ...");
	}
	if (nmissing) {
		fprintf(stderr, "zbench merge: shard%s %s of %d %s missing\n",
			nmissing == 1 ? "" : "s", list, count, nmissing == 1 ? "is" : "are");
		*complete = 0;
	}
	free(have);
}

/* The manifest's identity as a shard: matrix and image hashes, shard index and count (0 and 0
 * for a run that is not a shard). -1 when it lacks the hashes or names an impossible shard. */
static int shard_identity(const struct shard *sh, const char **ms, const char **ih, int *idx,
			  int *cnt, struct zb_error *err)
{
	json_t *m = sh->manifest, *s = json_object_get(m, "shard");

	*ms = json_string_value(json_object_get(json_object_get(m, "matrix"), "sha256"));
	*ih = json_string_value(json_object_get(json_object_get(m, "image"), "hash"));
	if (!*ms || !*ih)
		return error_set(err, EINVAL, "'%s' is not a run directory", sh->dir);
	*idx = *cnt = 0;
	if (!s)
		return 0;
	if (!json_is_integer(json_object_get(s, "index")) ||
	    !json_is_integer(json_object_get(s, "count")))
		return error_set(err, EINVAL,
				 "'%s/manifest.json': its \"shard\" is not an index "
				 "and a count",
				 sh->dir);
	*idx = (int)json_integer_value(json_object_get(s, "index"));
	*cnt = (int)json_integer_value(json_object_get(s, "count"));
	if (*cnt < 1 || *cnt > MATRIX_CELLS_MAX || *idx < 1 || *idx > *cnt)
		return error_set(err, EINVAL, "'%s/manifest.json': shard %d of %d is not a shard",
				 sh->dir, *idx, *cnt);
	return 0;
}

/* Open the shards and check that they are shards of one run: *complete is cleared when one is
 * not complete or one is missing. */
static int shards_open(struct shard *sh, int n, json_t *from, int *complete, struct zb_error *err)
{
	const char *ms0 = NULL, *ih0 = NULL;
	int count = 0;

	for (int i = 0; i < n; i++) {
		const char *ms = NULL, *ih = NULL;
		int idx = 0, cnt = 0;

		if (outdir_open(&sh[i].run, sh[i].dir, 0, 0, err) < 0 ||
		    results_load_manifest(&sh[i].run, &sh[i].manifest, err) < 0)
			return error_wrap(err, "'%s' is not a run directory", sh[i].dir);
		if (shard_identity(&sh[i], &ms, &ih, &idx, &cnt, err) < 0)
			return -1;
		if (i == 0) {
			ms0 = ms, ih0 = ih, count = cnt;
		} else if (strcmp(ms, ms0) || strcmp(ih, ih0) || cnt != count) {
			return error_set(err, EINVAL,
					 "'%s' and '%s' are not shards of one run: matrix %.12s vs "
					 "%.12s, image %.12s vs %.12s, shards of %d vs %d",
					 sh[0].dir, sh[i].dir, ms0, ms, ih0, ih, count, cnt);
		}
		json_array_append_new(from,
				      json_pack("{s:s, s:O?, s:O?}", "dir", sh[i].dir, "shard",
						json_object_get(sh[i].manifest, "shard"), "status",
						json_object_get(sh[i].manifest, "status")));
	}
	if (count > 0) {
		shards_cover(sh, n, count, complete);
	} else {
		for (int i = 0; i < n; i++)
			if (strcmp(json_string_value(json_object_get(sh[i].manifest, "status"))
				       ?: "",
				   "complete"))
				*complete = 0;
	}
	return 0;
}

/* Every record of one shard once (the first shard to have an attempt of a (cell, repeat, side)
 * keeps it), with its cell directory. Lines that are not records are named on stderr. */
static int merge_shard(struct results *res, const struct shard *sh, json_t *seen,
		       struct zb_error *err)
{
	struct results_skipped skipped = { 0 };
	json_t *cells, *rec;
	size_t k;
	int rc = 0;

	if (results_load_cells(&sh->run, &cells, &skipped, err) < 0)
		return -1;
	results_skipped_print(&skipped, stderr);
	results_skipped_release(&skipped);
	json_array_foreach (cells, k, rec) {
		char key[96], id[17];
		const char *d = json_string_value(json_object_get(rec, "dir"));
		const json_t *config = json_object_get(rec, "config");

		/* by the canonical id of the record's config: shards recorded before canonical ids
		 * (or by another spelling of the matrix) still meet their duplicates; a run of
		 * several images has one attempt per side (docs/compare.md) */
		if (json_is_object(config))
			canon_cell_id(config, id);
		snprintf(key, sizeof(key), "%.40s/%lld/%lld/%.8s",
			 json_is_object(config) ? id
						: json_string_value(json_object_get(rec, "cell")) ?: "?",
			 (long long)json_integer_value(json_object_get(rec, "repeat")),
			 (long long)json_integer_value(json_object_get(rec, "attempt")),
			 json_string_value(json_object_get(rec, "side")) ?: "");
		if (json_object_get(seen, key))
			continue; /* the same attempt in two shards: keep the first */
		json_object_set_new(seen, key, json_true());
		rc = results_append(res, rec, err);
		if (rc == 0 && d && outdir_name_ok(d))
			rc = copy_cell_dir(&sh->run, d, &res->rundir, err);
		if (rc < 0)
			break;
	}
	json_decref(cells);
	return rc;
}

static int merge(const char *out, char **dirs, int n, struct zb_error *err)
{
	struct shard *sh = xcalloc((size_t)n, sizeof(*sh));
	struct results res;
	json_t *from = json_array(), *seen = json_object();
	int complete = 1, rc = -1;

	for (int i = 0; i < n; i++) {
		sh[i].dir = dirs[i];
		sh[i].run.fd = -1;
	}
	if (shards_open(sh, n, from, &complete, err) < 0)
		goto out;
	if (results_create(&res, out, err) < 0)
		goto out;
	json_object_update(res.manifest, sh[0].manifest);
	json_object_del(res.manifest, "shard");
	json_object_del(res.manifest, "resumed");
	json_object_set_new(res.manifest, "merged_from", json_incref(from));
	json_object_set_new(res.manifest, "status",
			    json_string(complete ? "complete" : "incomplete"));
	for (int i = 0; i < n; i++)
		if (merge_shard(&res, &sh[i], seen, err) < 0) {
			error_wrap(err, "merging '%s'", sh[i].dir);
			goto out_res;
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
	for (int i = 0; i < n; i++) {
		if (sh[i].run.fd >= 0)
			outdir_close(&sh[i].run);
		json_decref(sh[i].manifest);
	}
	free(sh);
	json_decref(from);
	json_decref(seen);
	return rc;
}

/* What the command line sets. */
struct merge_cli {
	const char *out;
};

static const struct cli_option merge_options[] = {
	{ CLI_ROW_STRING('o', "output", "OUT", struct merge_cli, out,
			 "the merged run directory (created; required)"),
	  .required = 1 },
};

static int merge_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_merge_command = {
	.name = "merge",
	.about = "Join run directories made with `zbench run --shard I/N` of the same matrix and\n"
		 "image into OUT (a new run directory): every record once, every cell directory,\n"
		 "and a manifest that lists the shards. OUT is 'complete' only if every shard\n"
		 "1..N is there and complete.",
	CLI_OPTIONS(merge_options),
	CLI_ARGS("RUNDIR...", 1, -1),
	.run = merge_main,
};

static int merge_main(void *ctx, int argc, char **argv)
{
	const struct merge_cli *c = ctx;
	struct zb_error err = { 0 };
	int rc = merge(c->out, argv, argc, &err);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_cli c = { 0 };

	return cli_run(&cmd_merge_command, argc, argv, &c);
}
