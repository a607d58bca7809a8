/* Plots (builder/report/report.h): series, the gnuplot script and data, rendering, and the plotter
 * that files the SVGs. gp_string() is the only way text reaches gnuplot. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/outdir.h"
#include "core/util.h"
#include "report.h"

/* The files plotter: gnuplot, then OUTDIR/<rel_dir>/<file>. */
static void draw_to_file(struct report_plotter *pl, struct report_doc *d,
			 const struct report_plot *p, const char *file)
{
	char *rel = xasprintf("%s/%s", pl->rel_dir, file), *svg = NULL;
	struct zb_error perr = { 0 };

	if (!pl->opened) {
		pl->opened = 1;
		if (outdir_sub(pl->out, pl->rel_dir, OUTDIR_CREATE, 0755, &pl->dir, &pl->why) < 0)
			pl->dir.fd = -1;
	}
	if (pl->dir.fd < 0)
		report_doc_plot(d, p->title, rel, NULL, pl->why.msg);
	else if (report_plot_render(p, &svg, &perr) < 0 ||
		 outdir_write(&pl->dir, file, svg, strlen(svg), 0644, &perr) < 0)
		report_doc_plot(d, p->title, rel, NULL, perr.msg);
	else
		report_doc_plot(d, p->title, rel, svg, NULL);
	free(svg);
	free(rel);
}

void report_plotter_files(struct report_plotter *pl, const struct outdir *out, const char *rel_dir)
{
	memset(pl, 0, sizeof(*pl));
	pl->draw = draw_to_file;
	pl->rel_dir = rel_dir;
	pl->out = out;
	pl->dir.fd = -1;
}

static void draw_none(struct report_plotter *pl, struct report_doc *d, const struct report_plot *p,
		      const char *file)
{
	(void)pl;
	report_doc_plot(d, p->title, file, NULL, "not drawn");
}

void report_plotter_none(struct report_plotter *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->draw = draw_none;
	pl->rel_dir = "";
	pl->dir.fd = -1;
}

void report_plotter_release(struct report_plotter *pl)
{
	if (pl->dir.fd >= 0)
		outdir_close(&pl->dir);
	pl->dir.fd = -1;
}

/* ---- plots ------------------------------------------------------------------------------------
 */

void report_series_add(struct report_plot *p, const char *title, double x, double y, double err)
{
	struct report_series *s = NULL;

	for (size_t i = 0; i < p->n_series; i++)
		if (!strcmp(p->series[i].title, title))
			s = &p->series[i];
	if (!s) {
		p->series = xrealloc(p->series, (p->n_series + 1) * sizeof(*p->series));
		s = &p->series[p->n_series++];
		memset(s, 0, sizeof(*s));
		s->title = xstrdup(title);
	}
	s->x = xrealloc(s->x, (s->n + 1) * sizeof(double));
	s->y = xrealloc(s->y, (s->n + 1) * sizeof(double));
	s->err = xrealloc(s->err, (s->n + 1) * sizeof(double));
	s->x[s->n] = x;
	s->y[s->n] = y;
	s->err[s->n] = isfinite(err) ? err : 0;
	s->n++;
}

void report_plot_release(struct report_plot *p)
{
	for (size_t i = 0; i < p->n_series; i++) {
		free(p->series[i].title);
		free(p->series[i].x);
		free(p->series[i].y);
		free(p->series[i].err);
	}
	free(p->series);
	p->series = NULL;
	p->n_series = 0;
}

/* ---- gnuplot scripts: record text only ever inside a string literal -------------------------- */

/* The one way text reaches a gnuplot script (titles, labels, keys, file names): a single-quoted
 * literal, inside which gnuplot expands nothing (no backquotes, no @macros, no escapes) and only
 * a doubled '' stands for '. A line break would end the command, so control characters become
 * spaces. Numbers are never copied from text: they are parsed and printed again (gp_number). */
static void gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\'')
			fputs("''", f);
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', f);
		else
			fputc(c, f);
	}
	fputc('\'', f);
}

/* A tic position from a label: the whole label must be a finite number ("12", "0.5"). */
static int gp_parse_number(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && isfinite(*out) ? 0 : -1;
}

static void gp_xtics(FILE *f, const struct report_axis *ax)
{
	size_t n = 0;
	double x;

	if (ax->numeric) {
		/* tics at the axis's own values (9 and 12, not 9, 9.5, 10, ...): the labels come
		 * from the manifest, so only those that are numbers are placed, at that number */
		for (size_t i = 0; i < ax->n_categories; i++)
			n += gp_parse_number(ax->categories[i], &x) == 0;
		if (n == 0 || n > 16)
			return;
		n = 0;
		fputs("set xtics (", f);
		for (size_t i = 0; i < ax->n_categories; i++) {
			if (gp_parse_number(ax->categories[i], &x) < 0)
				continue;
			fputs(n++ ? ", " : "", f);
			gp_string(f, ax->categories[i]);
			fprintf(f, " %.17g", x);
		}
		fputs(")\n", f);
		return;
	}
	fputs("set xtics (", f);
	for (size_t i = 0; i < ax->n_categories; i++) {
		fputs(i ? ", " : "", f);
		gp_string(f, ax->categories[i]);
		fprintf(f, " %zu", i);
	}
	fputs(")\n", f);
	fprintf(f, "set xrange [-0.5:%zu.5]\nset offsets 0, 0, graph 0.05, graph 0.05\n",
		ax->n_categories ? ax->n_categories - 1 : 0);
}

/* Categories are not on a line: a category axis is drawn as grouped bars, each series a box of
 * its own colour side by side within a category's slot (0.8 wide), with its error bar. Column
 * arithmetic uses column(N), never $N, so the script keeps to what docs/security.md allows. */
