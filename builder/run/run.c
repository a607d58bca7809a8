/* Running a matrix (run.h): the pipeline of one run, and its signals.
 *
 *   rundir_load     the matrix and options (a resumed run's own, from its manifest)
 *   schedule_plan   backend and hosts; what would refuse the run, before anything exists
 *   run_images      the images the cells boot (one, or several compared in one run), and
 *                   whether every cell can use each
 *   rundir_start    the run directory created, or resumed (leftovers cleaned, done map read)
 *   schedule_run    every (cell, repeat, image) to cell_run(): here, on -j or --hosts workers, then
 *                   adaptive repeats
 *   rundir_finish   the manifest's final state
 *
 * run_int.h draws the rooms; cell.c is one cell, schedule.c the order and the workers, rundir.c
 * the run directory.
 */
#include "run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell.h"
#include "core/log.h"
#include "core/term.h"
#include "core/util.h"
#include "image_needs.h"
#include "kvm_probe.h"
#include "recipe_resolve.h"
#include "run_int.h"
#include "rundir.h"
#include "schedule.h"

volatile sig_atomic_t run_interrupted;
volatile pid_t run_vm_pid = -1;

static void on_signal(int sig)
{
	if (run_interrupted) {
		/* Second signal: out now. The VM is in its own process group, so it would
		 * outlive us: kill it first. (--resume also cleans up what is left.) */
		if (run_vm_pid > 0)
			kill(run_vm_pid, SIGKILL);
		_exit(130);
	}
	run_interrupted = sig;
}

/* The images the cells boot: every one resolved (built if missing) before any cell, one the
 * backend can boot, and the buses of every cell's disks driven by its kernel. */
static int run_image(struct run_ctx *ctx, const struct run_side *s, struct image *img,
		     struct zb_error *err)
{
	const struct run_options *o = ctx->o;

	if (image_get(s->recipe, o->cache_dir, recipe_resolve_flags(s), img, err) < 0)
		return error_wrap(err, "image '%s'", s->recipe);
	if (img->disk && !(ctx->vm_ops->caps & VM_CAP_CLOUD_DISK))
		return error_set(
		    err, EINVAL,
		    "image '%s' is a cloud image (a qcow2 disk): only the qemu backend "
		    "boots those so far, not '%s'",
		    s->recipe, ctx->vm_ops->name);
	if (o->replay_image_hash && ctx->nsides == 1 && strcmp(o->replay_image_hash, img->hash))
		log_warn("note: the image is %.12s, the run used %.12s (the recipe or the guest "
			 "binaries changed since)",
			 TERM(img->hash), TERM(o->replay_image_hash));
	const json_t *r = json_object_get(img->manifest, "recipe");
	struct image_view v = { .name = json_string_value(json_object_get(r, "name")),
				.shown = s->recipe,
				.recipe_path = s->recipe,
				.recipe = json_object_get(r, "content"),
				.img = img,
				.cache_dir = o->cache_dir };

	return image_needs_check(s->cells, ctx->m->n_cells, &v, err);
}

static int run_images(struct run_ctx *ctx, struct zb_error *err)
{
	for (int k = 0; k < ctx->nsides; k++) {
		if (run_image(ctx, &ctx->sides[k], &ctx->sides[k].img, err) < 0)
			return ctx->nsides > 1 ? error_wrap(err, "image %s", ctx->sides[k].label)
					       : -1;
	}
	return 0;
}

/* The run's last words: its state in the manifest, a line for the user, the run directory in
 * *dir_out (the commands print it on stdout: run_matrix() is also a step of `zbench bisect`,
 * whose stdout is its answer alone), and run_matrix()'s exit code. */
static int run_finish(struct run_ctx *ctx, struct zb_error *err)
{
	int interrupted = run_interrupted != 0;

	if (rundir_finish(ctx, interrupted, err) < 0)
		return -1;
	if (interrupted)
		log_info("interrupted after %d of %d cells; `zbench run --resume %s` finishes the "
			 "run",
			 ctx->done, ctx->ncells_total, TERM(ctx->dir));
	else
		log_info("%d of %d cells ok; results in %s/cells.jsonl", ctx->ok, ctx->ncells_total,
			 TERM(ctx->dir));
	if (ctx->o->dir_out)
		*ctx->o->dir_out = xstrdup(ctx->dir);
	return interrupted ? 130 : (ctx->ok == ctx->ncells_total ? 0 : 1);
}

static void run_ctx_release(struct run_ctx *ctx)
{
	if (ctx->lock_fd >= 0)
		close(ctx->lock_fd);
	json_decref(ctx->dm.last);
	results_release(&ctx->res);
	for (int k = 0; k < ctx->nsides; k++) {
		image_release(&ctx->sides[k].img);
		free(ctx->sides[k].owned);
	}
	matrix_free(ctx->m);
	free(ctx->matrix_text);
	free(ctx->dir);
	free(ctx->hosts);
}

int run_matrix(const struct run_options *o, struct zb_error *err)
{
	struct run_ctx ctx = { .o = o, .lock_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int rc = -1;

	ctx.is_tty = isatty(2);
	/* schedule_plan and run_images refuse before rundir_start creates anything: a refused
	 * backend, host, -j or image leaves nothing behind */
	if (rundir_load(&ctx, err) == 0 && schedule_plan(&ctx, err) == 0 &&
	    run_images(&ctx, err) == 0 && rundir_start(&ctx, err) == 0) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		kvm_probe_run_start(&ctx);
		if (schedule_run(&ctx, err) == 0)
			rc = run_finish(&ctx, err);
	}
	if (rc < 0)
		rundir_fail(&ctx, err);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	run_ctx_release(&ctx);
	return rc;
}
