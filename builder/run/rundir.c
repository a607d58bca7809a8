/* The run directory of one run (rundir.h). */
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cell.h"
#include "core/cleanup.h"
#include "core/log.h"
#include "core/term.h"
#include "core/util.h"
#include "core/version.h"
#include "recipe_resolve.h"
#include "vm/disk_server.h"
#include "vm/vm.h"

/* ---- what the run is ----------------------------------------------------------------------- */

/* --resume: the run directory, and the matrix as it was when the run started, not as the file
 * is now; its images (the manifest's "images", or "image" for a run of one) as it named them. */
static int load_resumed(struct run_ctx *ctx, struct zb_error *err)
{
	json_t *mm, *images, *im;
	size_t i;

	ctx->dir = xstrdup(ctx->o->resume_dir);
	if (results_open(&ctx->res, ctx->dir, err) < 0)
		return -1;
	mm = json_object_get(ctx->res.manifest, "matrix");
	ctx->matrix_path = json_string_value(json_object_get(mm, "path"));
	images = json_object_get(ctx->res.manifest, "images");
	if (!json_is_array(images) || json_array_size(images) < 2)
		images = json_pack("[O]", json_object_get(ctx->res.manifest, "image"));
	else
		json_incref(images);
	json_array_foreach (images, i, im) {
		const char *recipe = json_string_value(json_object_get(im, "recipe"));

		if (i >= RUN_MAX_IMAGES || !recipe) {
			json_decref(images);
			return error_set(err, EINVAL,
					 "'%s/manifest.json': image %zu lacks its recipe", ctx->dir,
					 i + 1);
		}
		/* a file's choice: checked and found as a matrix's, never where we run */
		cleanup_free char *from = xasprintf("%s/manifest.json", ctx->dir);

		if (recipe_resolve_file(&ctx->sides[ctx->nsides], recipe, from,
					recipe_resolve_manifest_matrix(ctx->matrix_path),
					err) < 0) {
			json_decref(images);
			return -1;
		}
		ctx->nsides++;
	}
	json_decref(images); /* the strings stay: the manifest holds them */
	if (!ctx->matrix_path || !ctx->nsides || !json_object_get(mm, "content"))
		return error_set(err, EINVAL, "'%s/manifest.json' lacks the matrix or image",
				 ctx->dir);
	ctx->matrix_text = json_dumps(json_object_get(mm, "content"), JSON_INDENT(2));
	if (matrix_load_stored(ctx->matrix_path, ctx->matrix_text, strlen(ctx->matrix_text),
			       &ctx->m, err) < 0)
		return -1;
	if (ctx->o->repeats_total > ctx->m->repeats)
		ctx->m->repeats = ctx->o->repeats_total;
	return 0;
}

/* The options a resumed run keeps from its manifest unless the command line says otherwise. */
static void load_resumed_options(struct run_ctx *ctx)
{
	json_t *sh = json_object_get(ctx->res.manifest, "shard");

	ctx->shard_index = (int)json_integer_value(json_object_get(sh, "index"));
	ctx->shard_count = (int)json_integer_value(json_object_get(sh, "count"));
	if (!ctx->accel_opt)
		ctx->accel_opt = json_string_value(
		    json_object_get(json_object_get(ctx->res.manifest, "options"), "accel"));
}

/* The images -i named (trusted, as written), or on replay the manifest's (a file's: checked and
 * found as a matrix's, recipe_resolve.h). */
static int choose_given(struct run_ctx *ctx, struct zb_error *err)
{
	const struct run_options *o = ctx->o;
	const char *matrix = recipe_resolve_manifest_matrix(o->matrix_path);
	int n = o->n_recipes >= 2 ? o->n_recipes : 1;

	for (int k = 0; k < n; k++) {
		const char *name = o->n_recipes >= 2 ? o->recipes[k] : o->recipe_path;

		if (!o->recipes_from)
			recipe_resolve_cli(&ctx->sides[k], name);
		else if (recipe_resolve_file(&ctx->sides[k], name, o->recipes_from, matrix, err) <
			 0)
			return -1;
	}
	ctx->nsides = n;
	return 0;
}

