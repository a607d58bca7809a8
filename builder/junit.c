/* JUnit XML of a run (builder/report.h): a testcase per cell and per claim. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outdir.h"
#include "report.h"
#include "report_int.h"
#include "util.h"

/* ---- JUnit ------------------------------------------------------------------------------------
 */

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

/* One testcase per `expect` claim of the matrix (classname "zbench.MATRIX.claims"), a failure
 * when it did not hold or could not be judged, with its margin and values. Returns the number
 * of failed claims. */
static size_t junit_claims(FILE *f, const struct report_run *run, size_t *n_tests)
{
	const json_t *claims = report_matrix_key(run, "expect"), *c;
	size_t i, failed = 0;

	json_array_foreach (claims, i, c) {
		struct claim_eval e = { 0 };

		report_claim_eval(run, c, &e);
		(*n_tests)++;
		fputs("    <testcase classname=\"zbench.", f);
		xml_text(f, run->name);
		fputs(".claims\" name=\"", f);
		xml_text(f, report_kv(c, "claim"));
		fputs("\">\n", f);
		if (!e.held) {
			failed++;
			fputs("      <failure type=\"", f);
			xml_text(f, strncmp(e.result, "no data", 7) ? "claim-not-held" : "no-data");
			fputs("\" message=\"", f);
			xml_text(f, e.result);
			fputs("\">", f);
			xml_text(f, report_kv(c, "metric"));
			fputs(": ", f);
			xml_text(f, e.detail);
			fputs("\n</failure>\n", f);
		} else {
			fputs("      <system-out>", f);
			xml_text(f, report_kv(c, "metric"));
			fputs(": ", f);
			xml_text(f, e.detail);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
		report_claim_eval_release(&e);
	}
	return failed;
}

char *report_junit(const struct report_run *run, size_t *len)
{
	char *body = NULL, *doc = NULL;
	size_t body_len = 0, tests = 0, failures = 0;
	FILE *f = open_memstream(&body, &body_len), *g;

	for (size_t i = 0; i < run->n_cells; i++) {
		const struct report_cell *c = &run->cells[i];

		tests++;
		fputs("    <testcase classname=\"zbench.", f);
		xml_text(f, run->name);
		fputs(".cells\" name=\"", f);
		xml_text(f, c->summary);
		fputs(" [", f);
		xml_text(f, c->id);
		fputs("]\">\n", f);
		if (c->n_ok != c->n_repeats) {
			const char *type = "failed";

			for (size_t j = 0; j < c->n_attempts; j++)
				if (!c->attempts[j].superseded &&
				    strcmp(c->attempts[j].outcome, "ok")) {
					type = c->attempts[j].outcome;
					break;
				}
			failures++;
			fputs("      <failure type=\"", f);
			xml_text(f, type);
			fputs("\" message=\"", f);
			xml_text(f, c->outcome);
			fputs("\">", f);
			for (size_t j = 0; j < c->n_attempts; j++) {
				const struct report_attempt *a = &c->attempts[j];

				if (a->superseded || !strcmp(a->outcome, "ok"))
					continue;
				fprintf(f, "repeat %d, attempt %d: ", a->repeat, a->attempt);
				xml_text(f, a->outcome);
				fputs(": ", f);
				xml_text(f, a->detail ? a->detail : "(no detail)");
				if (report_str_get(a->rec, "dir")) {
					fputs(" (console log: cells/", f);
					xml_text(f, report_str_get(a->rec, "dir"));
					fputs("/console.log)", f);
				}
				fputc('\n', f);
			}
			fputs("</failure>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	failures += junit_claims(f, run, &tests);
	fclose(f);

	g = open_memstream(&doc, len);
	fputs(
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"zbench.",
	    g);
	xml_text(g, run->name);
	fprintf(
	    g, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n%s  </testsuite>\n</testsuites>\n",
	    tests, failures, body);
	fclose(g);
	free(body);
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
