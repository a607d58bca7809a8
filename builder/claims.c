/* `expect` claims (docs/reports.md, "Claims"): judged against a run's cells, and the report's
 * claims section. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_int.h"
#include "util.h"

void report_claim_eval_release(struct claim_eval *e)
{
	free(e->result);
	free(e->detail);
}

/* "case=hdd-slog 94.0 (n=1)" */
static void fmt_side(FILE *f, const struct report_cell *c, const struct stats_summary *s)
{
	char a[32];

	fprintf(f, "%s %s", c->summary, report_fmt_num(s->mean, a, sizeof(a)));
	if (s->n > 1)
		fprintf(f, " (n=%zu)", s->n);
}

/* Both cells of a compare or ratio pair agree on every axis the two sides do not name. */
static int cells_paired(const struct report_run *run, const struct report_cell *a,
			const struct report_cell *b, const json_t *side)
{
	for (size_t k = 0; k < run->n_axes; k++) {
		if (json_object_get(side, run->axes[k].name))
			continue;
		if (!a->axis_label || !b->axis_label || !a->axis_label[k] || !b->axis_label[k] ||
		    strcmp(a->axis_label[k], b->axis_label[k]))
			return 0;
	}
	return 1;
}

static int cell_in_where(const struct report_run *run, const struct report_cell *c,
			 const json_t *where)
{
	return !where || report_cell_matches(run, c, where);
}

/* compare and ratio: pairs of cells (lhs, rhs), one per combination of the free axes. */
static void claim_eval_pairs(const struct report_run *run, const json_t *claim, FILE *f,
			     int *groups, int *failed, int *nodata)
{
	const char *metric = report_str_get(claim, "metric");
	const json_t *where = json_object_get(claim, "where");
	const json_t *cmp = json_object_get(claim, "compare"),
		     *ratio = json_object_get(claim, "ratio");
	const json_t *form = cmp ? cmp : ratio;
	const json_t *lhs = json_object_get(form, cmp ? "lhs" : "num"),
		     *rhs = json_object_get(form, cmp ? "rhs" : "den");
	const char *op = report_str_get(cmp, "op");
	double margin = 0, lo = NAN, hi = NAN;

	report_num_get(cmp, "margin_percent", &margin);
	report_num_get(ratio, "min", &lo);
	report_num_get(ratio, "max", &hi);
	if (cmp && !(op && (!strcmp(op, "<") || !strcmp(op, ">")))) {
		/* a manifest is not a checked matrix: its claim may have any op, or none */
		(*groups)++;
		(*nodata)++;
		fputs("the claim's op is not < or >", f);
		return;
	}
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *a = &run->cells[i], *b = NULL;
		struct stats_summary sa, sb;
		struct stats_welch w;
		double *va, *vb = NULL, r;
		int ok;

		if (!cell_in_where(run, a, where) || !report_cell_matches(run, a, lhs))
			continue;
		for (size_t j = 0; j < run->n_cells && !b; j++)
			if (j != i && report_cell_matches(run, &run->cells[j], rhs) &&
			    cells_paired(run, a, &run->cells[j], lhs))
				b = &run->cells[j];
		(*groups)++;
		fprintf(f, "%s", *groups > 1 ? "; " : "");
		report_cell_metric(a, metric, &va, &sa);
		if (b)
			report_cell_metric(b, metric, &vb, &sb);
		if (!b || sa.n == 0 || sb.n == 0 || !(sb.mean > 0)) {
			(*nodata)++;
			fprintf(f, "%s: no %s for %s", a->summary, metric,
				!b	    ? "the other side (cell not in this run)"
				: sa.n == 0 ? "it"
					    : "the other side");
			free(va);
			free(vb);
			continue;
		}
		r = sa.mean / sb.mean;
		if (cmp) {
			ok = !strcmp(op, "<") ? sa.mean < sb.mean * (1 - margin / 100)
					      : sa.mean > sb.mean * (1 + margin / 100);
			fmt_side(f, a, &sa);
			fprintf(f, " %s ", op);
			fmt_side(f, b, &sb);
			fprintf(f, ": %+.1f%%", 100 * (r - 1));
			if (margin > 0)
				fprintf(f, " (needed %s%g%%)", !strcmp(op, "<") ? "-" : "+",
					margin);
		} else {
			ok = (isnan(lo) || r >= lo) && (isnan(hi) || r <= hi);
			fmt_side(f, a, &sa);
			fputs(" / ", f);
			fmt_side(f, b, &sb);
			fprintf(f, " = %.3gx (needed ", r);
			if (!isnan(lo) && !isnan(hi))
				fprintf(f, "%g..%gx)", lo, hi);
			else if (!isnan(lo))
				fprintf(f, "at least %gx)", lo);
			else
				fprintf(f, "at most %gx)", hi);
		}
		if (stats_welch(va, sa.n, vb, sb.n, &w) == 0)
			fprintf(f, ", Welch p=%.3g, %s", w.p,
				w.p < 0.05 ? "significant" : "not significant");
		else
			fputs(", n=1: no significance test", f);
		if (!ok)
			(*failed)++;
		free(va);
		free(vb);
	}
}