/* The images of a run of the matrix's "sides": -i once for every side, -i once per side, else
 * each side's "image", else the matrix's "image", else RUN_DEFAULT_RECIPE (found as in
 * choose_images()). */
static int choose_sides(struct run_ctx *ctx, struct zb_error *err)
{
	const struct run_options *o = ctx->o;
	const struct matrix *m = ctx->m;
	const char *one = json_string_value(json_object_get(m->json, "image"));

	if (o->n_recipes >= 2 && (size_t)o->n_recipes != m->n_sides)
		return error_set(err, EINVAL,
				 "%d images (-i) for the %zu sides of '%s': name one image, or "
				 "one per side",
				 o->n_recipes, m->n_sides, ctx->matrix_path);
	if (o->n_recipes >= 2)
		return choose_given(ctx, err);
	ctx->nsides = (int)m->n_sides;
	for (size_t k = 0; k < m->n_sides; k++) {
		struct run_side *s = &ctx->sides[k];
		const char *name = m->sides[k].image ? m->sides[k].image : one;

		if (o->recipe_path && !o->recipes_from) {
			recipe_resolve_cli(s, o->recipe_path);
		} else if (o->recipe_path) {
			if (recipe_resolve_file(s, o->recipe_path, o->recipes_from,
						recipe_resolve_manifest_matrix(o->matrix_path),
						err) < 0)
				return -1;
		} else if (!name) {
			s->recipe_named = RUN_DEFAULT_RECIPE;
			s->recipe = s->owned = image_recipe_locate(RUN_DEFAULT_RECIPE, NULL);
		} else if (recipe_resolve_file(s, name, ctx->matrix_path, ctx->matrix_path, err) <
			   0) {
			return -1;
		}
	}
	return 0;
}

/* The images of a new run: -i (once or more), else the matrix's "images" or "image" (located
 * relative to the matrix or the repository, never the current directory: image.h), else
 * RUN_DEFAULT_RECIPE. The recipe as named is the manifest's record (a replay on another machine
 * finds it in its own repository); `recipe` is where it was found. */
static int choose_images(struct run_ctx *ctx, struct zb_error *err)
{
	const struct run_options *o = ctx->o;
	json_t *images = json_object_get(ctx->m->json, "images");
	const char *one = json_string_value(json_object_get(ctx->m->json, "image"));
	json_t *v;
	size_t i;

	if (o->n_recipes > RUN_MAX_IMAGES)
		return error_set(err, EINVAL, "%d images: a run compares at most %d", o->n_recipes,
				 RUN_MAX_IMAGES);
	if (ctx->m->n_sides)
		return choose_sides(ctx, err);
	if (o->n_recipes >= 2 || o->recipe_path)
		return choose_given(ctx, err);
	if (images && one)
		return error_set(err, EINVAL, "'%s' names both \"image\" and \"images\": keep one",
				 ctx->matrix_path);
	if (json_array_size(images) > RUN_MAX_IMAGES)
		return error_set(err, EINVAL, "'%s': %zu images: a run compares at most %d",
				 ctx->matrix_path, json_array_size(images), RUN_MAX_IMAGES);
	ctx->nsides = 1;
	if (!images || !json_array_size(images)) {
		if (!one) { /* ours: found in the repository like any other */
			ctx->sides[0].recipe_named = RUN_DEFAULT_RECIPE;
			ctx->sides[0].recipe = ctx->sides[0].owned =
			    image_recipe_locate(RUN_DEFAULT_RECIPE, NULL);
			return 0;
		}
		return recipe_resolve_file(&ctx->sides[0], one, ctx->matrix_path, ctx->matrix_path,
					   err);
	}
	ctx->nsides = 0;
	json_array_foreach (images, i, v) {
		if (recipe_resolve_file(&ctx->sides[ctx->nsides++], json_string_value(v),
					ctx->matrix_path, ctx->matrix_path, err) < 0)
			return -1;
	}
	return 0;
}

