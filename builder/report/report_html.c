/* The HTML writer (builder/report/report.h): one self-contained page, plots inline as data: URIs;
 * all text through xml_escape(). */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report.h"

static const char html_style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;"
    "max-width:78em;padding:0 1em;color:#222;line-height:1.4}"
    "h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ddd;padding-bottom:.2em;"
    "margin-top:1.6em}h3{font-size:1.1em}"
    "table{border-collapse:collapse;margin:.6em 0;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
    "table.kv td{overflow-wrap:anywhere}"
    "th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}"
    "figure{display:inline-block;margin:.5em 1em .5em 0}"
    "img{max-width:100%;border:1px solid #eee}"
    ".bad{color:#b00;font-weight:600}.good{color:#070}";

static void html_heading(struct report_writer *w, int level, const char *text)
{
	fprintf(w->f, "<h%d>", level);
	xml_escape(w->f, text);
	fprintf(w->f, "</h%d>\n", level);
}

static void html_begin(struct report_writer *w, const char *title, const char *name)
{
	(void)name;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
	      w->f);
	xml_escape(w->f, title);
	fprintf(w->f, "</title>\n<style>%s</style>\n</head>\n<body>\n", html_style);
	html_heading(w, 1, title);
}

static void html_para(struct report_writer *w, const char *text)
{
	fputs("<p>", w->f);
	xml_escape(w->f, text);
	fputs("</p>\n", w->f);
}

/* <a href="TARGET.html">: the target's safe bytes as they are, anything else percent-encoded
 * (an attribute cannot be closed, no scheme like javascript: can be spelled: ':' is encoded). */
static void html_a(struct report_writer *w, const char *text, const char *target)
{
	fputs("<a href=\"", w->f);
	for (const char *p = target; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("+-._/", c))
			fputc(c, w->f);
		else
			fprintf(w->f, "%%%02X", c);
	}
	fprintf(w->f, ".%s\">", w->ops->ext);
	xml_escape(w->f, text);
	fputs("</a>", w->f);
}

static void html_link(struct report_writer *w, const char *text, const char *target)
{
	fputs("<p>", w->f);
	html_a(w, text, target);
	fputs("</p>\n", w->f);
}

static void html_table(struct report_writer *w, size_t ncols, const char *const *headers)
{
	/* tables of a few columns are key/value lists (the environment) with hashes and paths in
	 * them: those may wrap anywhere; a results table keeps its words whole */
	fputs(ncols <= 3 ? "<table class=\"kv\">\n<tr>" : "<table>\n<tr>", w->f);
	for (size_t i = 0; i < ncols; i++) {
		fputs("<th>", w->f);
		xml_escape(w->f, headers[i]);
		fputs("</th>", w->f);
	}
	fputs("</tr>\n", w->f);
}

/* A cell holding only a number, "12.3 ± 0.4", "+5.1%", "1/2" reads as a number: right-aligned.
 * Hashes and versions have letters and stay left. */
static int looks_numeric(const char *s)
{
	const char *p = s;

	if (!((*s >= '0' && *s <= '9') || ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')))
		return 0;
	if (strchr(s, '.') && strchr(s, '.') != strrchr(s, '.') && !strchr(s, ' '))
		return 0; /* "0.1.0": a version */
	for (; *p; p++) {
		if (strchr("0123456789.+-%/ <", *p))
			continue;
		if (!strncmp(p, "±", strlen("±"))) {
			p += strlen("±") - 1;
			continue;
		}
		if (!strncmp(p, "–", strlen("–"))) {
			p += strlen("–") - 1;
			continue;
		}
		if (!strncmp(p, "n=", 2) || *p == '(' || *p == ')') /* "12.3 (n=3)" */
			continue;
		return 0;
	}
	return 1;
}

static void html_row(struct report_writer *w, const char *const *cells, const char *const *links)
{
	fputs("<tr>", w->f);
	for (size_t i = 0; i < w->table_cols; i++) {
		const char *c = cells[i] ? cells[i] : "";

		fputs(looks_numeric(c) ? "<td class=\"num\">" : "<td>", w->f);
		if (links && links[i])
			html_a(w, c, links[i]);
		else
			xml_escape(w->f, c);
		fputs("</td>", w->f);
	}
	fputs("</tr>\n", w->f);
}

static void html_table_end(struct report_writer *w)
{
	fputs("</table>\n", w->f);
}

static void html_pre(struct report_writer *w, const char *text)
{
	fputs("<pre>", w->f);
	xml_escape(w->f, text);
	fputs("</pre>\n", w->f);
}

static void html_image(struct report_writer *w, const char *alt, const char *rel_path,
		       const char *svg, const char *missing)
{
	size_t n;
	unsigned char *b64;

	(void)rel_path;
	if (!svg) {
		fputs("<p>(", w->f);
		xml_escape(w->f, alt);
		fputs(": no plot: ", w->f);
		xml_escape(w->f, missing);
		fputs(")</p>\n", w->f);
		return;
	}
	n = strlen(svg);
	b64 = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock(b64, (const unsigned char *)svg, (int)n);
	fputs("<figure><img alt=\"", w->f);
	xml_escape(w->f, alt);
	fprintf(w->f, "\" src=\"data:image/svg+xml;base64,%s\"></figure>\n", b64);
	free(b64);
}

static char *html_end(struct report_writer *w)
{
	fputs("</body>\n</html>\n", w->f);
	fclose(w->f);
	return w->buf;
}

const struct report_writer_ops report_html_ops = {
	.ext = "html",
	.begin = html_begin,
	.heading = html_heading,
	.para = html_para,
	.link = html_link,
	.table = html_table,
	.row = html_row,
	.table_end = html_table_end,
	.pre = html_pre,
	.image = html_image,
	.end = html_end,
};
