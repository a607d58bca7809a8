/* Reports over run directories (docs/reports.md): `zbench report` (one run) and, sharing the
 * model and the renderers below, `zbench compare` (two runs, builder/report/compare.c).
 *
 * A run is read into a struct report_run: its manifest, its records grouped into cells, the
 * metrics of each cell's ok repeats and their statistics, and the matrix's axes with each cell's
 * value on them. Records are read defensively: unknown keys are ignored, a metric the record
 * does not have is absent (never 0), and a record without a cell id is counted and skipped.
 */
#ifndef ZB_REPORT_H
#define ZB_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "core/error.h"
#include "core/stats.h"
#include "matrix/metrics.h"
#include "run/results.h"

/* The report's metrics: the first rows of builder/matrix/metrics.h's METRIC_LIST, as
 * RM_x = METRIC_x; their definitions are metric_table[RM_x]. The timing metrics with a figure
 * come first (RM_FIGURED of them: the results table's columns and the plots), then the counts
 * (the counts table), RM_COUNT in all. */
#define RM_ALIAS_(id, key, how, title, unit, field, r, w, fig, hi) RM_##id = METRIC_##id,
enum report_metric {
	METRIC_LIST(RM_ALIAS_) RM_FIGURED = METRIC_FIGURED,
	RM_COUNT = METRIC_REPORTED
};
#undef RM_ALIAS_

/* The measured phases that did not measure the disks (report_witness.c): a cell's phase whose
 * reads reached the disks for less than half (over the engine's timed window where the record
 * has it), or whose writes reached them for less than half within the window, means over the
 * cell's ok repeats. Each a sentence naming the cell, the phase, the share, the reason (the ARC,
 * holes or the page cache, memory past the window) and the usual fix; *n of them, malloc'd
 * (report_witness_warnings_free). The end of `zbench run` prints them, the report's top shows
 * them, and `zbench run --strict` fails on them. */
struct report_run;
char **report_witness_warnings(const struct report_run *run, size_t *n);
void report_witness_warnings_free(char **w, size_t n);

/* "read bw (KiB/s)", "read IOPS": a table header. malloc'd. */
char *report_metric_header(enum report_metric m);

/* One record of cells.jsonl. Borrowed pointers into the run's records. */
struct report_attempt {
	const json_t *rec;
	int repeat, attempt;
	const char *outcome; /* "unknown" when the record has none */
	const char *detail;  /* NULL when the record has none */
	int superseded;	     /* a later attempt of the same repeat exists */
};

struct report_cell {
	const char *id;
	int index; /* -1 when no record said */
	const char *summary;
	const json_t *config; /* from the cell's first record; NULL if none had one */
	struct report_attempt *attempts;
	size_t n_attempts;
	size_t n_repeats, n_ok;	  /* counting the last attempt of each repeat */
	char *outcome;		  /* "ok", "panic", or "2 ok, 1 timeout" */
	double *values[RM_COUNT]; /* metric values of the ok repeats that have the metric */
	size_t n_values[RM_COUNT];
	struct stats_summary stats[RM_COUNT];
	char **axis_label; /* per run axis: the cell's value as text, NULL if unknown */
	double *axis_x;	   /* per run axis: the value, or the category's position */
};

struct report_axis {
	char *name;
	char *path;   /* into a record's config; NULL for the "case" pseudo-axis */
	int numeric;  /* every known value is a number: x is the value itself */
	int logscale; /* numeric, positive, spanning a factor of 16 or more (threads 1..1024) */
	char **categories; /* otherwise: the labels in matrix order, x = position */
	size_t n_categories;
};

struct report_run {
	char *dir;
	json_t *manifest; /* an empty object if manifest.json is missing */
	json_t *records;
	const char *name; /* the matrix name, or the directory's base name */
	struct report_axis *axes;
	size_t n_axes;
	struct report_cell *cells; /* sorted by index, then id */
	size_t n_cells;
	size_t n_skipped;		/* records without a cell id */
	struct results_skipped skipped; /* lines of cells.jsonl that were not records */
	/* compare_runs() matches this run's cells by id, not by configuration: a side of a run
	 * whose sides set something (compare_sides_load()): its cells keep the matrix cell's id
	 * whatever the side sets */
	int match_by_id;
};

/* Read RUNDIR/manifest.json (optional) and RUNDIR/cells.jsonl (required, at least one record),
 * as builder/run/results.h reads them: never through a symlink; lines that are not records are
 * skipped into run->skipped for the command to show. */
int report_run_load(const char *dir, struct report_run *run, struct zb_error *err);
/* As report_run_load(), with phase `phase` of a phased workload as each record's result
 * (builder/matrix/phases.h, phases_select()); NULL: the records as they are. */
int report_run_load_phase(const char *dir, const char *phase, struct report_run *run,
			  struct zb_error *err);
