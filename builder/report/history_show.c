/* `zbench history show`: a metric over time, its change point, a table and a page
 * (builder/report/history.h, docs/history.md). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/outdir.h"
#include "core/util.h"
#include "history.h"
#include "matrix/metrics.h"
#include "perm.h"

#define CP_ALPHA 0.01
#define CP_PERMS 999
#define CP_SEED	 0x29u

/* The standardised difference of the means before and after each split; the largest, and at
 * which split. */
static double best_split(const double *x, size_t n, size_t min_seg, size_t *at)
{
	double total = 0, left = 0, best = -1;

	for (size_t i = 0; i < n; i++)
		total += x[i];
	for (size_t k = 1; k < n; k++) {
		double ml, mr, s;

		left += x[k - 1];
		if (k < min_seg || n - k < min_seg)
			continue;
		ml = left / (double)k;
		mr = (total - left) / (double)(n - k);
		s = fabs(ml - mr) * sqrt((double)k * (double)(n - k) / (double)n);
		if (s > best) {
			best = s;
			*at = k;
		}
	}
	return best;
}

size_t history_change_point(const double *x, size_t n, size_t min_seg, double alpha, unsigned perms,
			    double *p)
{
	double *y, obs;
	size_t at = 0, ge = 0, dummy;
	uint64_t seed = CP_SEED;

	*p = NAN;
	if (min_seg < 1 || n < 2 * min_seg)
		return 0;
	obs = best_split(x, n, min_seg, &at);
	if (!(obs > 0))
		return 0;
	/* under "no change" the order of the points does not matter: how often does a shuffled
	 * series split as well? (seeded: the same answer every time) */
	y = xcalloc(n, sizeof(double));
	memcpy(y, x, n * sizeof(double));
	for (unsigned r = 0; r < perms; r++) {
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)(perm_splitmix(&seed) % (i + 1));
			double t = y[i];

			y[i] = y[j];
			y[j] = t;
		}
		ge += best_split(y, n, min_seg, &dummy) >= obs * (1 - 1e-12);
	}
	free(y);
	*p = (double)(ge + 1) / (double)(perms + 1);
	return *p < alpha ? at : 0;
}

static void find_changes(struct history_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double *x = xcalloc(s[i].n + 1, sizeof(double));

		for (size_t k = 0; k < s[i].n; k++)
			x[k] = s[i].pts[k].value;
		s[i].change =
		    history_change_point(x, s[i].n, 2, CP_ALPHA, CP_PERMS, &s[i].change_p);
		if (s[i].change) {
			double b = 0, a = 0;

			for (size_t k = 0; k < s[i].n; k++)
				*(k < s[i].change ? &b : &a) += x[k];
			s[i].before = b / (double)s[i].change;
			s[i].after = a / (double)(s[i].n - s[i].change);
		}
		free(x);
	}
}

static void fmt_time(double t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!isfinite(t) || !gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M", &tm))
		bprintf(buf, len, "?");
}

static const char *series_label(const struct history_series *s, char *buf, size_t len)
{
	bprintf(buf, len, "%s %s%s%s%s%s", s->summary, s->cell, *s->phase ? " phase=" : "",
		s->phase, *s->side ? " side=" : "", s->side);
	return buf;
}

static void print_table(const struct history_series *s, size_t n, const char *metric, FILE *f)
{
	char label[600], when[32];

	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s: %s\n", series_label(&s[i], label, sizeof(label)), metric);
		for (size_t k = 0; k < s[i].n; k++) {
			fmt_time(s[i].pts[k].t, when, sizeof(when));
			fprintf(f, "  %s  %14.6g  (n=%zu)  %s%s\n", when, s[i].pts[k].value,
				s[i].pts[k].n, s[i].pts[k].run,
				s[i].change && k == s[i].change ? "  <- change" : "");
		}
		if (s[i].change)
			fprintf(
			    f,
			    "  change point before run %zu of %zu: mean %.6g -> %.6g (%+.1f%%), "
			    "permutation p %.3g\n",
			    s[i].change + 1, s[i].n, s[i].before, s[i].after,
			    s[i].before ? 100 * (s[i].after - s[i].before) / fabs(s[i].before)
					: NAN,
			    s[i].change_p);
		else
			fprintf(f, "  no change point%s\n",
				s[i].n < 4 ? " (fewer than 4 runs)" : "");
	}
}

