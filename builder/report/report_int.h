/* Shared between the report's rooms (report_model.c, report_doc.c, plot.c, report_sections.c,
 * claims.c, junit.c, report.c) and nothing else: the run model's small readers and queries, the
 * sections, and claim evaluation. The public interface is builder/report/report.h. */
#ifndef ZB_REPORT_INT_H
#define ZB_REPORT_INT_H

#include <jansson.h>

#include "core/stats.h"
#include "report.h"

/* ---- report_model.c ---------------------------------------------------------------------- */

/* obj.key as a string; NULL when absent or not a string. */
const char *report_str_get(const json_t *obj, const char *key);
/* As report_str_get(), "?" when absent: for showing. */
const char *report_kv(const json_t *obj, const char *key);
/* obj.key as a number: 0 and *out, or -1 when absent or not a number. */
int report_num_get(const json_t *obj, const char *key, double *out);
/* The text a summary or a table shows for a value: strings as they are, numbers as written.
 * malloc'd. */
char *report_value_label(const json_t *v);
/* The run's matrix (the copy in the manifest): content.<key>, NULL if absent. */
const json_t *report_matrix_key(const struct report_run *run, const char *key);
/* The index of the run axis called `name`, -1 if none. */
int report_axis_index(const struct report_run *run, const char *name);
/* Does the cell have every axis value of `match` (axis names to JSON values)? */
int report_cell_matches(const struct report_run *run, const struct report_cell *c,
			const json_t *match);
/* A named metric (builder/matrix/metrics.h, or "iozone:TEST") over a cell's ok repeats: the count,
 * *vals (malloc'd, the caller frees) and their summary in *s. */
size_t report_cell_metric(const struct report_cell *c, const char *metric, double **vals,
			  struct stats_summary *s);

/* Did the cell's workload do I/O in metric m's direction? 0 when every ok repeat's IOPS in that
 * direction is 0 (a write-only workload has no read series to plot); 1 when it did or no repeat
 * says. */
int report_cell_did(const struct report_cell *c, int m);

/* ---- report_sections.c ------------------------------------------------------------------- */

void report_section_environment(struct report_doc *d, const struct report_run *run);
void report_section_results(struct report_doc *d, const struct report_run *run);
/* A report_check per cell: did every repeat end ok? */
void report_section_cell_checks(struct report_doc *d, const struct report_run *run);
void report_section_failures(struct report_doc *d, const struct report_run *run);
void report_section_references(struct report_doc *d, const struct report_run *run);

/* ---- report_cell.c ----------------------------------------------------------------------- */

/* The stem of cell c's page under report-cells/ ("003-ID", made safe: outdir_name_from()); the
 * position keeps it unique. malloc'd. */
char *report_cell_page(const struct report_run *run, const struct report_cell *c);
/* Cell c's page: its metrics and its samples and telemetry over time, plots through pl. */
void report_cell_render(struct report_doc *d, const struct report_run *run,
			const struct report_cell *c, struct report_plotter *pl);
/* ---- report_witness.c -------------------------------------------------------------------- */

/* "What was measured": per measured phase, IOPS beside the witness figures (only when a record
 * has them). */
void report_section_witness(struct report_doc *d, const struct report_run *run);
/* At the report's top: report_witness_warnings(), one paragraph each. */
void report_section_warnings(struct report_doc *d, const struct report_run *run);

/* ---- claims.c ---------------------------------------------------------------------------- */

/* One claim judged: `held` only when every group could be judged and held. */
struct claim_eval {
	int held;
	char *result; /* "held", "not held", "no data" */
	char *detail; /* per group: values, margin, significance; "; "-separated */
};

/* Judge one `expect` claim of the run's matrix; release *e with report_claim_eval_release(). */
void report_claim_eval(const struct report_run *run, const json_t *claim, struct claim_eval *e);
void report_claim_eval_release(struct claim_eval *e);

/* A reference's shape verdict (builder/report/report_shape.c): Spearman's rho of ours against
 * the published values within each of the study's groups (`values[].group`), "same shape" only
 * when every group agrees, else "mixed: ..."; without groups, over all its cells ("same shape",
 * "opposite shape", "no clear agreement", "n/a"). Malloc'd; *rho the mean over groups. */
char *report_reference_verdict(const struct report_run *run, const json_t *r, double *rho);
/* Its rows in the report's shape table: per group and within the groups, or over all cells
 * and along each axis. */
void report_reference_shape_rows(struct report_doc *d, const struct report_run *run, size_t i,
				 const json_t *r);
void report_section_claims(struct report_doc *d, const struct report_run *run);

#endif