int rundir_load(struct run_ctx *ctx, struct zb_error *err)
{
	const struct run_options *o = ctx->o;

	ctx->matrix_path = o->matrix_path;
	if (o->resume_dir) {
		if (load_resumed(ctx, err) < 0)
			return -1;
	} else if (o->matrix_text) {
		if (matrix_load_stored(ctx->matrix_path, o->matrix_text, strlen(o->matrix_text),
				       &ctx->m, err) < 0)
			return -1;
	} else if (matrix_load(ctx->matrix_path, &ctx->m, err) < 0) {
		return -1;
	}
	ctx->m_retries = (int)json_integer_value(json_object_get(ctx->m->json, "retries"));
	ctx->accel_opt = o->accel;
	ctx->shard_index = o->shard_index;
	ctx->shard_count = o->shard_count;
	if (o->resume_dir)
		load_resumed_options(ctx);
	else if (choose_images(ctx, err) < 0)
		return -1;
	/* a resumed run's images are its manifest's: as many as the sides its matrix has */
	if (ctx->m->n_sides && (size_t)ctx->nsides != ctx->m->n_sides)
		return error_set(err, EINVAL, "'%s': %d images for the matrix's %zu sides",
				 ctx->dir ? ctx->dir : ctx->matrix_path, ctx->nsides,
				 ctx->m->n_sides);
	for (int k = 0; k < ctx->nsides; k++) {
		ctx->sides[k].label[0] = (char)('A' + k);
		ctx->sides[k].cells = matrix_side_cells(ctx->m, (size_t)k);
		if ((size_t)k < ctx->m->n_sides)
			ctx->sides[k].set = ctx->m->sides[k].set;
	}
	return 0;
}

/* ---- a new run ----------------------------------------------------------------------------- */

static json_t *host_info(void)
{
	struct utsname u;
	char *qv = vm_qemu_version();
	json_t *h;

	uname(&u);
	h = json_pack("{s:s, s:s, s:s, s:s, s:i, s:b}", "hostname", u.nodename, "kernel", u.release,
		      "machine", u.machine, "qemu", qv, "cpus", (int)sysconf(_SC_NPROCESSORS_ONLN),
		      "kvm_openable", cell_kvm_openable());
	free(qv);
	return h;
}

static char *default_run_dir(const char *name)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	return xasprintf("runs/%s-%s", name, ts);
}

/* One image as the manifest records it; `side`: with its label (a run of several), and what the
 * side sets. */
static json_t *manifest_image(const struct run_side *s, int side)
{
	json_t *o =
	    json_pack("{s:s, s:s, s:O}", "recipe", s->recipe_named ? s->recipe_named : s->recipe,
		      "hash", s->img.hash, "manifest", s->img.manifest);

	if (side)
		json_object_set_new(o, "side", json_string(s->label));
	if (s->set) /* what the side changes in every cell (the matrix's "sides") */
		json_object_set_new(o, "set", json_deep_copy(s->set));
	return o;
}

/* A new run's manifest: what ran where, with what, from which matrix and image. */
static void manifest_new(struct run_ctx *ctx)
{
	const struct run_options *o = ctx->o;
	json_t *man = ctx->res.manifest;

	json_object_set_new(man, "zbench", json_string(ZBENCH_VERSION));
	json_object_set_new(man, "status", json_string("running"));
	json_object_set_new(man, "started", json_real(now_wall()));
	json_object_set_new(man, "host", host_info());
	json_object_set_new(man, "backend", json_string(ctx->vm_ops->name));
	json_object_set_new(man, "options",
			    json_pack("{s:s?, s:b, s:s?, s:s?, s:b, s:b, s:b, s:b}", "accel",
				      o->accel, "keep_disks", o->keep_disks, "libvirt_uri",
				      ctx->uri, "hosts", o->hosts, "shared_paths", o->shared_paths,
				      "cold", o->cold, "warm", o->warm, "limits_from_start",
				      o->limits_from_start));
	if (ctx->nhosts) {
		json_t *hosts = json_array();

		for (int h = 0; h < ctx->nhosts; h++)
			json_array_append_new(hosts,
					      json_pack("{s:s, s:i}", "uri", ctx->hosts[h].uri,
							"slots", ctx->hosts[h].slots));
		json_object_set_new(man, "hosts", hosts);
	}
	if (o->shard_count > 1)
		json_object_set_new(
		    man, "shard",
		    json_pack("{s:i, s:i}", "index", o->shard_index, "count", o->shard_count));
	json_object_set_new(man, "matrix",
			    json_pack("{s:s, s:s, s:O}", "path", ctx->matrix_path, "sha256",
				      o->matrix_sha256 ? o->matrix_sha256 : ctx->m->sha256,
				      "content", ctx->m->json));
	json_object_set_new(man, "flavor", json_string(ctx->sides[0].img.flavor));
	/* "image" is the first (readers of one image find it there); "images" lists them all */
	json_object_set_new(man, "image", manifest_image(&ctx->sides[0], 0));
	if (ctx->nsides > 1) {
		json_t *all = json_array();

		for (int k = 0; k < ctx->nsides; k++)
			json_array_append_new(all, manifest_image(&ctx->sides[k], 1));
		json_object_set_new(man, "images", all);
	}
}