/* One series as an inline SVG: points over the run index, the change as a dashed line. */
static void svg_series(FILE *f, const struct history_series *s)
{
	const double W = 640, H = 240, L = 70, R = 20, T = 20, B = 40;
	double lo = INFINITY, hi = -INFINITY;
	char when[32];

	for (size_t k = 0; k < s->n; k++) {
		lo = fmin(lo, s->pts[k].value);
		hi = fmax(hi, s->pts[k].value);
	}
	if (hi <= lo) {
		hi = lo + (lo ? fabs(lo) * 0.1 : 1);
		lo -= hi - lo;
	}
#define PX(k) (L + (s->n > 1 ? (W - L - R) * (double)(k) / (double)(s->n - 1) : (W - L - R) / 2))
#define PY(v) (T + (H - T - B) * (1 - ((v)-lo) / (hi - lo)))
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
		"role=\"img\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		W, H);
	fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#888\"/>\n", L, H - B,
		W - R, H - B);
	fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#888\"/>\n", L, T, L,
		H - B);
	fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">%.4g</text>\n",
		L - 4, T + 4, hi);
	fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">%.4g</text>\n",
		L - 4, H - B, lo);
	fmt_time(s->pts[0].t, when, sizeof(when));
	fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"11\">%s</text>\n", L, H - B + 16, when);
	fmt_time(s->pts[s->n - 1].t, when, sizeof(when));
	fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
		W - R, H - B + 16, when);
	if (s->change) {
		double x = (PX(s->change - 1) + PX(s->change)) / 2;

		fprintf(f,
			"<line class=\"change\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" "
			"stroke=\"#d00\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n"
			"<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#d00\" "
			"stroke-opacity=\"0.5\"/>\n<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" "
			"stroke=\"#d00\" stroke-opacity=\"0.5\"/>\n",
			x, T, x, H - B, L, PY(s->before), x, PY(s->before), x, PY(s->after), W - R,
			PY(s->after));
	}
	fputs("<polyline fill=\"none\" stroke=\"#36c\" stroke-width=\"2\" points=\"", f);
	for (size_t k = 0; k < s->n; k++)
		fprintf(f, "%s%.1f,%.1f", k ? " " : "", PX(k), PY(s->pts[k].value));
	fputs("\"/>\n", f);
	for (size_t k = 0; k < s->n; k++)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#36c\"/>\n", PX(k),
			PY(s->pts[k].value));
	fputs("</svg>\n", f);
#undef PX
#undef PY
}

static char *page(const struct history_series *s, size_t n, const char *metric, size_t *len)
{
	char *doc = NULL, label[600];
	FILE *f = open_memstream(&doc, len);

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>zbench history: ", f);
	xml_escape(f, metric);
	fputs("</title>\n<style>body{font-family:sans-serif;margin:2em}h2{font-size:1.1em}"
	      ".change{color:#d00}</style></head><body>\n<h1>zbench history: ",
	      f);
	xml_escape(f, metric);
	fprintf(f,
		"</h1>\n<p>%zu series. Each point is a run's mean over the cell's ok repeats; "
		"a dashed red line marks a change point (permutation p &lt; %g).</p>\n",
		n, CP_ALPHA);
	for (size_t i = 0; i < n; i++) {
		fputs("<h2>", f);
		xml_escape(f, series_label(&s[i], label, sizeof(label)));
		fputs("</h2>\n", f);
		svg_series(f, &s[i]);
		if (s[i].change)
			fprintf(
			    f,
			    "<p class=\"change\">change point before run %zu of %zu: %.6g &rarr; "
			    "%.6g (p %.3g)</p>\n",
			    s[i].change + 1, s[i].n, s[i].before, s[i].after, s[i].change_p);
		else
			fputs("<p>no change point</p>\n", f);
	}
	fputs("</body></html>\n", f);
	fclose(f);
	return doc;
}

int history_show(struct history_series *s, size_t n, const char *metric, FILE *f,
		 const char *outdir, struct zb_error *err)
{
	struct outdir out = { .fd = -1 };
	char *html;
	size_t len;
	int rc;

	if (n == 0)
		return error_set(err, ENOENT, "no run in the history has metric '%s'%s", metric,
				 " (for that cell)");
	find_changes(s, n);
	print_table(s, n, metric, f);
	if (!outdir)
		return 0;
	if (outdir_open(&out, outdir, OUTDIR_CREATE, 0755, err) < 0)
		return error_wrap(err, "history page");
	html = page(s, n, metric, &len);
	rc = outdir_write(&out, "history.html", html, len, 0644, err);
	free(html);
	outdir_close(&out);
	if (rc == 0)
		fprintf(f, "%s/history.html\n", outdir);
	return rc;
}
