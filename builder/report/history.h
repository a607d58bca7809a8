/* `zbench history`: a results history in SQLite (docs/history.md), an embedded database file that
 * lives beside the runs (default runs/history.db). One row per run, one per (run, cell, phase,
 * side, repeat, metric) result; the timing and count metrics of builder/matrix/metrics.h of
 * every ok record.
 *
 * The file is someone else's data until proven ours: it is opened without following a symlink,
 * and refused with a clear error (and left as it is) when it is not an SQLite database or is
 * corrupt, when its application_id is not ours, or when another writer holds it past a timeout.
 * A run is added in one transaction: a kill leaves the whole run or none of it. */
#ifndef ZB_HISTORY_H
#define ZB_HISTORY_H

#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

#define HISTORY_DEFAULT_DB "runs/history.db"
#define HISTORY_APP_ID	   0x7a626869 /* "zbhi": PRAGMA application_id of our files */
#define HISTORY_VERSION	   1	      /* PRAGMA user_version */

struct sqlite3;

struct history {
	struct sqlite3 *db;
	char *path;
};

/* Open (with `create`, create if missing) the history at `path` and check it is ours. */
int history_open(struct history *h, const char *path, int create, struct zb_error *err);
void history_close(struct history *h);

/* Add the run directory `rundir` (read as report_run_load() reads it: bounded, no symlinks,
 * bad lines skipped). Refused: a run already in the history (the same start time, matrix, image and
 * host), a run without a start time or matrix hash in its manifest, a run still running.
 * *rows says how many results were added. */
int history_add(struct history *h, const char *rundir, size_t *rows, struct zb_error *err);

/* One point of a series: a run's mean of the metric over the cell's ok repeats. */
struct history_point {
	double t;  /* the run's start (Unix time) */
	char *run; /* the run directory as added */
	double value;
	size_t n; /* repeats averaged */
};

/* A metric of one (cell, phase, side) over the runs, oldest first. */
struct history_series {
	char *cell, *summary, *phase, *side;
	struct history_point *pts;
	size_t n;
	/* the change point (history_show.c): the index of the first point after the change, or
	 * 0 when none was found; its permutation p and the means before and after */
	size_t change;
	double change_p, before, after;
};

/* The series of `metric` (a key of either table), of cell `cell` only when not NULL.
 * history_series_free() frees them. */
int history_series(struct history *h, const char *metric, const char *cell,
		   struct history_series **out, size_t *n, struct zb_error *err);
void history_series_free(struct history_series *s, size_t n);

/* Find one change in the mean of x[0..n-1] (history_show.c): the split that maximises the
 * standardised difference of the means (at least `min_seg` points a side), tested by `perms`
 * seeded permutations of the series. Returns the first index after the change, or 0 when p is
 * not below alpha (or n < 2 min_seg); *p says p. */
size_t history_change_point(const double *x, size_t n, size_t min_seg, double alpha, unsigned perms,
			    double *p);

/* Print the series as a table on `f`, and write DIR/history.html (an inline SVG plot per
 * series, the change point marked) through builder/core/outdir.h. */
struct outdir;
int history_show(struct history_series *s, size_t n, const char *metric, FILE *f,
		 const char *outdir, struct zb_error *err);

#endif