/* The run model from a manifest (an object) and records (an array), both of which it takes
 * over (released on failure too); `dir` names the run. */
int report_run_from(struct report_run *run, const char *dir, json_t *manifest, json_t *records,
		    struct zb_error *err);
void report_run_release(struct report_run *run);

/* Every cell's every repeat ended ok (and there is at least one cell). */
int report_run_all_ok(const struct report_run *run);

/* Every `expect` claim of the run's matrix (the copy in the manifest) held; 1 when there are
 * none. A claim that cannot be judged (a cell missing or failed) did not hold. */
int report_run_claims_held(const struct report_run *run);

enum {
	REPORT_JSON = 1, /* also OUTDIR/report.json (report_json()) */
};

/* Write OUTDIR/report.md, OUTDIR/report.html and the plots under OUTDIR/report-plots/ (file
 * names from axis names made safe: outdir_name_from()), each cell's page as
 * OUTDIR/report-cells/NNN-ID.md and .html (plots under NNN-ID-plots/), and with REPORT_JSON
 * OUTDIR/report.json; all through builder/core/outdir.h. */
int report_write(const struct report_run *run, const char *outdir, int flags, struct zb_error *err);

/* The report model as JSON (docs/reports.md, "report.json"): the run, each cell with its axis
 * values, outcome and metrics (n, mean, sd, 95% CI, the values), each claim judged. */
json_t *report_json(const struct report_run *run);
int report_write_json(const struct report_run *run, const struct outdir *out, struct zb_error *err);

/* JUnit XML: one testcase per cell, failed cells as failures with their detail, one per claim.
 * report_junit() returns the document (malloc'd, its length in *len). */
char *report_junit(const struct report_run *run, size_t *len);
int report_write_junit(const struct report_run *run, const char *path, struct zb_error *err);

/* A cell's value at a config path ("pool.properties.ashift", "disks[1].size"); NULL if absent. */
const json_t *report_config_get(const json_t *config, const char *path);

/* ---- shared by report.c and compare.c ------------------------------------------------------ */

/* A document: the sections write it once, through report_doc_*(), and each of its writers turns
 * the calls into one format. A format is one const ops table (report_md.c, report_html.c,
 * junit.c); an op a format has no use for is NULL. Text arguments are plain text: the writer
 * escapes them for its format, and nothing else does. */
struct report_plot;
struct report_writer;

/* A verdict for machine readers (JUnit): a cell or claim that passed or failed. Document formats
 * leave it out (the sections say the same in their tables). */
struct report_check {
	const char *group;   /* "cells", "claims": JUnit's classname zbench.NAME.GROUP */
	const char *name;    /* the testcase */
	const char *failure; /* the failure's type ("boot-fail", "claim-not-held"); NULL: passed */
	const char *message; /* the failure's one line */
	const char *text;    /* the failure's body, or the output of one that passed; NULL: none */
};

struct report_writer_ops {
	const char *ext; /* "md": the file's suffix, and of the links between documents */
	/* title: the document's heading; name: the run's (JUnit's suite zbench.NAME) */
	void (*begin)(struct report_writer *w, const char *title, const char *name);
	void (*heading)(struct report_writer *w, int level, const char *text);
	void (*para)(struct report_writer *w, const char *text);
	/* a paragraph that is one link to the document `target` (a relative path without suffix:
	 * the writer adds its own ext) */
	void (*link)(struct report_writer *w, const char *text, const char *target);
	void (*table)(struct report_writer *w, size_t ncols, const char *const *headers);
	/* links: NULL, or per cell NULL or a target as for link() */
	void (*row)(struct report_writer *w, const char *const *cells, const char *const *links);
	void (*table_end)(struct report_writer *w);
	void (*pre)(struct report_writer *w, const char *text);
	/* a plot: svg (or NULL, and `missing` says why there is none), filed at rel_path */
	void (*image)(struct report_writer *w, const char *alt, const char *rel_path,
		      const char *svg, const char *missing);
	void (*check)(struct report_writer *w, const struct report_check *c);
	/* The whole document (malloc'd); w->f is closed and w->buf handed over or freed. */
	char *(*end)(struct report_writer *w);
};

/* One writer's state: its ops and the document so far. */
struct report_writer {
	const struct report_writer_ops *ops;
	FILE *f; /* a memstream into buf */
	char *buf;
	size_t len;
	size_t table_cols;
	size_t checks, failed; /* report_check()s written, of which failed */
	char *name;	       /* begin()'s name, for writers that need it at the end */
};

extern const struct report_writer_ops report_md_ops, report_html_ops, report_junit_ops;

#define REPORT_DOC_WRITERS 4

struct report_doc {
	struct report_writer w[REPORT_DOC_WRITERS];
	size_t n;
};

