/* One cell of a run: every attempt the matrix allows at one (cell, repeat). An attempt is fresh
 * disks (and the cloud flavor's seed) in its own directory under RUNDIR/cells/, a VM booted with
 * the cell's kernel command line, the job sent over the channel when the agent says hello, the
 * deadlines watched (boot, heartbeat, overall: docs/protocol.md), the verdict (enum
 * cell_outcome: the console first, then what the channel brought), one record appended to
 * cells.jsonl, the disks removed. */
#ifndef ZB_CELL_H
#define ZB_CELL_H

#include "run_int.h"

/* Run (cell, repeat) on image ctx->sides[side] from `attempt` (1-based; a resumed run may start
 * later) until it is ok, interrupted or out of retries (the matrix's "retries"), logging a retry
 * and one progress line per attempt. Counts the cell in ctx->done (unless interrupted) and ctx->ok.
 * A guest failure is an outcome, never an error: returns < 0 (err set) only when the host could not
 * create the cell's files or disks, start the VM, or append the record. Under auto acceleration the
 * first attempt may probe KVM and settles ctx->accel for the rest of the run. */
int cell_run(struct run_ctx *ctx, const struct cell *cell, int repeat, int side, int attempt,
	     struct zb_error *err);

/* Whether /dev/kvm can be opened read-write (whether guests actually run is another matter). */
int cell_kvm_openable(void);

#endif
