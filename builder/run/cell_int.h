/* The rooms of one cell (cell.h) and nothing else: cell.c makes an attempt (its disks, its VM's
 * spec, its verdict and record), cell_drive.c drives the running VM to its end (an event loop
 * over a table of sources: docs/protocol.md). */
#ifndef ZB_CELL_INT_H
#define ZB_CELL_INT_H

#include "cell.h"
#include "channel.h"
#include "kvm_probe.h"
#include "run_int.h"
#include "vm/disk.h"
#include "vm/disk_server.h"

struct cloud_cell;

/* One attempt at one cell: what the runner keeps beside the state the channel fills. */
struct attempt {
	const struct cell *cell;
	const struct run_side *side; /* the image it boots */
	int repeat, attempt;
	char *dir;
	const char *accel;
	int probing;	     /* auto accel, KVM tried for the first time in this run */
	double t_task;	     /* the task's start (its first attempt's), for the progress board */
	int posted_start;    /* the board has this attempt's head */
	double t_first_byte; /* the first byte from the guest, console or channel */
	struct cell_state st;
	struct vm_boot boot; /* how the VM came up (vm_ops.boot): restored or cold, and why */
	/* The disks' I/O limits: lifted while the guest set up (cell_lift_limits), and when
	 * given back (seconds since the VM start; 0: not yet); else why they were kept. */
	int limits_lifted;
	double limits_set_s;
	char limits_kept[160];
	/* the VM spec's warm-snapshot strings (cell_warm()), freed with the attempt */
	char *warm_cmdline, *snapshot_dir;
	/* the modelled disks' servers (disk_server.h), started before the VM, stopped after it */
	struct disk_servers servers;
};

/* ---- cell.c, for cell_drive.c ---- */

/* The VM of one attempt (its kernel command line and resources from the cell's config) into
 * *spec; returns the command line spec->cmdline points to, for the caller to free. */
char *cell_vm_spec(struct run_ctx *ctx, struct attempt *cr, struct disk_set *ds,
		   const struct cloud_cell *cc, struct vm_spec *spec);
/* How the VM came up, kept for the record; moves st.t_start past a snapshot's making. */
void cell_boot(struct run_ctx *ctx, struct attempt *cr, struct vm *vm);
/* Take the disks' limits off while the guest sets up, where the run allows it. */
void cell_lift_limits(struct run_ctx *ctx, struct attempt *cr, struct vm *vm, struct disk_set *ds);
/* Post the attempt's progress to the run's board: its head once, then its phase (final 0) or
 * its last line (final 1). */
void cell_progress(struct run_ctx *ctx, struct attempt *cr, int final);

/* ---- cell_drive.c ---- */

/* Boot the attempt's VM on the disk set and drive it to the end: the job sent on the agent's
 * hello, the limits given back when it asks, the deadlines watched, the VM stopped. Returns < 0
 * only for host failures that leave no verdict (err set); every guest-side failure is an
 * outcome in cr->st. */
int cell_drive(struct run_ctx *ctx, struct attempt *cr, struct disk_set *ds,
	       const struct cloud_cell *cc, struct zb_error *err);

#endif
