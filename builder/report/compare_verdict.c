/* `zbench compare`'s verdicts in tiers (builder/report/compare_verdict.h, docs/compare.md
 * "Verdicts"): count metrics against a tolerance, timing metrics by the paired permutation test
 * with a noise threshold, and the gates judged on them. */
#include "matrix/metrics.h"
#include "compare_verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report.h"

const char *verdict_name(enum verdict v)
{
	static const char *const names[] = {
		[VERDICT_SAME] = "same",
		[VERDICT_DIFFERENT] = "different",
		[VERDICT_UNDECIDED] = "undecided",
	};

	return names[v];
}

/* --- deciding ---------------------------------------------------------------------------- */

enum verdict verdict_timing(const struct perm_result *r, double p, double alpha, double pct,
			    int below)
{
	double change, lo, hi, th = pct / 100;

	if (r->n < 2 || isnan(p) || isnan(r->ratio))
		return VERDICT_UNDECIDED;
	change = r->ratio - 1;
	lo = r->ci_lo - 1;
	hi = r->ci_hi - 1;
	if (below > 0) /* 'M < pct': failed below pct, passed when surely above it */
		return p < alpha && change < th ? VERDICT_DIFFERENT
		       : lo >= th		? VERDICT_SAME
						: VERDICT_UNDECIDED;
	if (below < 0)
		return p < alpha && change > th ? VERDICT_DIFFERENT
		       : hi <= th		? VERDICT_SAME
						: VERDICT_UNDECIDED;
	th = fabs(th);
	if (p < alpha && fabs(change) > th)
		return VERDICT_DIFFERENT;
	return lo >= -th && hi <= th ? VERDICT_SAME : VERDICT_UNDECIDED;
}

/* The relative change of the means; +-INFINITY from 0, 0 from 0 to 0. */
static double count_change(double a, double b)
{
	if (a == 0)
		return b == 0 ? 0 : (b > 0 ? INFINITY : -INFINITY);
	return (b - a) / fabs(a);
}

enum verdict verdict_count(double mean_a, double mean_b, double pct, int below)
{
	double change = count_change(mean_a, mean_b), th = pct / 100;

	if (isnan(change))
		return VERDICT_UNDECIDED;
	if (below > 0)
		return change < th ? VERDICT_DIFFERENT : VERDICT_SAME;
	if (below < 0)
		return change > th ? VERDICT_DIFFERENT : VERDICT_SAME;
	return fabs(change) > fabs(th) ? VERDICT_DIFFERENT : VERDICT_SAME;
}

/* --- values of the repeats --------------------------------------------------------------- */

/* The ok, final record of repeat r in cell c, or NULL. */
static const json_t *repeat_record(const struct report_cell *c, int r)
{
	for (size_t i = 0; i < c->n_attempts; i++) {
		const struct report_attempt *a = &c->attempts[i];

		if (!a->superseded && a->repeat == r && !strcmp(a->outcome, "ok"))
			return a->rec;
	}
	return NULL;
}

static int row_value(const json_t *rec, size_t m, double *v)
{
	if (!rec || metric_read(rec, (enum metric_id)m, v) < 0 || !isfinite(*v))
		return -1;
	return 0;
}

/* The distinct repeat numbers of a cell's final attempts, in order of appearance. */
static size_t cell_repeats(const struct report_cell *c, int *out)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_attempts; i++) {
		size_t k;

		if (c->attempts[i].superseded)
			continue;
		for (k = 0; k < n && out[k] != c->attempts[i].repeat; k++)
			;
		if (k == n)
			out[n++] = c->attempts[i].repeat;
	}
	return n;
}

size_t compare_paired_values(const struct compare_pair *p, size_t m, double **a, double **b)
{
	int *reps = xcalloc(p->a->n_attempts + 1, sizeof(int));
	size_t nr = cell_repeats(p->a, reps), k = 0;

	*a = xcalloc(nr + 1, sizeof(double));
	*b = xcalloc(nr + 1, sizeof(double));
	for (size_t i = 0; i < nr; i++)
		if (row_value(repeat_record(p->a, reps[i]), m, &(*a)[k]) == 0 &&
		    row_value(repeat_record(p->b, reps[i]), m, &(*b)[k]) == 0)
			k++;
	free(reps);
	return k;
}