/* Open a document written by each of ops[0..n-1] (n <= REPORT_DOC_WRITERS). */
void report_doc_open_as(struct report_doc *d, const char *title, const char *name,
			const struct report_writer_ops *const *ops, size_t n);
/* report_doc_open_as() with Markdown and HTML, named after the title. */
void report_doc_open(struct report_doc *d, const char *title);
void report_doc_heading(struct report_doc *d, int level, const char *text);
void report_doc_para(struct report_doc *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void report_doc_link(struct report_doc *d, const char *text, const char *target);
void report_doc_table(struct report_doc *d, size_t ncols, const char *const *headers);
void report_doc_row(struct report_doc *d, const char *const *cells);
void report_doc_row_links(struct report_doc *d, const char *const *cells, const char *const *links);
void report_doc_table_end(struct report_doc *d);
void report_doc_pre(struct report_doc *d, const char *text);
/* A plot: in Markdown a link to `rel_path`, in HTML the SVG itself as a data: URI. When svg is
 * NULL, `missing` says why there is no plot. */
void report_doc_plot(struct report_doc *d, const char *alt, const char *rel_path, const char *svg,
		     const char *missing);
void report_doc_check(struct report_doc *d, const struct report_check *c);
/* Finish and write OUTDIR/<stem>.<ext> for each writer. */
int report_doc_write(struct report_doc *d, const struct outdir *out, const char *stem,
		     struct zb_error *err);
/* Finish without writing: writer i's document in docs[i] (malloc'd). */
void report_doc_finish(struct report_doc *d, char **docs);

/* Where a document's plots go. draw() renders p and puts it in the document, filed as `file`
 * (one safe component) in the plot directory, or says in the document why there is no plot. */
struct report_plotter {
	void (*draw)(struct report_plotter *pl, struct report_doc *d, const struct report_plot *p,
		     const char *file);
	const char *rel_dir; /* the plot directory as the Markdown links it: "report-plots" */
	/* the files plotter's own: OUTDIR held, the plot directory opened at the first plot */
	const struct outdir *out;
	struct outdir dir;
	int opened;
	struct zb_error why; /* why the plot directory could not be opened */
};

/* The plotter zbench uses: gnuplot, and the SVGs written to OUTDIR/<rel_dir>/ (created at the
 * first plot, never through a symlink). */
void report_plotter_files(struct report_plotter *pl, const struct outdir *out, const char *rel_dir);
void report_plotter_release(struct report_plotter *pl);
/* A plotter that draws nothing (for documents without images: JUnit); the document says so. */
void report_plotter_none(struct report_plotter *pl);

/* The report of one run into an open document (report_doc_open()), plots through pl. */
void report_render(struct report_doc *d, const struct report_run *run, struct report_plotter *pl);

/* Render a document into OUTDIR (created if missing): `render(d, arg, pl)` fills it, plots go to
 * OUTDIR/<stem>-plots/, the document to OUTDIR/<stem>.md and .html. The one write path of report
 * and compare; on error, err says what failed (the caller adds which run). */
int report_publish(const char *outdir, const char *title, const char *stem,
		   void (*render)(struct report_doc *d, const void *arg, struct report_plotter *pl),
		   const void *arg, struct zb_error *err);

/* A number in 3-4 significant digits without an exponent: "0.0123", "4.56", "123", "12346". */
const char *report_fmt_num(double v, char *buf, size_t len);

struct report_series {
	char *title;
	size_t n;
	double *x, *y, *err; /* err: half-height of the error bar, 0 for none */
};

struct report_plot {
	const char *title, *ylabel;
	const struct report_axis *xaxis;
	struct report_series *series;
	size_t n_series;
	int zero_line; /* draw y = 0 (for % change) */
};

void report_series_add(struct report_plot *p, const char *title, double x, double y, double err);
void report_plot_release(struct report_plot *p);

/* The gnuplot script that draws p from the data file `data_path`. Every string in it (titles,
 * labels, keys, the file name) is a single-quoted literal, whatever the run's records and
 * manifest hold; numbers are printed from doubles, never copied from text. */
void report_plot_script(const struct report_plot *p, const char *data_path, FILE *f);
/* Render with gnuplot (argv, no shell; data and script through files in a private temporary
 * directory under $TMPDIR) into an SVG document in *svg (malloc'd). */
int report_plot_render(const struct report_plot *p, char **svg, struct zb_error *err);

/* The distinct string values of record.<outer>.<inner> over all records, sorted, joined by ", "
 * ("2.1.11-1+deb12u1"); "?" when no record has one. malloc'd. */
char *report_run_distinct(const struct report_run *run, const char *outer, const char *inner);

/* "ashift=9, bs=4k": the cell's values on every axis but `skip` (-1 for none). */
char *report_cell_others(const struct report_run *run, const struct report_cell *c, size_t skip);

#endif
