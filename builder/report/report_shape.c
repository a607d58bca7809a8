/* A reference's shape verdict (docs/reports.md, "References"): Spearman's rho of ours against
 * the published values. A study compares its values in groups (seed 000's write-cache section
 * compares each device with its own cache on and off); a rank correlation over all of them at
 * once mostly ranks the devices (HDDs against SSDs) and reads "same shape" while every pair the
 * study compares may go the other way (issue 33). So a reference whose values name a `group` is
 * judged within each group, and reads "same shape" only when every group does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report.h"
#include "report_int.h"

static const char *rho_verdict(double rho)
{
	if (isnan(rho))
		return "n/a";
	if (rho >= 0.5)
		return "same shape";
	if (rho <= -0.5)
		return "opposite shape";
	return "no clear agreement";
}

/* The reference's values that have a cell in the run with the metric: the cell, ours, the
 * published value and the value's group ("" if none). */
struct ref_points {
	const struct report_cell **cells;
	double *ours, *pub;
	const char **group;
	size_t n;
	int grouped; /* some value names a group */
};

static void ref_points_collect(const struct report_run *run, const json_t *r, struct ref_points *p)
{
	const json_t *values = json_object_get(r, "values"), *v;
	const char *metric = report_str_get(r, "metric") ? report_str_get(r, "metric") : "?";
	size_t n = json_array_size(values), j;

	memset(p, 0, sizeof(*p));
	p->cells = xcalloc(n + 1, sizeof(*p->cells));
	p->ours = xcalloc(n + 1, sizeof(double));
	p->pub = xcalloc(n + 1, sizeof(double));
	p->group = xcalloc(n + 1, sizeof(char *));
	json_array_foreach (values, j, v) {
		const json_t *match = json_object_get(v, "match");
		const char *g = report_str_get(v, "group");
		double *vals, pv;
		struct stats_summary s;

		p->grouped |= g != NULL;
		if (report_num_get(v, "value", &pv) < 0)
			continue;
		for (size_t c = 0; c < run->n_cells; c++) {
			if (!report_cell_matches(run, &run->cells[c], match))
				continue;
			if (report_cell_metric(&run->cells[c], metric, &vals, &s) > 0) {
				p->cells[p->n] = &run->cells[c];
				p->ours[p->n] = s.mean;
				p->group[p->n] = g ? g : "";
				p->pub[p->n++] = pv;
			}
			free(vals);
			break;
		}
	}
}

static void ref_points_release(struct ref_points *p)
{
	free(p->cells);
	free(p->ours);
	free(p->pub);
	free(p->group);
}

/* Spearman's rho of ours vs published over the points whose key (a group, or the cell's values
 * on the axes other than k) is the same: the mean rho over keys with two or more points;
 * *groups, *same and *points count what went in. k < -1: key by the study's group; k == -1:
 * one key for all. */
static double shape_rho(const struct report_run *run, const struct ref_points *p, int k,
			size_t *groups, size_t *same, size_t *opposite, size_t *points)
{
	size_t n = p->n;
	char **key = xcalloc(n + 1, sizeof(char *));
	int *done = xcalloc(n + 1, sizeof(int));
	double *x = xcalloc(n + 1, sizeof(double)), *y = xcalloc(n + 1, sizeof(double));
	double sum = 0;

	*groups = *same = *opposite = *points = 0;
	for (size_t i = 0; i < n; i++)
		key[i] = k < -1	   ? xstrdup(p->group[i])
			 : k < 0 ? xstrdup("")
				 : report_cell_others(run, p->cells[i], (size_t)k);
	for (size_t i = 0; i < n; i++) {
		size_t m = 0;
		double rho;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++) {
			if (done[j] || strcmp(key[i], key[j]))
				continue;
			done[j] = 1;
			x[m] = p->ours[j];
			y[m++] = p->pub[j];
		}
		if (m < 2)
			continue;
		rho = stats_spearman(x, y, m);
		if (isnan(rho))
			continue;
		sum += rho;
		(*groups)++;
		*same += rho >= 0.5;
		*opposite += rho <= -0.5;
		*points += m;
	}
	for (size_t i = 0; i < n; i++)
		free(key[i]);
	free(key);
	free(done);
	free(x);
	free(y);
	return *groups ? sum / (double)*groups : NAN;
}

