/* builder/report/plot.c and report.c's plots: a category axis is drawn as bars (a line through
 * categories invents an order between them), a number axis as lines; and a series of what the
 * workload did not do (read IOPS of a write-only cell) is left out, not drawn as a flat 0. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/report.h"
#include "report/report_int.h"

static char *script_of(const struct report_plot *p)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	report_plot_script(p, "/tmp/d/plot.dat", f);
	fclose(f);
	return s;
}

static char titles[4096];

/* A plotter that draws nothing and notes every series it was given. */
static void note_draw(struct report_plotter *pl, struct report_doc *d, const struct report_plot *p,
		      const char *file)
{
	(void)pl;
	for (size_t i = 0; i < p->n_series; i++) {
		strncat(titles, p->series[i].title, sizeof(titles) - strlen(titles) - 2);
		strncat(titles, ";", sizeof(titles) - strlen(titles) - 1);
	}
	report_doc_plot(d, p->title, file, NULL, "not drawn");
}

int main(void)
{
	char *cats[] = { "silent", "it's" }, *nums[] = { "9", "12" };
	struct report_axis cat = { .name = "case", .categories = cats, .n_categories = 2 };
	struct report_axis num = {
		.name = "ashift", .numeric = 1, .categories = nums, .n_categories = 2
	};
	struct report_plot p = { .title = "IOPS vs case", .ylabel = "IOPS", .xaxis = &cat };
	struct report_plotter pl = { .draw = note_draw, .rel_dir = "report-plots" };
	struct zb_error err = { 0 };
	struct report_run run;
	struct report_doc d;
	char *s, *docs[2];

	report_series_add(&p, "read IOPS", 0, 10, 1);
	report_series_add(&p, "write IOPS", 0, 20, 0);
	report_series_add(&p, "write IOPS", 1, 30, 0);
	s = script_of(&p);
	CHECK(strstr(s, "with boxes") != NULL);
	CHECK(strstr(s, "yerrorlines") == NULL);
	CHECK(strstr(s, "with yerrorbars") != NULL);
	/* two series side by side in a category's slot, not on top of each other */
	CHECK(strstr(s, "using (column(1)-0.200000):2:(0.400000)") != NULL);
	CHECK(strstr(s, "using (column(1)+0.200000):2:(0.400000)") != NULL);
	CHECK(strstr(s, "'it''s' 1") != NULL);
	CHECK(strchr(s, '$') == NULL);
	free(s);
	p.xaxis = &num;
	s = script_of(&p);
	CHECK(strstr(s, "with yerrorlines") != NULL);
	CHECK(strstr(s, "with boxes") == NULL);
	free(s);
	report_plot_release(&p);

	/* faults: cell 3 wrote only; its read IOPS and bw are 0 in fio's result */
	CHECK(report_run_load("tests/golden/report/faults/rundir", &run, &err) == 0);
	report_doc_open(&d, "t");
	report_render(&d, &run, &pl);
	report_doc_finish(&d, docs);
	CHECK(strstr(titles, "write IOPS;") != NULL);
	CHECK(strstr(titles, "write bw;") != NULL);
	CHECK(strstr(titles, "read IOPS") == NULL);
	CHECK(strstr(titles, "read bw") == NULL);
	/* the table still says what fio said */
	CHECK(strstr(docs[0], "| ok | 1/1 | 0 | 417.2 | 0 | 1669 |") != NULL);
	free(docs[0]);
	free(docs[1]);
	report_run_release(&run);

	/* a cell's page: its samples and telemetry over time; cell 0 only wrote */
	CHECK(report_run_load("tests/golden/report/timeseries/rundir", &run, &err) == 0);
	for (size_t i = 0; i < run.n_cells && i < 2; i++) {
		titles[0] = '\0';
		report_doc_open(&d, "t");
		report_cell_render(&d, &run, &run.cells[i], &pl);
		report_doc_finish(&d, docs);
		CHECK(strstr(titles, "write IOPS;") != NULL);
		CHECK((strstr(titles, "read IOPS;") != NULL) == (i == 1));
		CHECK(strstr(titles, "d0 write await;") != NULL);
		CHECK((strstr(titles, "d1 read await;") != NULL) == (i == 1));
		CHECK(strstr(titles, "d1 %util;") != NULL);
		CHECK(strstr(titles, "ARC size;") != NULL &&
		      strstr(titles, "ARC hit rate;") != NULL);
		CHECK(strstr(titles, "TXGs committed;") != NULL);
		CHECK(strstr(docs[0], "[back to the report](../report.md)") != NULL);
		free(docs[0]);
		free(docs[1]);
	}
	{
		char *page = report_cell_page(&run, &run.cells[1]);

		CHECK_STR(page, "001-979d16c7b4848446");
		free(page);
	}
	report_run_release(&run);
	return check_summary("report_plot");
}
