/* `zbench compare`: two run directories, cell by cell (builder/report/compare.h, docs/reports.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_verdict.h"
#include "core/outdir.h"
#include "core/util.h"
#include "matrix/canon.h"

const char *const compare_ignored_paths[] = { "image", "vm.image", NULL };

#define SIGNIFICANCE 0.05

/* The key cells are matched by: the SHA-256 of the canonical config (builder/matrix/canon.h)
 * without the image-dependent paths, dumped with sorted keys; the cell id when a record has no
 * config, or `by_id` (two sides of one run: what a side sets is the difference compared). */
static char *match_key(const struct report_cell *c, int by_id)
{
	json_t *copy, *canon;
	char *dump, hex[65];

	if (!c->config || by_id)
		return xasprintf("id:%s", c->id);
	copy = json_deep_copy(c->config);
	for (size_t i = 0; compare_ignored_paths[i]; i++) {
		const char *path = compare_ignored_paths[i], *dot = strrchr(path, '.');
		json_t *parent = copy;

		if (dot) {
			char *head = strndup(path, (size_t)(dot - path));

			parent = (json_t *)report_config_get(copy, head);
			free(head);
		}
		if (json_is_object(parent))
			json_object_del(parent, dot ? dot + 1 : path);
	}
	/* the canonical form: runs that spelled a value differently (or were recorded before
	 * canonical ids) still match */
	canon = canon_config(copy);
	json_decref(copy);
	dump = canon ? json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(canon);
	if (!dump)
		return xasprintf("id:%s", c->id);
	sha256_hex(dump, strlen(dump), hex);
	free(dump);
	return xasprintf("config:%s", hex);
}

int compare_runs(const struct report_run *a, const struct report_run *b, struct compare *out,
		 struct zb_error *err)
{
	char **keys_b = xcalloc(b->n_cells + 1, sizeof(char *));
	size_t matched_b = 0;
	int by_id = a->match_by_id && b->match_by_id;

	memset(out, 0, sizeof(*out));
	out->a = a;
	out->b = b;
	for (size_t j = 0; j < b->n_cells; j++)
		keys_b[j] = match_key(&b->cells[j], by_id);
	for (size_t i = 0; i < a->n_cells; i++) {
		char *key = match_key(&a->cells[i], by_id);
		size_t j;

		for (j = 0; j < b->n_cells && strcmp(keys_b[j], key); j++)
			;
		if (j < b->n_cells) {
			out->pairs = xrealloc(out->pairs, (out->n_pairs + 1) * sizeof(*out->pairs));
			out->pairs[out->n_pairs++] =
			    (struct compare_pair){ &a->cells[i], &b->cells[j] };
			matched_b++;
		} else {
			out->only_a++;
		}
		free(key);
	}
	for (size_t j = 0; j < b->n_cells; j++)
		free(keys_b[j]);
	free(keys_b);
	out->only_b = b->n_cells - matched_b;
	if (out->n_pairs > 0) {
		compare_analyse(out, NULL, 0);
		compare_drift_find(out, &out->drift);
	}
	if (out->n_pairs == 0) {
		compare_release(out);
		error_set(err, EINVAL,
			  "runs '%s' (matrix '%s', %zu cell%s) and '%s' (matrix '%s', %zu "
			  "cell%s) share no cells: nothing to compare",
			  a->dir, a->name, a->n_cells, a->n_cells == 1 ? "" : "s", b->dir, b->name,
			  b->n_cells, b->n_cells == 1 ? "" : "s");
		text_printable(err->msg); /* the matrix names come from the manifests */
		return -1;
	}
	return 0;
}

void compare_release(struct compare *c)
{
	free(c->an.tests);
	memset(&c->an, 0, sizeof(c->an));
	compare_drift_release(&c->drift);
	free(c->pairs);
	c->pairs = NULL;
	c->n_pairs = 0;
}

/* The change of one metric from A to B. */
struct change {
	int present; /* both sides have the metric */
	double pct;  /* (B - A) / A in %; NAN when A is 0 */
	int tested;  /* both sides have >= 2 values */
	struct stats_welch w;
};

static struct change change_of(const struct compare_pair *p, enum report_metric m)
{
	struct change ch = { 0 };
	const struct stats_summary *sa = &p->a->stats[m], *sb = &p->b->stats[m];