static int start_new(struct run_ctx *ctx, struct zb_error *err)
{
	ctx->dir = ctx->o->out_dir ? xstrdup(ctx->o->out_dir) : default_run_dir(ctx->m->name);
	if (results_create(&ctx->res, ctx->dir, err) < 0)
		return -1;
	if (!ctx->o->out_dir) {
		struct zb_error lerr = { 0 };

		if (results_link_latest(ctx->dir, &lerr) < 0)
			log_warn("runs/latest not updated: %s", lerr.msg);
	}
	ctx->lock_fd = results_lock(&ctx->res, err);
	if (ctx->lock_fd < 0)
		return -1;
	manifest_new(ctx);
	return 0;
}

/* ---- a resumed run ------------------------------------------------------------------------- */

/* Kill what a killed zbench left in RUNDIR: the backend's VMs that outlived it (their own
 * process group; vm_ops.reap), their modelled disks' servers (disk_servers_reap()), and disk
 * images. */
static void cleanup_leftovers(struct run_ctx *ctx)
{
	int killed = ctx->vm_ops->reap(ctx->res.dir);
	int servers = disk_servers_reap(ctx->res.dir);
	int removed = results_remove_leftovers(&ctx->res);

	if (killed || servers || removed)
		log_warn("resume: stopped %d %s VM%s and %d disk server%s and removed %d disk "
			 "image%s left by the interrupted run",
			 killed, ctx->vm_ops->name, killed == 1 ? "" : "s", servers,
			 servers == 1 ? "" : "s", removed, removed == 1 ? "" : "s");
	killed += servers;
	/* give the kernel a moment to reap the killed processes' file locks */
	if (killed)
		usleep(200 * 1000);
}

static int start_resumed(struct run_ctx *ctx, struct zb_error *err)
{
	json_t *man = ctx->res.manifest;
	json_t *images = json_object_get(man, "images"), *resumed;

	for (int k = 0; k < ctx->nsides; k++) {
		json_t *im = ctx->nsides > 1 ? json_array_get(images, (size_t)k)
					     : json_object_get(man, "image");
		const char *was = json_string_value(json_object_get(im, "hash"));

		if (!was || strcmp(was, ctx->sides[k].img.hash))
			return error_set(err, EINVAL,
					 "image %s '%s' changed since the run started (%.12s, now "
					 "%.12s): its cells would mix two images; start a new run "
					 "instead",
					 ctx->sides[k].label, ctx->sides[k].recipe, was ? was : "?",
					 ctx->sides[k].img.hash);
	}
	ctx->lock_fd = results_lock(&ctx->res, err);
	if (ctx->lock_fd < 0)
		return -1;
	cleanup_leftovers(ctx);
	if (done_map_load(&ctx->dm, ctx->dir, err) < 0)
		return -1;
	resumed = json_object_get(man, "resumed");
	if (!json_is_array(resumed)) {
		resumed = json_array();
		json_object_set_new(man, "resumed", resumed);
	}
	json_array_append_new(resumed, json_real(now_wall()));
	json_object_set_new(man, "status", json_string("running"));
	return 0;
}

int rundir_start(struct run_ctx *ctx, struct zb_error *err)
{
	if ((ctx->o->resume_dir ? start_resumed(ctx, err) : start_new(ctx, err)) < 0)
		return -1;
	return results_write_manifest(&ctx->res, err);
}