/* A ranking or peak claim along one axis, as claim_eval_axis() judges it group by group. */
struct axis_claim {
	const char *metric;
	const json_t *where, *rank, *peak;
	int k; /* the axis' index in the run */
	const struct report_axis *ax;
	int decreasing, want_min;
	double min_rho;
	char **labels; /* the axis values in order: the claim's list or the matrix order */
	size_t n_labels;
	char *at; /* peak.at as a label */
	FILE *f;
	int *groups, *failed, *nodata;
};

/* The group of cells that share first's values on every axis but the claim's (and are in its
 * where): their positions along the axis in x, metric means in y, cells in cs; each marked done.
 * Returns how many have the metric. */
static size_t axis_group(const struct report_run *run, const struct axis_claim *ac, size_t i,
			 const char *key, int *done, double *x, double *y,
			 const struct report_cell **cs)
{
	size_t m = 0;

	for (size_t j = i; j < run->n_cells; j++) {
		const struct report_cell *c = &run->cells[j];
		struct stats_summary s;
		double *vals;
		char *others;
		size_t pos;

		if (done[j] || !cell_in_where(run, c, ac->where) || !c->axis_label ||
		    !c->axis_label[ac->k])
			continue;
		others = report_cell_others(run, c, (size_t)ac->k);
		if (strcmp(others, key)) {
			free(others);
			continue;
		}
		free(others);
		done[j] = 1;
		for (pos = 0; pos < ac->n_labels && strcmp(ac->labels[pos], c->axis_label[ac->k]);
		     pos++)
			;
		if (pos == ac->n_labels)
			continue;
		if (report_cell_metric(c, ac->metric, &vals, &s) > 0) {
			x[m] = (double)pos;
			y[m] = s.mean;
			cs[m++] = c;
		}
		free(vals);
	}
	return m;
}

/* One group of a ranking claim: Spearman's rho of the means against the axis order. */
static void axis_judge_rank(const struct axis_claim *ac, const double *x, const double *y, size_t m)
{
	double rho = m >= 2 ? stats_spearman(x, y, m) : NAN,
	       signed_rho = ac->decreasing ? -rho : rho;
	char a[32];

	if (m < 2 || isnan(rho)) {
		(*ac->nodata)++;
		fprintf(ac->f, "%zu cells with %s: no ranking", m, ac->metric);
		return;
	}
	if (!(signed_rho >= ac->min_rho - 1e-9))
		(*ac->failed)++;
	if (m < ac->n_labels)
		fprintf(ac->f, "%zu of %zu values, ", m, ac->n_labels);
	fprintf(ac->f, "rho %.2f (needed %s %.2f):", rho,
		ac->decreasing ? "<=" : ">=", ac->decreasing ? -ac->min_rho : ac->min_rho);
	for (size_t q = 0; q < ac->n_labels; q++)
		for (size_t p = 0; p < m; p++)
			if ((size_t)x[p] == q)
				fprintf(ac->f, " %s=%s", ac->labels[q],
					report_fmt_num(y[p], a, sizeof(a)));
}