	ch.w.t = ch.w.df = ch.w.p = NAN;
	if (sa->n == 0 || sb->n == 0)
		return ch;
	ch.present = 1;
	ch.pct = sa->mean != 0 ? 100 * (sb->mean - sa->mean) / fabs(sa->mean) : NAN;
	/* a count has no test: it repeats almost exactly (the Verdicts judge it by a tolerance) */
	ch.tested = !metric_table[m].is_count &&
		    stats_welch(p->a->values[m], p->a->n_values[m], p->b->values[m],
				p->b->n_values[m], &ch.w) == 0;
	return ch;
}

static void section_environment(struct report_doc *d, const struct compare *c)
{
	static const char *const hdr[] = { "what", "A", "B" };
	const struct report_run *runs[2] = { c->a, c->b };
	static const struct {
		const char *label, *outer, *inner; /* a record path, or manifest with outer NULL */
		const char *m1, *m2;
		int optional; /* a row neither side has is left out */
	} rows[] = {
		{ "run directory", NULL, NULL, NULL, NULL, 0 },
		{ "matrix", NULL, NULL, "matrix", "path", 0 },
		{ "matrix sha256", NULL, NULL, "matrix", "sha256", 0 },
		{ "zbench", NULL, NULL, "zbench", NULL, 0 },
		{ "image", NULL, NULL, "image", "hash", 0 },
		/* a side of one run that sets something in every cell (a matrix's "sides") */
		{ "side sets", NULL, NULL, "image", "set", 1 },
		{ "guest kernel", "guest", "kernel", NULL, NULL, 0 },
		{ "OpenZFS", "effective", "zfs_version", NULL, NULL, 0 },
		/* a source build and its patched branch share the version: their keys differ */
		{ "OpenZFS source key", "zfs_build", "key", NULL, NULL, 0 },
		{ "host", NULL, NULL, "host", "hostname", 0 },
		{ "QEMU", NULL, NULL, "host", "qemu", 0 },
		{ "accelerator", NULL, NULL, "accel", NULL, 0 },
	};

	report_doc_heading(d, 2, "Environment");
	report_doc_table(d, 3, hdr);
	for (size_t r = 0; r < ARRAY_SIZE(rows); r++) {
		char *cells[3] = { xstrdup(rows[r].label), NULL, NULL };

		for (int k = 0; k < 2; k++) {
			const char *s = NULL;

			if (r == 0) {
				s = runs[k]->dir;
			} else if (rows[r].outer) {
				cells[1 + k] =
				    report_run_distinct(runs[k], rows[r].outer, rows[r].inner);
				continue;
			} else {
				const json_t *v = json_object_get(runs[k]->manifest, rows[r].m1);

				if (rows[r].m2)
					v = json_object_get(v, rows[r].m2);
				if (json_is_object(v)) {
					cells[1 + k] = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
									 JSON_REAL_PRECISION(15));
					continue;
				}
				s = json_string_value(v);
			}
			cells[1 + k] = xstrdup(s ? s : "?");
		}
		/* a row of records neither side has (no source build) is left out */
		if (!(rows[r].outer || rows[r].optional) || strcmp(cells[1], "?") ||
		    strcmp(cells[2], "?"))
			report_doc_row(d, (const char *const *)cells);
		for (int k = 0; k < 3; k++)
			free(cells[k]);
	}
	report_doc_table_end(d);
}

/* What differs beyond the matrix (builder/report/compare_drift.c). */
static void section_drift(struct report_doc *d, const struct compare *c)
{
	static const char *const hdr[] = { "what", "A", "B", "cells" };
	const struct compare_drift *dr = &c->drift;

	report_doc_heading(d, 2, "Drift");
	if (dr->n == 0) {
		report_doc_para(
		    d,
		    "No difference beyond the matrix: the %zu matched cells with an "
		    "effective configuration on both sides had the same pool and "
		    "dataset properties, module parameters, kernel and OpenZFS version, "
		    "and the images the same packages.",
		    dr->cells);
		return;
	}
	report_doc_para(d,
			"What the guests really had that differs between A and B although the "
			"matrix sets it alike: effective pool and dataset properties (statistics "
			"such as allocated or guid left out), module parameters, kernel and "
			"OpenZFS version, per value pair with the number of matched cells (of "
			"%zu) that showed it; then the images' packages.",
			dr->cells);
	report_doc_table(d, 4, hdr);
	for (size_t i = 0; i < dr->n; i++) {
		const struct compare_drift_item *it = &dr->items[i];
		char *cells[4] = { it->key, it->a, it->b,
				   it->cells ? xasprintf("%zu", it->cells) : xstrdup("image") };

		report_doc_row(d, (const char *const *)cells);
		free(cells[3]);
	}
	report_doc_table_end(d);
}