/* A timing row: the repeats of A and B paired by number. */
static void timing_row(const struct compare_pair *p, struct verdict_row *row,
		       const struct verdict_opts *o)
{
	double *a, *b, sa = 0, sb = 0;
	size_t k = compare_paired_values(p, row->metric, &a, &b);

	for (size_t i = 0; i < k; i++) {
		sa += a[i];
		sb += b[i];
	}
	row->n_a = row->n_b = k;
	row->mean_a = k ? sa / (double)k : NAN;
	row->mean_b = k ? sb / (double)k : NAN;
	perm_paired_log(a, b, k, o->alpha, o->seed, &row->perm);
	row->change_pct = 100 * (row->perm.ratio - 1);
	row->mde_pct = 100 * row->perm.mde;
	row->need_pairs = perm_min_pairs(o->alpha);
	free(a);
	free(b);
}

/* The mean of a count over a cell's ok repeats; *n how many. */
static double count_mean(const struct report_cell *c, size_t m, size_t *n)
{
	double sum = 0, v;

	*n = 0;
	for (size_t i = 0; i < c->n_attempts; i++)
		if (!c->attempts[i].superseded && !strcmp(c->attempts[i].outcome, "ok") &&
		    row_value(c->attempts[i].rec, m, &v) == 0) {
			sum += v;
			(*n)++;
		}
	return *n ? sum / (double)*n : NAN;
}

/* --- the analysis ------------------------------------------------------------------------ */

static int in_family(const struct verdict_row *r, int gated)
{
	return !r->is_count && (r->gate >= 0) == gated;
}

/* Holm over the timing rows of one family (gated or not). */
static void holm_family(struct compare_tiers *t, int gated)
{
	double *p = xcalloc(t->n_rows + 1, sizeof(double));

	for (size_t i = 0; i < t->n_rows; i++)
		p[i] = in_family(&t->rows[i], gated) ? t->rows[i].perm.p : NAN;
	stats_holm(p, t->n_rows, p);
	for (size_t i = 0; i < t->n_rows; i++)
		if (in_family(&t->rows[i], gated))
			t->rows[i].p_adj = p[i];
	free(p);
}

/* The rows of pair i: every metric of the report's the pair has, and every gated one; a count
 * by its means, a timing metric by its paired repeats. */
static void add_rows(const struct compare *c, struct compare_tiers *t, size_t i)
{
	const struct compare_pair *p = &c->pairs[i];

	for (size_t m = 0; m < METRIC_COUNT; m++) {
		struct verdict_row *r = &t->rows[t->n_rows];
		int g = compare_gate_find(t->gates, t->n_gates, m);

		if (m >= RM_COUNT && g < 0)
			continue;
		*r = (struct verdict_row){ .pair = i, .metric = m, .gate = g, .p_adj = NAN };
		r->is_count = metric_table[m].is_count;
		if (!r->is_count) {
			timing_row(p, r, &t->opts);
			t->n_rows += r->perm.n > 0;
			continue;
		}
		r->mean_a = count_mean(p->a, m, &r->n_a);
		r->mean_b = count_mean(p->b, m, &r->n_b);
		if (!r->n_a || !r->n_b)
			continue;
		r->change_pct = 100 * count_change(r->mean_a, r->mean_b);
		r->mde_pct = r->gate >= 0 ? fabs(t->gates[r->gate].pct) : t->opts.tolerance_pct;
		t->n_rows++;
	}
}