/* One group of a peak claim: the best value is at peak.at (or ties with it). */
static void axis_judge_peak(const struct axis_claim *ac, const double *y,
			    const struct report_cell **cs, size_t m)
{
	size_t best = 0, at_i = m, second = m;
	int k = ac->k, want_min = ac->want_min;
	char a[32];

	for (size_t p = 0; p < m; p++) {
		if (want_min ? y[p] < y[best] : y[p] > y[best])
			best = p;
		if (!strcmp(cs[p]->axis_label[k], ac->at))
			at_i = p;
	}
	for (size_t p = 0; p < m; p++)
		if (p != at_i && (second == m || (want_min ? y[p] < y[second] : y[p] > y[second])))
			second = p;
	if (at_i == m || m < 2) {
		(*ac->nodata)++;
		fprintf(ac->f, "no %s at %s=%s, or fewer than 2 cells", ac->metric, ac->ax->name,
			ac->at);
		return;
	}
	if (best != at_i && y[best] != y[at_i])
		(*ac->failed)++;
	fprintf(ac->f, "%s at %s=%s (%s), next best %s=", want_min ? "lowest" : "highest",
		ac->ax->name, cs[best]->axis_label[k], report_fmt_num(y[best], a, sizeof(a)),
		cs[second]->axis_label[k]);
	fprintf(ac->f, "%s; %s=%s: %+.1f%% against it", report_fmt_num(y[second], a, sizeof(a)),
		ac->ax->name, ac->at, 100 * (y[at_i] / y[second] - 1));
}

/* The axis values a claim ranks over, in order: its own list, or the matrix order. */
static void axis_labels(struct axis_claim *ac)
{
	const json_t *list = json_object_get(ac->rank, "values");

	if (json_array_size(list) > 0) {
		const json_t *v;
		size_t j;

		ac->labels = xcalloc(json_array_size(list), sizeof(char *));
		json_array_foreach (list, j, v)
			ac->labels[ac->n_labels++] = report_value_label(v);
	} else {
		ac->labels = xcalloc(ac->ax->n_categories + 1, sizeof(char *));
		for (size_t j = 0; j < ac->ax->n_categories; j++)
			ac->labels[ac->n_labels++] = xstrdup(ac->ax->categories[j]);
	}
}

/* ranking and peak: groups of cells along an axis, one per combination of the other axes. */
static void claim_eval_axis(const struct report_run *run, const json_t *claim, FILE *f, int *groups,
			    int *failed, int *nodata)
{
	struct axis_claim ac = { .metric = report_str_get(claim, "metric"),
				 .where = json_object_get(claim, "where"),
				 .rank = json_object_get(claim, "ranking"),
				 .peak = json_object_get(claim, "peak"),
				 .min_rho = 1,
				 .f = f,
				 .groups = groups,
				 .failed = failed,
				 .nodata = nodata };
	const json_t *form = ac.rank ? ac.rank : ac.peak;
	int *done;

	ac.k = report_axis_index(run,
				 report_str_get(form, "axis") ? report_str_get(form, "axis") : "");
	ac.ax = ac.k >= 0 ? &run->axes[ac.k] : NULL;
	ac.decreasing = ac.rank && report_str_get(ac.rank, "order") &&
			!strcmp(report_str_get(ac.rank, "order"), "decreasing");
	ac.want_min = ac.peak && report_str_get(ac.peak, "kind") &&
		      !strcmp(report_str_get(ac.peak, "kind"), "min");
	report_num_get(ac.rank, "min_rho", &ac.min_rho);
	if (!ac.ax) {
		(*groups)++;
		(*nodata)++;
		fprintf(f, "no axis \"%s\" in this run", report_kv(form, "axis"));
		return;
	}
	ac.at = ac.peak ? report_value_label(json_object_get(ac.peak, "at")) : NULL;
	axis_labels(&ac);
	done = xcalloc(run->n_cells + 1, sizeof(int));
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *first = &run->cells[i];
		double *x, *y;
		const struct report_cell **cs;
		char *key;
		size_t m;

		if (done[i] || !cell_in_where(run, first, ac.where))
			continue;
		x = xcalloc(run->n_cells + 1, sizeof(double));
		y = xcalloc(run->n_cells + 1, sizeof(double));
		cs = xcalloc(run->n_cells + 1, sizeof(*cs));
		key = report_cell_others(run, first, (size_t)ac.k);
		m = axis_group(run, &ac, i, key, done, x, y, cs);
		(*groups)++;
		fprintf(f, "%s%s%s", *groups > 1 ? "; " : "", *key ? key : "", *key ? ": " : "");
		if (ac.rank)
			axis_judge_rank(&ac, x, y, m);
		else
			axis_judge_peak(&ac, y, cs, m);
		free(key);
		free(x);
		free(y);
		free(cs);
	}
	if (*groups == 0) {
		(*groups)++;
		(*nodata)++;
		fputs("no cells", f);
	}
	for (size_t j = 0; j < ac.n_labels; j++)
		free(ac.labels[j]);
	free(ac.labels);
	free(done);
	free(ac.at);
}

