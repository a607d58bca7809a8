/* Which cells run where and when: the VM backend and the hosts (--hosts URI=N slots, a libvirt
 * URI), the checks that must pass before anything is created, the order of the cells in each
 * repeat (shuffled deterministically), this run's shard, -j and --hosts worker processes, and
 * adaptive repeats. Each (cell, repeat) task goes to cell_run() (cell.h). */
#ifndef ZB_SCHEDULE_H
#define ZB_SCHEDULE_H

#include <stddef.h>

#include "run_int.h"

/* Choose the backend and the hosts (ctx->vm_ops, ctx->hosts, ctx->nhosts, ctx->uri) from the
 * resumed run, the command line, $ZBENCH_LIBVIRT_URI and the matrix, and check what would
 * refuse the run: unknown backends or URIs, remote hosts without --shared-paths, passthrough
 * devices that cannot be used there or at once, unthrottled disks under -j or N > 1 slots
 * (unless --allow-interference), modelled disks on a backend that cannot attach them. Creates
 * nothing, connects nowhere. */
int schedule_plan(struct run_ctx *ctx, struct zb_error *err);

/* Every task of the run (schedule_tasks()): the fixed repeats (one at a time in this process, or by
 * -j / --hosts workers), then adaptive repeats one at a time. Tasks the done map settled are
 * counted, not run. Sets ctx->ncells_total beforehand (cells of this shard x repeats x images;
 * adaptive repeats add to it) and leaves ctx->done and ctx->ok as the run's. Stops taking tasks
 * once run_interrupted is set. Returns < 0 (err set) when a host failure stopped the run. */
int schedule_run(struct run_ctx *ctx, struct zb_error *err);

/* The order of the cells in repeat r: shuffled (the default) so slow drift of the host spreads
 * over every cell instead of biasing the last ones, deterministically (seeded by the matrix's
 * "seed", else by its hash) so a rerun or a resume sees the same order; "order": "sequential"
 * keeps the matrix's. `order` has m->n_cells entries. */
void schedule_order(const struct matrix *m, int r, size_t *order);

/* One task of a repeat: a cell (its index in m->cells) on one image side (ctx->sides). */
struct schedule_task {
	size_t cell;
	int side;
};

/* The m->n_cells * nsides tasks of repeat r: the cells in schedule_order(), each cell's images
 * back to back so the host's drift hits every side alike, in an order that turns by one every
 * repeat (two images: A B in even repeats, B A in odd ones). */
void schedule_tasks(const struct matrix *m, int r, int nsides, struct schedule_task *tasks);

/* The shard (0-based) a cell belongs to: from its id, so it does not depend on the order or
 * number of cells, and a resumed or repeated run slices the same way. */
int schedule_shard(const struct cell *cell, int count);

/* Cells that run at once (-j, --hosts URI=N, Slurm tasks sharing a node) only measure what they
 * claim if they cannot disturb each other's disks: 0 if every disk of every cell is throttled (a
 * throttle, or a modelled disk: disk-bound by its own clock, at a drive's speed), else -1 with
 * err naming `what`, the disk and the cell. */
int schedule_check_interference(const struct matrix *m, const char *what, struct zb_error *err);

#endif
