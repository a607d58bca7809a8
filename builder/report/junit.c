/* The JUnit XML writer (builder/report/report.h): a testsuite of the document's checks, one
 * testcase per report_check (the sections write one per cell and per claim); the rest of a document
 * it has no use for. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report.h"

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '<')
			fputs("&lt;", f);
		else if (ch == '>')
			fputs("&gt;", f);
		else if (ch == '&')
			fputs("&amp;", f);
		else if (ch == '"')
			fputs("&quot;", f);
		else if (ch < 0x20 && ch != '\n' && ch != '\t')
			fputc(' ', f); /* not allowed in XML 1.0 */
		else
			fputc(ch, f);
	}
}

static void junit_begin(struct report_writer *w, const char *title, const char *name)
{
	(void)title;
	w->name = xstrdup(name);
}

static void junit_check(struct report_writer *w, const struct report_check *c)
{
	FILE *f = w->f;

	fputs("    <testcase classname=\"zbench.", f);
	xml_text(f, w->name);
	fputc('.', f);
	xml_text(f, c->group);
	fputs("\" name=\"", f);
	xml_text(f, c->name);
	fputs("\">\n", f);
	if (c->failure) {
		fputs("      <failure type=\"", f);
		xml_text(f, c->failure);
		fputs("\" message=\"", f);
		xml_text(f, c->message ? c->message : "");
		fputs("\">", f);
		xml_text(f, c->text ? c->text : "");
		fputs("</failure>\n", f);
	} else if (c->text) {
		fputs("      <system-out>", f);
		xml_text(f, c->text);
		fputs("</system-out>\n", f);
	}
	fputs("    </testcase>\n", f);
}

/* The suite's counts go in its opening tag, so the testcases are written after it here. */
static char *junit_end(struct report_writer *w)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *g;

	fclose(w->f);
	g = open_memstream(&doc, &len);
	fputs(
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"zbench.",
	    g);
	xml_text(g, w->name);
	fprintf(
	    g, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n%s  </testsuite>\n</testsuites>\n",
	    w->checks, w->failed, w->buf ? w->buf : "");
	fclose(g);
	free(w->buf);
	return doc;
}

const struct report_writer_ops report_junit_ops = {
	.ext = "xml",
	.begin = junit_begin,
	.check = junit_check,
	.end = junit_end,
};

char *report_junit(const struct report_run *run, size_t *len)
{
	static const struct report_writer_ops *const ops[] = { &report_junit_ops };
	struct report_plotter pl;
	struct report_doc d;
	char *doc;

	report_doc_open_as(&d, run->name, run->name, ops, 1);
	report_plotter_none(&pl);
	report_render(&d, run, &pl);
	report_doc_finish(&d, &doc);
	*len = strlen(doc);
	return doc;
}

int report_write_junit(const struct report_run *run, const char *path, struct zb_error *err)
{
	size_t len;
	char *doc = report_junit(run, &len);
	int rc = write_file_atomic(path, doc, len, 0644, err);

	free(doc);
	if (rc < 0)
		return error_wrap(err, "writing JUnit XML");
	return 0;
}