static void section_table(struct report_doc *d, const struct compare *c)
{
	static const char *const hdr[] = { "cell", "summary", "metric",	 "A",
					   "B",	   "change",  "p-value", "significant" };

	report_doc_heading(d, 2, "Changes");
	report_doc_para(d,
			"Per cell and metric: the mean over the ok repeats in A and in B, the "
			"change from A to B, and Welch's t-test over the repeats (two-sided; "
			"significant when p < %.2f). With a single repeat on either side there "
			"is no test; a count (disk I/Os, bytes, flushes, TXGs, ZIL, ARC, modelled "
			"seeks) has none either: it repeats almost exactly, and the verdicts "
			"judge it against a tolerance.",
			SIGNIFICANCE);
	report_doc_table(d, 8, hdr);
	for (size_t i = 0; i < c->n_pairs; i++) {
		const struct compare_pair *p = &c->pairs[i];

		for (int m = 0; m < RM_COUNT; m++) {
			struct change ch = change_of(p, m);
			char a[32], b[32], *cells[8];

			if (!ch.present)
				continue;
			cells[0] = xstrdup(p->a->id);
			cells[1] = xstrdup(p->a->summary);
			cells[2] = report_metric_header(m);
			cells[3] = xasprintf("%s (n=%zu)",
					     report_fmt_num(p->a->stats[m].mean, a, sizeof(a)),
					     p->a->stats[m].n);
			cells[4] = xasprintf("%s (n=%zu)",
					     report_fmt_num(p->b->stats[m].mean, b, sizeof(b)),
					     p->b->stats[m].n);
			cells[5] = isnan(ch.pct) ? xstrdup("n/a") : xasprintf("%+.1f%%", ch.pct);
			if (metric_table[m].is_count) {
				cells[6] = xstrdup("n/a");
				cells[7] = xstrdup("count, no test");
			} else if (!ch.tested) {
				cells[6] = xstrdup("n/a");
				cells[7] =
				    xasprintf("n=%zu, no test", p->a->stats[m].n < p->b->stats[m].n
								    ? p->a->stats[m].n
								    : p->b->stats[m].n);
			} else {
				cells[6] = ch.w.p < 0.0001 ? xstrdup("< 0.0001")
							   : xasprintf("%.4f", ch.w.p);
				cells[7] = xstrdup(ch.w.p < SIGNIFICANCE ? "yes" : "no");
			}
			report_doc_row(d, (const char *const *)cells);
			for (int k = 0; k < 8; k++)
				free(cells[k]);
		}
	}
	report_doc_table_end(d);
	if (c->only_a || c->only_b)
		report_doc_para(d, "Not compared: %zu cells only in A, %zu only in B.", c->only_a,
				c->only_b);
}

static char *fmt_pct(double ratio)
{
	return isfinite(ratio) ? xasprintf("%+.1f%%", 100 * (ratio - 1)) : xstrdup("n/a");
}

static char *fmt_p(double p)
{
	return isnan(p) ? xstrdup("n/a") : p < 0.0001 ? xstrdup("< 0.0001") : xasprintf("%.4f", p);
}

static void paired_row(struct report_doc *d, const struct compare *c, const struct compare_test *t)
{
	const struct report_cell *cell = c->pairs[t->pair].a;
	char *lo = fmt_pct(t->st.ci_lo), *hi = fmt_pct(t->st.ci_hi);
	char *cells[9] = {
		xstrdup(cell->id),
		xstrdup(cell->summary ? cell->summary : ""),
		t->metric < RM_COUNT ? report_metric_header((enum report_metric)t->metric)
				     : xstrdup(metric_table[t->metric].title),
		xasprintf("%zu", t->st.n),
		fmt_pct(t->st.ratio),
		xasprintf("%s to %s", lo, hi),
		fmt_p(t->st.p),
		fmt_p(t->p_adj),
		xstrdup(t->gate_failed	 ? "yes, gate failed"
			: t->significant ? "yes"
					 : "no"),
	};

	report_doc_row(d, (const char *const *)cells);
	for (int k = 0; k < 9; k++)
		free(cells[k]);
	free(lo);
	free(hi);
}