static void decide(struct compare_tiers *t)
{
	for (size_t i = 0; i < t->n_rows; i++) {
		struct verdict_row *r = &t->rows[i];
		const struct compare_gate *g = r->gate >= 0 ? &t->gates[r->gate] : NULL;
		int below = g ? (g->below ? 1 : -1) : 0;

		if (r->is_count) {
			r->verdict = verdict_count(r->mean_a, r->mean_b, t->opts.tolerance_pct, 0);
			if (g)
				r->gate_verdict =
				    verdict_count(r->mean_a, r->mean_b, g->pct, below);
		} else {
			double p = isnan(r->p_adj) ? r->perm.p : r->p_adj;

			r->verdict =
			    verdict_timing(&r->perm, p, t->opts.alpha, t->opts.noise_pct, 0);
			if (g)
				r->gate_verdict =
				    verdict_timing(&r->perm, p, t->opts.alpha, g->pct, below);
		}
		if (!g)
			continue;
		t->n_failed += r->gate_verdict == VERDICT_DIFFERENT;
		t->n_undecided += r->gate_verdict == VERDICT_UNDECIDED;
	}
	for (size_t g = 0; g < t->n_gates; g++) {
		size_t judged = 0;

		for (size_t i = 0; i < t->n_rows; i++)
			judged += t->rows[i].gate == (int)g;
		t->n_gate_unjudged += judged == 0;
	}
}

void compare_tiers_analyse(const struct compare *c, const struct compare_gate *gates,
			   size_t n_gates, const struct verdict_opts *o, struct compare_tiers *t)
{
	compare_tiers_release(t);
	t->opts = *o;
	t->gates = gates;
	t->n_gates = n_gates;
	t->rows = xcalloc(c->n_pairs * METRIC_COUNT + 1, sizeof(*t->rows));
	for (size_t i = 0; i < c->n_pairs; i++)
		add_rows(c, t, i);
	holm_family(t, 0);
	holm_family(t, 1);
	decide(t);
}

