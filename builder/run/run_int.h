/* What the rooms of one run share (builder/run/run.c drives them; not for other callers):
 *
 *   run.c       run_matrix(): the pipeline (run directory -> schedule -> cells -> finish),
 *               signals, the image the cells boot
 *   rundir.h    the run directory: matrix and options of a resumed run, creation or resume,
 *               host info, the done map, leftovers of a killed run, the final manifest
 *   schedule.h  which cells run where and when: backend and hosts, order, shards, -j and
 *               --hosts workers, adaptive repeats
 *   cell.h      one cell: its attempts (disks, VM, channel, deadlines, verdict, record)
 */
#ifndef ZB_RUN_INT_H
#define ZB_RUN_INT_H

#include <jansson.h>
#include <signal.h>
#include <sys/types.h>

#include "image/image.h"
#include "matrix/matrix.h"
#include "progress.h"
#include "results.h"
#include "run.h"
#include "vm/libvirt_uri.h"
#include "vm/vm.h"

/* Set by the SIGINT/SIGTERM handler (run.c) to the signal's number: every loop stops taking
 * new work; the cell that runs ends as "interrupted" and leaves no record. */
extern volatile sig_atomic_t run_interrupted;
/* The VM of the cell that runs now (cell.c sets it), so a second signal can kill it. */
extern volatile pid_t run_vm_pid;

/* What the run directory already holds: per (cell id, repeat, image side), the last attempt
 * and whether it settled the cell (ok, or no retries left). */
struct done_map {
	json_t *last; /* "id/repeat/side" -> {"attempt": n, "outcome": s}; NULL: nothing ran */
};

/* One image of the run (-i A -i B, or the matrix's "images"): every cell runs once on each, per
 * repeat. A run of one image has one side, "A". */
struct run_side {
	const char *recipe;	  /* the image recipe's path as found */
	const char *recipe_named; /* as the matrix or -i named it (the manifest's record) */
	char *owned;		  /* owns `recipe` when located from the matrix */
	int from_file;		  /* named by a file, not the command line (recipe_resolve.h) */
	struct image img;
	char label[2]; /* "A", "B", ...: records and cell directories carry it */
	/* The matrix's "sides" (struct matrix_side): what this side sets in every cell, or NULL,
	 * and the cells it runs (matrix_side_cells(): its own with a set, else the matrix's) */
	const json_t *set;
	const struct cell *cells;
};

struct run_ctx {
	const struct run_options *o;
	struct matrix *m;
	struct run_side sides[RUN_MAX_IMAGES];
	int nsides; /* >= 1 once rundir_load() returned */
	struct results res;
	struct done_map dm;
	const struct vm_ops *vm_ops;
	char *dir; /* the run directory's path */
	const char *matrix_path;
	char *matrix_text; /* resume: the matrix as the manifest holds it */
	int lock_fd;	   /* the run directory's lock; -1 until taken */
	char accel[8];	   /* "kvm" or "tcg" once decided; "" while auto is undecided */
	int is_tty;
	int ncells_total;     /* cells x repeats x images */
	struct progress prog; /* the progress board (schedule_run() owns it; cell.c posts to it) */
	int done, ok;
	int m_retries;	       /* the matrix's "retries": extra attempts after a failed one */
	const char *accel_opt; /* --accel, or on resume the run's own; NULL: the matrix's */
	int shard_index, shard_count; /* this run's slice of the cells (1-based index) */
	struct libvirt_host *hosts;   /* --hosts: one worker per slot of each (schedule.c) */
	int nhosts;
	const char *uri;     /* the libvirt URI without --hosts; NULL: the backend's default */
	char host_uri[1024]; /* the connection this process opened (schedule_connect); records
			      * carry it as "host" */
	char cpuset[64];     /* host CPUs of this process's VMs on a shared host, or "" */
};

#endif
