/* `zbench compare`: two runs of the same cells (two images, two hosts), cell by cell and metric
 * by metric: % change and Welch's t-test over the repeats (docs/reports.md). */
#ifndef ZB_COMPARE_H
#define ZB_COMPARE_H

#include "report.h"

/* Config paths left out when matching cells across runs: they name the image, which is what a
 * comparison of two images varies on purpose. */
extern const char *const compare_ignored_paths[];

struct compare_pair {
	const struct report_cell *a, *b;
};

struct compare {
	const struct report_run *a, *b;
	struct compare_pair *pairs; /* in A's cell order */
	size_t n_pairs;
	size_t only_a, only_b; /* cells with no match in the other run */
};

/* Match the cells of two loaded runs. Fails, naming both runs, when they share no cell. */
int compare_runs(const struct report_run *a, const struct report_run *b, struct compare *out,
		 struct zb_error *err);

/* The comparison into an open document (report_doc_open()), plots through pl. */
void compare_render(struct report_doc *d, const struct compare *c, struct report_plotter *pl);

/* Write OUTDIR/compare.md, OUTDIR/compare.html and OUTDIR/compare-plots/, through
 * builder/outdir.h. */
int compare_write(const struct compare *c, const char *outdir, struct zb_error *err);

void compare_release(struct compare *c);

#endif
