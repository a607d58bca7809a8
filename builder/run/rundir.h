/* The run directory of one run (RUNDIR: manifest.json, cells.jsonl, cells/; results.h writes
 * its files): what a resumed run brings with it, its creation or resumption, what it already
 * holds, and its final state. */
#ifndef ZB_RUNDIR_H
#define ZB_RUNDIR_H

#include <stddef.h>

#include "run_int.h"

/* Fill ctx with the matrix and the options that come from where the run is: with --resume the
 * run directory's manifest (the matrix as it was when the run started, its image recipes,
 * shard, and --accel) and the directory opened (ctx->res, ctx->dir); else the matrix file (or
 * o->matrix_text). Also ctx->m_retries and ctx->sides[0..nsides) (-i once or more, else the
 * matrix's "images" or "image", else RUN_DEFAULT_RECIPE; a matrix naming both is refused).
 * Creates nothing. */
int rundir_load(struct run_ctx *ctx, struct zb_error *err);

/* Make the run directory ready for cells, once everything that could refuse the run has
 * (backend, hosts, image): a new run's directory (o->out_dir, else runs/NAME-TIMESTAMP) with
 * its manifest (host, backend, options, matrix, image); or, resuming, a check that the image is
 * the run's own, then leftovers of the killed run cleaned up and the done map loaded. Either
 * way the directory is locked (ctx->lock_fd) and the manifest written with status "running". */
int rundir_start(struct run_ctx *ctx, struct zb_error *err);

/* The manifest's final state: status "complete" or "interrupted", accel, cells_ok and
 * cells_done. */
int rundir_finish(struct run_ctx *ctx, int interrupted, struct zb_error *err);

/* After a failure: the manifest says "failed" and why (best effort; nothing if the directory
 * never opened). */
void rundir_fail(struct run_ctx *ctx, const struct zb_error *err);

/* Read cells.jsonl into *dm, keyed by (cell, repeat, side) (replacing nothing: dm->last must be
 * NULL). Records it cannot read are named on stderr and skipped. */
int done_map_load(struct done_map *dm, const char *dir, struct zb_error *err);
/* The attempt to start (cell, repeat, image side) with (1 when nothing ran), or 0 if it is
 * settled; *ok says whether it settled ok. A record without "side" is side 0 (A). */
int done_map_next(const struct done_map *dm, const struct cell *cell, int repeat, int side,
		  int retries, int *ok);
/* ctx->done and ctx->ok as the records in the run directory have them. */
int done_map_count(struct run_ctx *ctx, struct zb_error *err);

#endif
