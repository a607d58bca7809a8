/* The run directory: where everything a run produces lives (docs/results.md).
 *
 *   RUNDIR/manifest.json   what ran: zbench, host, QEMU, accel, image manifest, matrix copy+hash
 *   RUNDIR/cells.jsonl     one record per cell attempt, appended and fsync'd as each cell ends
 *   RUNDIR/cells/NNN-ID-rR/   per-cell files: console.log, qemu.cmdline, qemu.log
 */
#ifndef ZB_RESULTS_H
#define ZB_RESULTS_H

#include <jansson.h>

#include "error.h"

struct results {
	char *dir;
	int cells_fd; /* cells.jsonl, O_APPEND */
	json_t *manifest;
};

/* Create RUNDIR (mode 0700; it must not exist yet) with cells/ and an empty cells.jsonl. */
int results_create(struct results *r, const char *dir, struct zb_error *err);
/* Open an existing RUNDIR to add to it (resume): reads manifest.json into r->manifest, cuts a
 * torn last line off cells.jsonl (so the next record starts on a line of its own) and opens it
 * for appending. */
int results_open(struct results *r, const char *dir, struct zb_error *err);
/* Write manifest.json atomically from r->manifest (call again to update it). */
int results_write_manifest(struct results *r, struct zb_error *err);
/* Append one record (a JSON object) as one fsync'd line of cells.jsonl. */
int results_append(struct results *r, json_t *record, struct zb_error *err);
void results_release(struct results *r);

/* Read RUNDIR/cells.jsonl into an array of records. A torn last line (a crash in the middle of a
 * write, no trailing newline) is dropped; any other bad line is an error naming its number. */
int results_read_cells(const char *dir, json_t **out, struct zb_error *err);

/* Sum of jobs[].<dir>.iops of a fio-shaped result (dir "read" or "write"); 0 if absent. */
double results_fio_iops(const json_t *fio, const char *dir);

/* A named metric of a fio-shaped result, summed over jobs: iops, read_iops, write_iops, bw,
 * read_bw, write_bw (bw in KiB/s). NAN if the name is unknown or the result has no jobs. */
double results_fio_metric(const json_t *fio, const char *name);

#endif
