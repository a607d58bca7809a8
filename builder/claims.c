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

/* ranking and peak: groups of cells along an axis, one per combination of the other axes. */
static void claim_eval_axis(const struct report_run *run, const json_t *claim, FILE *f, int *groups,
			    int *failed, int *nodata)
{
	const char *metric = report_str_get(claim, "metric");
	const json_t *where = json_object_get(claim, "where");
	const json_t *rank = json_object_get(claim, "ranking"),
		     *peak = json_object_get(claim, "peak");
	const json_t *form = rank ? rank : peak, *list = json_object_get(rank, "values");
	int k = report_axis_index(run,
				  report_str_get(form, "axis") ? report_str_get(form, "axis") : "");
	const struct report_axis *ax = k >= 0 ? &run->axes[k] : NULL;
	int decreasing = rank && report_str_get(rank, "order") &&
			 !strcmp(report_str_get(rank, "order"), "decreasing");
	int want_min =
	    peak && report_str_get(peak, "kind") && !strcmp(report_str_get(peak, "kind"), "min");
	double min_rho = 1;
	char **labels = NULL, *at = peak ? report_value_label(json_object_get(peak, "at")) : NULL;
	size_t n_labels = 0;
	int *done = xcalloc(run->n_cells + 1, sizeof(int));

	report_num_get(rank, "min_rho", &min_rho);
	if (!ax) {
		(*groups)++;
		(*nodata)++;
		fprintf(f, "no axis \"%s\" in this run", report_kv(form, "axis"));
		free(done);
		free(at);
		return;
	}
	if (json_array_size(list) > 0) {
		const json_t *v;
		size_t j;

		labels = xcalloc(json_array_size(list), sizeof(char *));
		json_array_foreach (list, j, v)
			labels[n_labels++] = report_value_label(v);
	} else {
		labels = xcalloc(ax->n_categories + 1, sizeof(char *));
		for (size_t j = 0; j < ax->n_categories; j++)
			labels[n_labels++] = xstrdup(ax->categories[j]);
	}
	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *first = &run->cells[i];
		char *key, *others;
		double *x = xcalloc(run->n_cells + 1, sizeof(double)),
		       *y = xcalloc(run->n_cells + 1, sizeof(double));
		const struct report_cell **cs = xcalloc(run->n_cells + 1, sizeof(*cs));
		size_t m = 0;
		char a[32];

		if (done[i] || !cell_in_where(run, first, where))
			goto next;
		key = report_cell_others(run, first, (size_t)k);
		for (size_t j = i; j < run->n_cells; j++) {
			const struct report_cell *c = &run->cells[j];
			struct stats_summary s;
			double *vals;
			size_t pos;

			if (done[j] || !cell_in_where(run, c, where) || !c->axis_label ||
			    !c->axis_label[k])
				continue;
			others = report_cell_others(run, c, (size_t)k);
			if (strcmp(others, key)) {
				free(others);
				continue;
			}
			free(others);
			done[j] = 1;
			for (pos = 0; pos < n_labels && strcmp(labels[pos], c->axis_label[k]);
			     pos++)
				;
			if (pos == n_labels)
				continue;
			if (report_cell_metric(c, metric, &vals, &s) > 0) {
				x[m] = (double)pos;
				y[m] = s.mean;
				cs[m++] = c;
			}
			free(vals);
		}
		(*groups)++;
		fprintf(f, "%s%s%s", *groups > 1 ? "; " : "", *key ? key : "", *key ? ": " : "");
		if (rank) {
			double rho = m >= 2 ? stats_spearman(x, y, m) : NAN,
			       signed_rho = decreasing ? -rho : rho;

			if (m < 2 || isnan(rho)) {
				(*nodata)++;
				fprintf(f, "%zu cells with %s: no ranking", m, metric);
			} else {
				if (!(signed_rho >= min_rho - 1e-9))
					(*failed)++;
				if (m < n_labels)
					fprintf(f, "%zu of %zu values, ", m, n_labels);
				fprintf(f, "rho %.2f (needed %s %.2f):", rho,
					decreasing ? "<=" : ">=", decreasing ? -min_rho : min_rho);
				for (size_t q = 0; q < n_labels; q++)
					for (size_t p = 0; p < m; p++)
						if ((size_t)x[p] == q)
							fprintf(f, " %s=%s", labels[q],
								report_fmt_num(y[p], a, sizeof(a)));
			}
		} else {
			size_t best = 0, at_i = m, second = m;

			for (size_t p = 0; p < m; p++) {
				if (want_min ? y[p] < y[best] : y[p] > y[best])
					best = p;
				if (!strcmp(cs[p]->axis_label[k], at))
					at_i = p;
			}
			for (size_t p = 0; p < m; p++)
				if (p != at_i && (second == m ||
						  (want_min ? y[p] < y[second] : y[p] > y[second])))
					second = p;
			if (at_i == m || m < 2) {
				(*nodata)++;
				fprintf(f, "no %s at %s=%s, or fewer than 2 cells", metric,
					ax->name, at);
			} else {
				if (best != at_i && y[best] != y[at_i])
					(*failed)++;
				fprintf(f, "%s at %s=%s (%s), next best %s=",
					want_min ? "lowest" : "highest", ax->name,
					cs[best]->axis_label[k],
					report_fmt_num(y[best], a, sizeof(a)),
					cs[second]->axis_label[k]);
				fprintf(f, "%s; %s=%s: %+.1f%% against it",
					report_fmt_num(y[second], a, sizeof(a)), ax->name, at,
					100 * (y[at_i] / y[second] - 1));
			}
		}
		free(key);
	next:
		free(x);
		free(y);
		free(cs);
	}
	if (*groups == 0) {
		(*groups)++;
		(*nodata)++;
		fputs("no cells", f);
	}
	for (size_t j = 0; j < n_labels; j++)
		free(labels[j]);
	free(labels);
	free(done);
	free(at);
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