void compare_tiers_release(struct compare_tiers *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

int compare_tiers_status(const struct compare_tiers *t)
{
	if (t->n_failed)
		return COMPARE_FAILED;
	if (t->n_undecided || t->n_gate_unjudged)
		return COMPARE_UNDECIDED;
	return COMPARE_PASSED;
}

int compare_tiers_cell_undecided(const struct compare_tiers *t, size_t pair)
{
	for (size_t i = 0; i < t->n_rows; i++)
		if (t->rows[i].pair == pair && t->rows[i].gate >= 0 &&
		    t->rows[i].gate_verdict == VERDICT_UNDECIDED)
			return 1;
	return 0;
}

/* --- output ------------------------------------------------------------------------------ */

static const char *row_key(const struct verdict_row *r)
{
	return metric_table[r->metric].key;
}

static char *fmt_change(double pct)
{
	return isfinite(pct) ? xasprintf("%+.2f%%", pct)
	       : isnan(pct)  ? xstrdup("n/a")
			     : xstrdup(pct > 0 ? "+inf" : "-inf");
}

static char *fmt_mean(double v)
{
	char buf[32];

	return xstrdup(isnan(v) ? "n/a" : report_fmt_num(v, buf, sizeof(buf)));
}

/* The interval of a timing row, or why there is none. */
static char *fmt_ci(const struct verdict_row *r)
{
	if (r->is_count)
		return xstrdup("(count)");
	if (r->perm.n < 2)
		return xstrdup("n/a");
	if (!isfinite(r->perm.ci_hi))
		return xstrdup("unbounded");
	return xasprintf("%+.1f%% to %+.1f%%", 100 * (r->perm.ci_lo - 1),
			 100 * (r->perm.ci_hi - 1));
}

static char *fmt_mde(const struct verdict_row *r)
{
	if (r->is_count)
		return xasprintf("%.2g%% (tolerance)", r->mde_pct);
	if (r->perm.n < 2 || !isfinite(r->mde_pct))
		return xasprintf("none below %zu pairs", r->need_pairs);
	return xasprintf("%.1f%%", r->mde_pct);
}

static char *fmt_verdict(const struct verdict_row *r)
{
	if (r->gate < 0)
		return xstrdup(verdict_name(r->verdict));
	return xasprintf("%s; gate %s", verdict_name(r->verdict),
			 r->gate_verdict == VERDICT_DIFFERENT ? "FAILED"
			 : r->gate_verdict == VERDICT_SAME    ? "passed"
							      : "undecided");
}

void compare_tiers_render(struct report_doc *d, const struct compare *c,
			  const struct compare_tiers *t)
{
	static const char *const hdr[] = { "cell", "summary", "metric",	  "A",	 "B",
					   "n",	   "change",  "interval", "MDE", "verdict" };

	report_doc_heading(d, 2, "Verdicts");
	report_doc_para(
	    d,
	    "In tiers. Count metrics (I/Os, bytes, flushes, TXGs, ZIL, ARC: what the guest "
	    "counted; seeks, flushes, read-modify-writes: what a modelled disk counted) are "
	    "compared by their means against a tolerance of %g%% (a gate's own "
	    "threshold for a gated one), with no statistics. Timing metrics: the paired "
	    "permutation test on the log ratios (repeat r of A with repeat r of B; every sign "
	    "flip with up to %d pairs, %d seeded draws beyond), Holm over the %s; different when "
	    "p < %g and the change is beyond the noise threshold of %g%% (or the gate's), same "
	    "when the whole %g%% interval lies within it, undecided otherwise. MDE: the smallest "
	    "change these pairs would detect with 80%% power; with fewer than %zu pairs the test "
	    "cannot reach p < %g at all.",
	    t->opts.tolerance_pct, PERM_EXACT_MAX, PERM_DRAWS,
	    t->n_gates ? "gated rows (the others within their own family)" : "rows", t->opts.alpha,
	    t->opts.noise_pct, 100 * (1 - t->opts.alpha), perm_min_pairs(t->opts.alpha),
	    t->opts.alpha);
	if (t->n_rows == 0) {
		report_doc_para(d, "No matched cell has a metric on both sides.");
		return;
	}
	report_doc_table(d, 10, hdr);
	for (size_t i = 0; i < t->n_rows; i++) {
		const struct verdict_row *r = &t->rows[i];
		const struct report_cell *cell = c->pairs[r->pair].a;
		char *cells[10] = {
			xstrdup(cell->id),
			xstrdup(cell->summary ? cell->summary : ""),
			xstrdup(row_key(r)),
			fmt_mean(r->mean_a),
			fmt_mean(r->mean_b),
			r->is_count ? xasprintf("%zu/%zu", r->n_a, r->n_b)
				    : xasprintf("%zu pairs", r->perm.n),
			fmt_change(r->change_pct),
			fmt_ci(r),
			fmt_mde(r),
			fmt_verdict(r),
		};

		report_doc_row(d, (const char *const *)cells);
		for (int k = 0; k < 10; k++)
			free(cells[k]);
	}
	report_doc_table_end(d);
	if (t->n_gates)
		report_doc_para(d,
				"Gates: %zu gated row(s) failed, %zu undecided; %zu gate(s) judged "
				"in no cell. Exit status %d.",
				t->n_failed, t->n_undecided, t->n_gate_unjudged,
				compare_tiers_status(t));
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Per gate: the cells it failed, passed and left undecided. */
static json_t *gates_json(const struct compare *c, const struct compare_tiers *t)
{
	json_t *out = json_array();

	for (size_t g = 0; g < t->n_gates; g++) {
		json_t *lists[3] = { json_array(), json_array(), json_array() };
		size_t judged = 0;
		const char *verdict;

		for (size_t i = 0; i < t->n_rows; i++) {
			const struct verdict_row *r = &t->rows[i];

			if (r->gate != (int)g)
				continue;
			judged++;
			json_array_append_new(lists[r->gate_verdict],
					      json_string(c->pairs[r->pair].a->id));
		}
		verdict = json_array_size(lists[VERDICT_DIFFERENT])		 ? "failed"
			  : json_array_size(lists[VERDICT_UNDECIDED]) || !judged ? "undecided"
										 : "passed";
		json_array_append_new(
		    out, json_pack("{s:s, s:s, s:s, s:f, s:I, s:o, s:o, s:o, s:s, s:b}", "gate",
				   t->gates[g].text, "metric", compare_gate_key(&t->gates[g]), "op",
				   t->gates[g].below ? "<" : ">", "pct", t->gates[g].pct, "judged",
				   (json_int_t)judged, "failed_cells", lists[VERDICT_DIFFERENT],
				   "passed_cells", lists[VERDICT_SAME], "undecided_cells",
				   lists[VERDICT_UNDECIDED], "verdict", verdict, "passed",
				   !strcmp(verdict, "passed")));
	}
	return out;
}

json_t *compare_tiers_json(const struct compare *c, const struct compare_tiers *t)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < t->n_rows; i++) {
		const struct verdict_row *r = &t->rows[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:s}", "cell",
				      c->pairs[r->pair].a->id, "metric", row_key(r), "tier",
				      r->is_count ? "count" : "timing", "n_a", (json_int_t)r->n_a,
				      "n_b", (json_int_t)r->n_b, "mean_a", num(r->mean_a), "mean_b",
				      num(r->mean_b), "change_pct", num(r->change_pct), "mde_pct",
				      num(r->mde_pct), "verdict", verdict_name(r->verdict));

		if (!r->is_count)
			json_object_update_new(
			    o, json_pack("{s:I, s:o, s:o, s:[o, o], s:I}", "pairs",
					 (json_int_t)r->perm.n, "p", num(r->perm.p), "p_adjusted",
					 num(r->p_adj), "ci_pct", num(100 * (r->perm.ci_lo - 1)),
					 num(100 * (r->perm.ci_hi - 1)), "need_pairs",
					 (json_int_t)r->need_pairs));
		if (r->gate >= 0)
			json_object_update_new(
			    o,
			    json_pack("{s:s, s:s}", "gate", t->gates[r->gate].text, "gate_verdict",
				      r->gate_verdict == VERDICT_DIFFERENT ? "failed"
				      : r->gate_verdict == VERDICT_SAME	   ? "passed"
									   : "undecided"));
		json_array_append_new(rows, o);
	}
	return json_pack("{s:s, s:f, s:f, s:f, s:I, s:o, s:o, s:I, s:I, s:I, s:i}", "test",
			 "paired sign-flip permutation on log ratios", "alpha", t->opts.alpha,
			 "noise_pct", t->opts.noise_pct, "tolerance_pct", t->opts.tolerance_pct,
			 "seed", (json_int_t)t->opts.seed, "rows", rows, "gates", gates_json(c, t),
			 "failed", (json_int_t)t->n_failed, "undecided", (json_int_t)t->n_undecided,
			 "gates_unjudged", (json_int_t)t->n_gate_unjudged, "status",
			 compare_tiers_status(t));
}

