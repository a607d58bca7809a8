/* builder/report/report_md.c, report_html.c, junit.c: one sequence of document calls, each format's
 * output in full; and a format added as one ops table sees the same calls. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/report.h"

/* The fixture: every op once, with text that is markup in some format. */
static void fixture(struct report_doc *d)
{
	static const char *const hdr[] = { "cell", "a|b" };
	const char *row[] = { "c1", "1.5 ± 0.2" };
	const char *links[] = { "report-cells/c1", NULL };
	struct report_check pass = { .group = "cells", .name = "x [c1]" };
	struct report_check fail = { .group = "claims",
				     .name = "B > A",
				     .failure = "claim-not-held",
				     .message = "not held",
				     .text = "iops: 1 < 2\n" };

	report_doc_heading(d, 2, "Results <b>");
	report_doc_para(d, "# not a heading, 100%% & *bold*");
	report_doc_table(d, 2, hdr);
	report_doc_row_links(d, row, links);
	report_doc_table_end(d);
	report_doc_link(d, "back", "../report");
	report_doc_pre(d, "a ``` b");
	report_doc_plot(d, "IOPS", "p/iops.svg", NULL, "gnuplot missing");
	report_doc_plot(d, "bw", "p/bw.svg", "<svg/>", NULL);
	report_doc_check(d, &pass);
	report_doc_check(d, &fail);
}

static const char md_expected[] = "# T & &lt;i>\n\n"
				  "## Results &lt;b>\n\n"
				  "\\# not a heading, 100% & \\*bold\\*\n\n"
				  "| cell | a\\|b |\n|---|---|\n"
				  "| [c1](report-cells/c1.md) | 1.5 ± 0.2 |\n\n"
				  "[back](../report.md)\n\n"
				  "````\na ``` b\n````\n\n"
				  "(IOPS: no plot: gnuplot missing)\n\n"
				  "![bw](p/bw.svg)\n\n";

static const char html_body_expected[] =
    "<h1>T &amp; &lt;i&gt;</h1>\n"
    "<h2>Results &lt;b&gt;</h2>\n"
    "<p># not a heading, 100% &amp; *bold*</p>\n"
    "<table class=\"kv\">\n<tr><th>cell</th><th>a|b</th></tr>\n"
    "<tr><td><a href=\"report-cells/c1.html\">c1</a></td><td class=\"num\">1.5 ± 0.2</td></tr>\n"
    "</table>\n"
    "<p><a href=\"../report.html\">back</a></p>\n"
    "<pre>a ``` b</pre>\n"
    "<p>(IOPS: no plot: gnuplot missing)</p>\n"
    "<figure><img alt=\"bw\" src=\"data:image/svg+xml;base64,PHN2Zy8+\"></figure>\n"
    "</body>\n</html>\n";

static const char junit_expected[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
    "  <testsuite name=\"zbench.run&quot;1\" tests=\"2\" failures=\"1\" errors=\"0\">\n"
    "    <testcase classname=\"zbench.run&quot;1.cells\" name=\"x [c1]\">\n"
    "    </testcase>\n"
    "    <testcase classname=\"zbench.run&quot;1.claims\" name=\"B &gt; A\">\n"
    "      <failure type=\"claim-not-held\" message=\"not held\">iops: 1 &lt; 2\n"
    "</failure>\n"
    "    </testcase>\n"
    "  </testsuite>\n</testsuites>\n";

/* A format of its own: one table that counts what it is given. */
static int counted[16];

static void c_heading(struct report_writer *w, int level, const char *text)
{
	(void)w, (void)level, (void)text;
	counted[0]++;
}

static void c_row(struct report_writer *w, const char *const *cells, const char *const *links)
{
	(void)cells;
	counted[1]++;
	counted[2] += links && links[0] && w->table_cols == 2;
}

static void c_check(struct report_writer *w, const struct report_check *c)
{
	(void)w;
	counted[3] += c->failure != NULL;
}

static char *c_end(struct report_writer *w)
{
	fprintf(w->f, "%zu/%zu", w->failed, w->checks);
	fclose(w->f);
	return w->buf;
}

static const struct report_writer_ops count_ops = {
	.ext = "count", .heading = c_heading, .row = c_row, .check = c_check, .end = c_end
};

int main(void)
{
	static const struct report_writer_ops *const ops[] = { &report_md_ops, &report_html_ops,
							       &report_junit_ops, &count_ops };
	struct report_doc d;
	char *docs[4];
	const char *body;

	report_doc_open_as(&d, "T & <i>", "run\"1", ops, 4);
	fixture(&d);
	report_doc_finish(&d, docs);
	CHECK_STR(docs[0], md_expected);
	CHECK(!strncmp(docs[1], "<!DOCTYPE html>\n", 16));
	CHECK(strstr(docs[1], "<title>T &amp; &lt;i&gt;</title>") != NULL);
	body = strstr(docs[1], "<body>\n");
	CHECK_STR(body ? body + 7 : NULL, html_body_expected);
	CHECK_STR(docs[2], junit_expected);
	CHECK_STR(docs[3], "1/2");
	CHECK(counted[0] == 1 && counted[1] == 1 && counted[2] == 1 && counted[3] == 1);
	for (int i = 0; i < 4; i++)
		free(docs[i]);

	/* a link target cannot leave its attribute or link, whatever it holds */
	{
		static const struct report_writer_ops *const two[] = { &report_md_ops,
								       &report_html_ops };
		static const char *const hdr[] = { "a" };
		const char *row[] = { "x" }, *links[] = { "javascript:alert(1)\" onclick=\"x)" };

		report_doc_open_as(&d, "t", "t", two, 2);
		report_doc_table(&d, 1, hdr);
		report_doc_row_links(&d, row, links);
		report_doc_table_end(&d);
		report_doc_finish(&d, docs);
		CHECK(strstr(docs[0], "[x](javascript%3Aalert%281%29%22%20onclick%3D%22x%29.md)"));
		CHECK(strstr(docs[1], "<a href=\"javascript%3Aalert%281%29%22%20onclick%3D%22x%29"
				      ".html\">x</a>"));
		free(docs[0]);
		free(docs[1]);
	}
	return check_summary("report_writers");
}