/* The verdict within the study's groups: the same in every group, or how many agree. */
static char *group_verdict(size_t groups, size_t same, size_t opposite)
{
	if (groups == 0)
		return xstrdup("n/a");
	if (same == groups)
		return xstrdup("same shape");
	if (opposite == groups)
		return xstrdup("opposite shape");
	return xasprintf("mixed: %zu of %zu groups same shape, %zu opposite", same, groups,
			 opposite);
}

char *report_reference_verdict(const struct report_run *run, const json_t *r, double *rho)
{
	struct ref_points p;
	size_t groups, same, opposite, points;
	char *v;

	ref_points_collect(run, r, &p);
	*rho = shape_rho(run, &p, p.grouped ? -2 : -1, &groups, &same, &opposite, &points);
	v = p.grouped ? group_verdict(groups, same, opposite) : xstrdup(rho_verdict(*rho));
	ref_points_release(&p);
	return v;
}

static void shape_row(struct report_doc *d, const char *name, const char *along, size_t groups,
		      size_t points, double rho, const char *verdict)
{
	char *row[6];

	row[0] = xstrdup(name);
	row[1] = xstrdup(along);
	row[2] = xasprintf("%zu", groups);
	row[3] = xasprintf("%zu", points);
	row[4] = isnan(rho) ? xstrdup("n/a") : xasprintf("%.2f", rho);
	row[5] = xstrdup(verdict);
	report_doc_row(d, (const char *const *)row);
	for (int q = 0; q < 6; q++)
		free(row[q]);
}

/* The points of p in group `g`, as a ref_points of their own (arrays malloc'd). */
static void group_points(const struct ref_points *p, const char *g, struct ref_points *out)
{
	memset(out, 0, sizeof(*out));
	out->cells = xcalloc(p->n + 1, sizeof(*out->cells));
	out->ours = xcalloc(p->n + 1, sizeof(double));
	out->pub = xcalloc(p->n + 1, sizeof(double));
	out->group = xcalloc(p->n + 1, sizeof(char *));
	out->grouped = 1;
	for (size_t j = 0; j < p->n; j++) {
		if (strcmp(p->group[j], g))
			continue;
		out->cells[out->n] = p->cells[j];
		out->ours[out->n] = p->ours[j];
		out->pub[out->n] = p->pub[j];
		out->group[out->n++] = p->group[j];
	}
}

/* Each group of a grouped reference, then the verdict within the groups. */
static void grouped_rows(struct report_doc *d, const struct report_run *run, const char *name,
			 const struct ref_points *p)
{
	size_t groups, same, opposite, points;
	double rho;
	char *v;

	for (size_t i = 0; i < p->n; i++) {
		struct ref_points g;
		size_t j;

		for (j = 0; j < i && strcmp(p->group[j], p->group[i]); j++)
			;
		if (j < i)
			continue; /* shown with its first point */
		group_points(p, p->group[i], &g);
		rho = shape_rho(run, &g, -2, &groups, &same, &opposite, &points);
		v = xasprintf("group %s", *p->group[i] ? p->group[i] : "(none)");
		shape_row(d, name, v, groups, g.n, rho, rho_verdict(rho));
		free(v);
		ref_points_release(&g);
	}
	rho = shape_rho(run, p, -2, &groups, &same, &opposite, &points);
	v = group_verdict(groups, same, opposite);
	shape_row(d, name, "within the study's groups", groups, points, rho, v);
	free(v);
}

void report_reference_shape_rows(struct report_doc *d, const struct report_run *run, size_t i,
				 const json_t *r)
{
	const char *metric = report_str_get(r, "metric") ? report_str_get(r, "metric") : "?";
	char *name = xasprintf("%zu: %s (%s)", i + 1, report_kv(r, "source"), metric);
	struct ref_points p;

	ref_points_collect(run, r, &p);
	if (p.grouped) {
		grouped_rows(d, run, name, &p);
	} else {
		for (int k = -1; k < (int)run->n_axes; k++) {
			size_t groups, same, opposite, points;
			double rho = shape_rho(run, &p, k, &groups, &same, &opposite, &points);

			if (k >= 0 && groups == 0)
				continue;
			shape_row(d, name, k < 0 ? "all cells" : run->axes[k].name, groups,
				  k < 0 ? p.n : points, rho, rho_verdict(rho));
		}
	}
	ref_points_release(&p);
	free(name);
}