/* --- JUnit and the job summary ------------------------------------------------------------ */

static void junit_case(FILE *f, const struct compare_gate *g, const char *name, const char *type,
		       const char *msg)
{
	fputs("    <testcase classname=\"zbench.compare.", f);
	xml_escape(f, compare_gate_key(g));
	fputs("\" name=\"", f);
	xml_escape(f, name);
	fputs("\">\n", f);
	if (type) {
		/* undecided is a skip: neither a pass nor a regression */
		if (!strcmp(type, "undecided"))
			fputs("      <skipped message=\"", f);
		else
			fprintf(f, "      <failure type=\"%s\" message=\"", type);
		xml_escape(f, msg);
		fputs("\"/>\n", f);
	}
	fputs("    </testcase>\n", f);
}

static char *row_message(const struct verdict_row *r)
{
	char *ch = fmt_change(r->change_pct), *ci = fmt_ci(r), *mde = fmt_mde(r), *s;

	if (r->is_count)
		s = xasprintf("%s (A %.6g, B %.6g; no statistics)", ch, r->mean_a, r->mean_b);
	else if (r->perm.n < 2)
		s = xasprintf("%zu pair: no test (MDE %s)", r->perm.n, mde);
	else
		s = xasprintf("%s (interval %s, adjusted p %.4g over %zu pairs, MDE %s)", ch, ci,
			      r->p_adj, r->perm.n, mde);
	free(ch);
	free(ci);
	free(mde);
	return s;
}

