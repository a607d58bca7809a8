/* zbench export: a run's results in the formats other tools read (docs/export.md).
 *
 * The run directory is untrusted input (docs/security.md, "Run directories"): it is read with
 * the bounded readers of builder/run/results.c, and every file export writes goes below the output
 * directory through builder/core/outdir.h (names from records through outdir_name_from(); never
 * through a symlink). Values from records reach the files as JSON built by jansson, numbers
 * printed by zbench, or CSV fields quoted by export_csv_field().
 */
#ifndef ZB_EXPORT_H
#define ZB_EXPORT_H

#include <jansson.h>
#include <stdio.h>

#include "core/error.h"

enum export_format {
	EXPORT_FIO,  /* per cell, phase and repeat a one-job fio JSON (fio-plot) and fio logs */
	EXPORT_CSV,  /* cells.csv: one row per cell, phase, repeat and metric */
	EXPORT_JSON, /* cells.json: the same rows as JSON */
	EXPORT_BMF,  /* bmf.json: Bencher's metric format (export_bench.c) */
	EXPORT_GAB,  /* gab-bigger.json, gab-smaller.json: github-action-benchmark's custom */
};

struct outdir;

/* The BMF or github-action-benchmark files of `records` (cells.jsonl) into `out`; *units says
 * how many benchmarks (cell, phase, side) they hold (builder/report/export_bench.c). */
int export_bench(const json_t *records, enum export_format format, const struct outdir *out,
		 size_t *units, struct zb_error *err);

/* Export the run directory `rundir` into `outdir` (created if missing; default
 * RUNDIR/export). `*units` says how many (cell, phase, repeat) results were written. Records
 * that are not ok or have no result are left out; a result export cannot use is skipped with a
 * warning on `warn`. */
int export_run(const char *rundir, enum export_format format, const char *outdir, FILE *warn,
	       size_t *units, struct zb_error *err);

/* One fio-shaped result as fio-plot reads it: the top level of `fio`, with its jobs[] merged
 * into one job (sums of I/O, bandwidth and IOPS; latency moments pooled; clat_ns.bins summed
 * and the percentiles computed again from them, else the largest of the jobs'), and that job's
 * "job options" complete: the jobs' own, then `options` (the phase's engine options as the
 * matrix gave them, as strings), then the engine's defaults of rw, bs, iodepth and numjobs.
 * NULL when `fio` has no jobs. A new object. */
json_t *export_fio_one_job(const json_t *fio, const json_t *options);

/* One result of a run's records: an ok record's own, or one of its phases'. */
struct export_result {
	const json_t *rec;    /* the record (outcome "ok") */
	const char *phase;    /* the phase's name; NULL: the record's own result (no phases) */
	const json_t *fio;    /* its fio-shaped result: an object */
	const json_t *result; /* what holds it: the phase's entry of phase_results, else rec */
};

/* Call `fn` on every ok record's results in `records` (cells.jsonl), in order: each entry of its
 * phase_results that has a name and a fio object when it has any, else its own fio object;
 * records of another outcome or with neither are passed over. Stops at the first call that
 * returns < 0 and returns -1 (fn filled its error); else 0. Both exports walk the same results
 * (export.c, export_bench.c). */
int export_results_foreach(const json_t *records,
			   int (*fn)(const struct export_result *r, void *ctx), void *ctx);

/* Write `s` as one CSV field: quoted when it holds a comma, quote, CR or LF, or begins with a
 * character a spreadsheet takes as a formula (= + - @ TAB), which is then prefixed with '; other
 * control characters become spaces. */
void export_csv_field(FILE *f, const char *s);

#endif