/* ---- what it holds ------------------------------------------------------------------------- */

/* A record's image side: 0 without one (a run of one image), the label's index, or -1 for a
 * label no run writes (the record then settles nothing). */
static int done_map_side(const json_t *side)
{
	const char *s = json_string_value(side);

	if (!side)
		return 0;
	if (!s || s[0] < 'A' || s[0] >= 'A' + RUN_MAX_IMAGES || s[1])
		return -1;
	return s[0] - 'A';
}

int done_map_load(struct done_map *dm, const char *dir, struct zb_error *err)
{
	struct results_skipped skipped = { 0 };
	json_t *cells, *rec;
	size_t i;

	if (results_read_cells(dir, &cells, &skipped, err) < 0)
		return -1;
	results_skipped_print(&skipped, stderr);
	results_skipped_release(&skipped);
	dm->last = json_object();
	json_array_foreach (cells, i, rec) {
		const char *id = json_string_value(json_object_get(rec, "cell"));
		const char *outcome = json_string_value(json_object_get(rec, "outcome"));
		json_int_t repeat = json_integer_value(json_object_get(rec, "repeat"));
		json_int_t attempt = json_integer_value(json_object_get(rec, "attempt"));
		int side = done_map_side(json_object_get(rec, "side"));
		char key[64];
		json_t *prev;

		if (!id || !outcome || side < 0)
			continue;
		snprintf(key, sizeof(key), "%.20s/%lld/%d", id, (long long)repeat, side);
		prev = json_object_get(dm->last, key);
		if (prev && json_integer_value(json_object_get(prev, "attempt")) >= attempt)
			continue;
		json_object_set_new(
		    dm->last, key, json_pack("{s:I, s:s}", "attempt", attempt, "outcome", outcome));
	}
	json_decref(cells);
	return 0;
}

int done_map_next(const struct done_map *dm, const struct cell *cell, int repeat, int side,
		  int retries, int *ok)
{
	char key[64];
	json_t *prev;
	int attempt;
	const char *outcome;

	*ok = 0;
	if (!dm->last)
		return 1;
	snprintf(key, sizeof(key), "%.20s/%d/%d", cell->id, repeat, side);
	prev = json_object_get(dm->last, key);
	if (!prev)
		return 1;
	attempt = (int)json_integer_value(json_object_get(prev, "attempt"));
	outcome = json_string_value(json_object_get(prev, "outcome"));
	if (!strcmp(outcome, "ok")) {
		*ok = 1;
		return 0;
	}
	return attempt >= 1 + retries ? 0 : attempt + 1;
}

int done_map_count(struct run_ctx *ctx, struct zb_error *err)
{
	struct done_map final = { 0 };
	const char *key;
	json_t *v;

	if (done_map_load(&final, ctx->res.dir, err) < 0)
		return -1;
	ctx->done = ctx->ok = 0;
	json_object_foreach (final.last, key, v) {
		ctx->done++;
		ctx->ok += !strcmp(json_string_value(json_object_get(v, "outcome")), "ok");
	}
	json_decref(final.last);
	return 0;
}

/* ---- the end ------------------------------------------------------------------------------- */

int rundir_finish(struct run_ctx *ctx, int interrupted, struct zb_error *err)
{
	json_t *man = ctx->res.manifest;

	json_object_set_new(man, "status", json_string(interrupted ? "interrupted" : "complete"));
	json_object_set_new(man, "finished", json_real(now_wall()));
	if (ctx->accel[0])
		json_object_set_new(man, "accel", json_string(ctx->accel));
	json_object_set_new(man, "cells_ok", json_integer(ctx->ok));
	json_object_set_new(man, "cells_done", json_integer(ctx->done));
	return results_write_manifest(&ctx->res, err);
}

void rundir_fail(struct run_ctx *ctx, const struct zb_error *err)
{
	if (!ctx->res.dir || !ctx->res.manifest)
		return;
	json_object_set_new(ctx->res.manifest, "status", json_string("failed"));
	json_object_set_new(ctx->res.manifest, "error", json_string(err->msg));
	results_write_manifest(&ctx->res, &(struct zb_error){ 0 });
}