static void plot_bars(const struct report_plot *p, const char *data_path, FILE *f)
{
	double w = 0.8 / (double)(p->n_series ? p->n_series : 1);

	for (size_t i = 0; i < p->n_series; i++) {
		double off = -0.4 + w * ((double)i + 0.5);

		fputs(i ? ", \\\n     " : "", f);
		gp_string(f, data_path);
		fprintf(
		    f,
		    " index %zu using (column(1)%+.6f):2:(%.6f) with boxes fs solid 0.6 noborder "
		    "lc %zu title ",
		    i, off, w, i + 1);
		gp_string(f, p->series[i].title);
		fputs(", \\\n     ", f);
		gp_string(f, data_path);
		fprintf(f,
			" index %zu using (column(1)%+.6f):2:3 with yerrorbars lc %zu lw 1 pt 0 "
			"notitle",
			i, off, i + 1);
	}
	fputc('\n', f);
}

void report_plot_script(const struct report_plot *p, const char *data_path, FILE *f)
{
	const struct report_axis *ax = p->xaxis;

	fputs("set terminal svg size 560,360 fixed font 'Helvetica,12' background rgb 'white'\n"
	      "set termoption noenhanced\n"
	      "set encoding utf8\n"
	      "set key outside right top vertical Left reverse noautotitle\n"
	      "set grid ytics lc rgb '#dddddd'\n"
	      "set border 3\nset tics nomirror\n"
	      "set offsets graph 0.05, graph 0.05, graph 0.05, 0\n",
	      f);
	fputs("set title ", f);
	gp_string(f, p->title);
	fputs("\nset xlabel ", f);
	gp_string(f, ax->name);
	fputs("\nset ylabel ", f);
	gp_string(f, p->ylabel);
	fputc('\n', f);
	if (ax->numeric && ax->logscale)
		fputs("set logscale x 2\n", f);
	gp_xtics(f, ax);
	if (p->zero_line)
		fputs("set xzeroaxis lt -1 lw 1\n", f);
	else
		fputs("set yrange [0:*]\n", f); /* magnitudes: a cut axis exaggerates differences */
	fputs("plot ", f);
	if (!ax->numeric) {
		plot_bars(p, data_path, f);
		return;
	}
	for (size_t i = 0; i < p->n_series; i++) {
		fputs(i ? ", \\\n     " : "", f);
		gp_string(f, data_path);
		fprintf(f, " index %zu using 1:2:3 with yerrorlines lw 2 pt 7 ps 0.8 title ", i);
		gp_string(f, p->series[i].title);
	}
	fputc('\n', f);
}

struct point {
	double x, y, err;
};

static int point_cmp(const void *pa, const void *pb)
{
	const struct point *a = pa, *b = pb;

	return a->x < b->x ? -1 : a->x > b->x;
}

/* The data: one block per series (gnuplot's `index`), points sorted by x. */
static void plot_data(const struct report_plot *p, FILE *f)
{
	for (size_t i = 0; i < p->n_series; i++) {
		const struct report_series *s = &p->series[i];
		struct point *pts = xcalloc(s->n, sizeof(*pts));

		for (size_t j = 0; j < s->n; j++)
			pts[j] = (struct point){ s->x[j], s->y[j], s->err[j] };
		qsort(pts, s->n, sizeof(*pts), point_cmp);
		fprintf(f, "# %zu\n", i);
		for (size_t j = 0; j < s->n; j++)
			fprintf(f, "%.17g %.17g %.17g\n", pts[j].x, pts[j].y, pts[j].err);
		fputs("\n\n", f);
		free(pts);
	}
}

/* gnuplot on `script`; its SVG in *svg, its complaints in the error. */
static int gnuplot_run(const char *script, const char *log, char **svg, struct zb_error *err)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	int st = run_capture(argv, log, 16u << 20, svg, err);
	char *text = NULL;
	size_t len;

	if (st == 0)
		return 0;
	if (st > 0) {
		read_file(log, 4096, &text, &len, err);
		error_set(err, 0, "gnuplot exited with status %d%s%s", st, text ? ": " : "",
			  text ? text : "");
		for (char *c = text ? strchr(err->msg, '\n') : NULL; c; c = strchr(c, '\n'))
			*c = ' ';
	}
	free(text);
	free(*svg);
	*svg = NULL;
	return -1;
}

int report_plot_render(const struct report_plot *p, char **svg, struct zb_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/zbench-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *data = NULL, *script = NULL, *dat_path = NULL, *gp_path = NULL, *log = NULL;
	size_t data_len = 0, script_len = 0;
	FILE *f;
	int rc = -1;

	/* gnuplot's files live in a private directory of their own, never in the output */
	if (!mkdtemp(dir)) {
		error_sys(err, errno, "creating a temporary directory '%s'", dir);
		free(dir);
		return -1;
	}
	dat_path = xasprintf("%s/plot.dat", dir);
	gp_path = xasprintf("%s/plot.gp", dir);
	log = xasprintf("%s/gnuplot.log", dir);
	f = open_memstream(&data, &data_len);
	plot_data(p, f);
	fclose(f);
	f = open_memstream(&script, &script_len);
	report_plot_script(p, dat_path, f);
	fclose(f);
	if (write_file_atomic(dat_path, data, data_len, 0600, err) == 0 &&
	    write_file_atomic(gp_path, script, script_len, 0600, err) == 0)
		rc = gnuplot_run(gp_path, log, svg, err);
	remove_tree(dir, &(struct zb_error){ 0 });
	free(dir);
	free(dat_path);
	free(gp_path);
	free(log);
	free(data);
	free(script);
	return rc;
}