void report_claim_eval(const struct report_run *run, const json_t *claim, struct claim_eval *e)
{
	int groups = 0, failed = 0, nodata = 0;
	size_t len = 0;
	FILE *f = open_memstream(&e->detail, &len);

	if (!report_str_get(claim, "metric")) {
		fputs("the claim names no metric", f);
		nodata = groups = 1;
	} else if (json_object_get(claim, "compare") || json_object_get(claim, "ratio")) {
		claim_eval_pairs(run, claim, f, &groups, &failed, &nodata);
	} else if (json_object_get(claim, "ranking") || json_object_get(claim, "peak")) {
		claim_eval_axis(run, claim, f, &groups, &failed, &nodata);
	} else {
		fputs("the claim has no compare, ratio, ranking or peak", f);
		nodata = groups = 1;
	}
	if (groups == 0) {
		fputs("no cells match the claim", f);
		nodata = 1;
	}
	fclose(f);
	e->held = failed == 0 && nodata == 0;
	if (failed)
		e->result = xasprintf(groups > 1 ? "not held (%d of %d groups)" : "not held",
				      failed, groups);
	else if (nodata)
		e->result = xstrdup("no data");
	else
		e->result = xstrdup("held");
}

int report_run_claims_held(const struct report_run *run)
{
	const json_t *claims = report_matrix_key(run, "expect"), *c;
	size_t i;
	int all = 1;

	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		report_claim_eval(run, c, &e);
		all &= e.held;
		report_claim_eval_release(&e);
	}
	return all;
}

/* The claim as a check (JUnit's testcase): failed when it did not hold or could not be judged. */
static void claim_check(struct report_doc *d, const json_t *c, const struct claim_eval *e)
{
	struct report_check chk = { .group = "claims", .name = report_kv(c, "claim") };
	char *text = xasprintf("%s: %s%s", report_kv(c, "metric"), e->detail, e->held ? "" : "\n");

	if (!e->held) {
		chk.failure = strncmp(e->result, "no data", 7) ? "claim-not-held" : "no-data";
		chk.message = e->result;
	}
	chk.text = text;
	report_doc_check(d, &chk);
	free(text);
}

void report_section_claims(struct report_doc *d, const struct report_run *run)
{
	const json_t *claims = report_matrix_key(run, "expect"), *c;
	static const char *const hdr[] = { "claim", "metric", "result", "margin and values" };
	size_t i, held = 0;

	if (json_array_size(claims) == 0)
		return;
	report_doc_heading(d, 2, "Claims");
	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		report_claim_eval(run, c, &e);
		held += e.held;
		report_claim_eval_release(&e);
	}
	report_doc_para(
	    d,
	    "%zu of %zu claims held. Each is judged on the mean over a cell's ok "
	    "repeats; a margin is our difference in %%, a ratio ours; with two or more "
	    "repeats on both sides, Welch's t-test says whether the difference is "
	    "significant (p < 0.05). A claim with free axes is judged in every group of "
	    "cells and holds only if it holds in all.",
	    held, json_array_size(claims));
	report_doc_table(d, 4, hdr);
	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };
		const char *row[4];

		report_claim_eval(run, c, &e);
		row[0] = report_kv(c, "claim");
		row[1] = report_kv(c, "metric");
		row[2] = e.result;
		row[3] = e.detail;
		report_doc_row(d, row);
		claim_check(d, c, &e);
		report_claim_eval_release(&e);
	}
	report_doc_table_end(d);
	json_array_foreach (claims, i, c)
		if (report_str_get(c, "note")) {
			report_doc_para(d, "Notes on the claims:");
			break;
		}
	json_array_foreach (claims, i, c)
		if (report_str_get(c, "note"))
			report_doc_para(d, "%s: %s", report_kv(c, "claim"), report_kv(c, "note"));
}