/* The paired analysis (builder/report/compare_gate.c): one row per tested cell and metric. */
static void section_paired(struct report_doc *d, const struct compare *c)
{
	static const char *const hdr[] = { "cell",    "summary",    "metric",
					   "pairs",   "change",	    "95% CI",
					   "p-value", "adjusted p", "significant" };
	const struct compare_analysis *an = &c->an;
	size_t tested = an->n_family[0] + an->n_family[1];

	report_doc_heading(d, 2, "Paired changes");
	if (tested == 0) {
		report_doc_para(d, "No cell has two ok repeats in both runs with the same repeat "
				   "numbers: there is no paired test.");
		return;
	}
	report_doc_para(d,
			"Repeat r of A paired with repeat r of B: the change is the geometric mean "
			"of B/A over the pairs, with its 95%% confidence interval and a paired "
			"t-test on the log ratios (two-sided). Adjusted p: Holm's correction over "
			"the %zu tests of the %s; significant when it is below %.2f.",
			an->n_family[an->n_gates > 0],
			an->n_gates > 0 ? "gated metrics (the other rows: over their own family)"
					: "table",
			COMPARE_ALPHA);
	if (an->same_image)
		report_doc_para(d,
				"Both runs used the same image (an A/A comparison): %zu of %zu "
				"tests are significant, and every one is a false positive.",
				an->n_significant, an->n_family[an->n_gates > 0]);
	report_doc_table(d, 9, hdr);
	for (size_t i = 0; i < an->n_tests; i++)
		if (!isnan(an->tests[i].st.p))
			paired_row(d, c, &an->tests[i]);
	report_doc_table_end(d);
}

/* The plot of figure f (builder/matrix/metrics.h): % change against the first axis, one series
 * per metric of the figure and values of the other axes (seed 001's "% change vs threads"). */
static void figure_plot(const struct compare *c, enum metric_figure f, struct report_plot *p)
{
	for (size_t i = 0; i < c->n_pairs; i++) {
		const struct report_cell *ca = c->pairs[i].a;
		char *others;

		if (!ca->axis_label || !ca->axis_label[0])
			continue;
		others = report_cell_others(c->a, ca, 0);
		for (int m = 0; m < RM_COUNT; m++) {
			struct change ch;
			char *series;

			if (metric_table[m].figure != f)
				continue;
			ch = change_of(&c->pairs[i], (enum report_metric)m);
			if (!ch.present || isnan(ch.pct))
				continue;
			series = *others ? xasprintf("%s, %s", metric_table[m].title, others)
					 : xstrdup(metric_table[m].title);
			report_series_add(p, series, ca->axis_x[0], ch.pct, 0);
			free(series);
		}
		free(others);
	}
}

/* % change against the first axis (seed 001's "% change vs threads"). */
static void section_plots(struct report_doc *d, const struct compare *c, struct report_plotter *pl)
{
	const struct report_axis *ax;
	char *axis_file;

	if (c->a->n_axes == 0)
		return;
	ax = &c->a->axes[0];
	report_doc_heading(d, 2, "Plots");
	report_doc_para(d, "%% change from A to B against %s; points above 0 are higher in B.",
			ax->name);
	axis_file = outdir_name_from(ax->name);
	for (int f = FIGURE_NONE + 1; f < FIGURE_COUNT; f++) {
		char *title = xasprintf("%s: %% change vs %s", metric_figures[f].title, ax->name);
		char *file = xasprintf("%s-%s.svg", metric_figures[f].stem, axis_file);
		struct report_plot p = {
			.title = title, .ylabel = "% change (B vs A)", .xaxis = ax, .zero_line = 1
		};

		figure_plot(c, (enum metric_figure)f, &p);
		if (p.n_series > 0)
			pl->draw(pl, d, &p, file);
		report_plot_release(&p);
		free(title);
		free(file);
	}
	free(axis_file);
}

void compare_render(struct report_doc *d, const struct compare *c, struct report_plotter *pl)
{
	report_doc_para(d, "A is '%s', B is '%s': %zu cells in both.", c->a->dir, c->b->dir,
			c->n_pairs);
	section_environment(d, c);
	section_drift(d, c);
	if (c->tiers)
		compare_tiers_render(d, c, c->tiers);
	section_table(d, c);
	section_paired(d, c);
	section_plots(d, c, pl);
}

static void render_compare(struct report_doc *d, const void *c, struct report_plotter *pl)
{
	compare_render(d, c, pl);
}

int compare_write(const struct compare *c, const char *outdir, struct zb_error *err)
{
	char *title = xasprintf("zbench compare: %s vs %s", c->a->name, c->b->name);
	int rc = report_publish(outdir, title, "compare", render_compare, c, err);

	free(title);
	return rc < 0 ? error_wrap(err, "comparing '%s' and '%s'", c->a->dir, c->b->dir) : 0;
}