char *compare_tiers_junit(const struct compare *c, const struct compare_tiers *t, size_t *len)
{
	char *body = NULL, *doc = NULL;
	size_t blen = 0, n = 0, failed = 0, skipped = 0;
	FILE *f = open_memstream(&body, &blen);

	for (size_t g = 0; g < t->n_gates; g++) {
		size_t judged = 0;

		for (size_t i = 0; i < t->n_rows; i++) {
			const struct verdict_row *r = &t->rows[i];
			const struct report_cell *cell = c->pairs[r->pair].a;
			char *name, *msg;

			if (r->gate != (int)g)
				continue;
			judged++;
			name = xasprintf("%s: %s (%s)", t->gates[g].text, cell->id,
					 cell->summary ? cell->summary : "");
			msg = row_message(r);
			junit_case(f, &t->gates[g], name,
				   r->gate_verdict == VERDICT_DIFFERENT	  ? "regression"
				   : r->gate_verdict == VERDICT_UNDECIDED ? "undecided"
									  : NULL,
				   msg);
			n++;
			failed += r->gate_verdict == VERDICT_DIFFERENT;
			skipped += r->gate_verdict == VERDICT_UNDECIDED;
			free(name);
			free(msg);
		}
		if (judged == 0) {
			char *name = xasprintf("%s: no cell", t->gates[g].text);

			junit_case(f, &t->gates[g], name, "undecided",
				   "no matched cell has this metric on both sides");
			n++;
			skipped++;
			free(name);
		}
	}
	fclose(f);
	f = open_memstream(&doc, len);
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite "
		"name=\"zbench.compare\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n%s  "
		"</testsuite>\n</testsuites>\n",
		n, failed, skipped, body ? body : "");
	fclose(f);
	free(body);
	return doc;
}

/* Text from a record in a Markdown table cell: printable, Markdown's specials escaped. */
static void md_cell(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (strchr("|\\`<*_[]", ch))
			fputc('\\', f);
		fputc(ch < 0x20 || ch == 0x7f ? ' ' : ch, f);
	}
}

char *compare_tiers_summary(const struct compare *c, const struct compare_tiers *t, size_t *len)
{
	static const char *const word[] = { [COMPARE_PASSED] = "passed",
					    [COMPARE_FAILED] = "FAILED",
					    [COMPARE_UNDECIDED] = "UNDECIDED" };
	int st = compare_tiers_status(t);
	char *doc = NULL;
	FILE *f = open_memstream(&doc, len);
	size_t rows = 0;

	fprintf(f, "### zbench compare: %s\n\n", t->n_gates ? word[st] : "no gate");
	fprintf(f,
		"%zu cells in both runs. Counts against a tolerance; timing by a paired "
		"permutation test (p < %g, noise threshold %g%%): different, same or "
		"undecided.\n\n",
		c->n_pairs, t->opts.alpha, t->opts.noise_pct);
	for (size_t g = 0; g < t->n_gates; g++) {
		fputs("- gate `", f); /* a code span: only a backtick could end it */
		for (const char *s = t->gates[g].text; *s; s++)
			fputc(*s == '`' ? '\'' : *s, f);
		fputs("`\n", f);
	}
	if (t->n_gate_unjudged)
		fprintf(f, "\n%zu gate(s) judged in no cell (undecided).\n", t->n_gate_unjudged);
	fputs("\n| cell | summary | metric | A | B | change | interval | MDE | verdict |\n"
	      "|---|---|---|---|---|---|---|---|---|\n",
	      f);
	for (size_t i = 0; i < t->n_rows; i++) {
		const struct verdict_row *r = &t->rows[i];
		const struct report_cell *cell = c->pairs[r->pair].a;
		char *a, *b, *ch, *ci, *mde, *v;

		if (t->n_gates ? r->gate < 0 : r->verdict != VERDICT_DIFFERENT)
			continue;
		a = fmt_mean(r->mean_a), b = fmt_mean(r->mean_b), ch = fmt_change(r->change_pct);
		ci = fmt_ci(r), mde = fmt_mde(r), v = fmt_verdict(r);
		fputs("| ", f);
		md_cell(f, cell->id);
		fputs(" | ", f);
		md_cell(f, cell->summary);
		fprintf(f, " | %s | %s | %s | %s | %s | %s | %s |\n", row_key(r), a, b, ch, ci, mde,
			v);
		free(a), free(b), free(ch), free(ci), free(mde), free(v);
		rows++;
	}
	if (!rows)
		fputs("| | | | | | | | | no difference |\n", f);
	fclose(f);
	return doc;
}
