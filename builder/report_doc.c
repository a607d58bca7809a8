/* The document writer (builder/report.h): Markdown and HTML at once, so both always hold the
 * same tables; text is escaped for each format here and nowhere else. */
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "outdir.h"
#include "report.h"
#include "report_int.h"
#include "util.h"

/* ---- the document writer ----------------------------------------------------------------------
 */

static int is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Plain text into Markdown: escape only what Markdown would otherwise read as markup, so the
 * file stays readable as text ("x86_64", "p < 0.05" stay as they are). `line_start`: the text
 * begins a line, where "#", ">", "-" and "+" would start a block. */
static void md_text(FILE *f, const char *s, int line_start)
{
	const char *start = s;

	for (; *s; s++) {
		char prev = s > start ? s[-1] : ' ', next = s[1];

		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', f); /* line breaks, tabs, and escape sequences for a terminal */
		else if (strchr("\\`*[]|", *s))
			fprintf(f, "\\%c", *s);
		else if (*s == '_' && !(is_word(prev) && is_word(next)))
			fputs("\\_", f); /* emphasis only starts or ends at a word boundary */
		else if (*s == '<' && (is_word(next) || next == '/' || next == '!' || next == '?'))
			fputs("&lt;", f); /* would open an HTML tag */
		else if (line_start && s == start &&
			 (*s == '#' || *s == '>' || *s == '-' || *s == '+'))
			fprintf(f, "\\%c",
				*s); /* a heading, quote or list at the start of a line */
		else
			fputc(*s, f);
	}
}

static void html_text(FILE *f, const char *s)
{
	xml_escape(f, s);
}

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

void report_doc_open(struct report_doc *d, const char *title)
{
	memset(d, 0, sizeof(*d));
	d->md = open_memstream(&d->md_buf, &d->md_len);
	d->html = open_memstream(&d->html_buf, &d->html_len);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
	      d->html);
	html_text(d->html, title);
	fprintf(d->html, "</title>\n<style>%s</style>\n</head>\n<body>\n", html_style);
	report_doc_heading(d, 1, title);
}

void report_doc_heading(struct report_doc *d, int level, const char *text)
{
	fprintf(d->md, "%.*s ", level, "######");
	md_text(d->md, text, 0);
	fputs("\n\n", d->md);
	fprintf(d->html, "<h%d>", level);
	html_text(d->html, text);
	fprintf(d->html, "</h%d>\n", level);
}

void report_doc_para(struct report_doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	md_text(d->md, s, 1);
	fputs("\n\n", d->md);
	fputs("<p>", d->html);
	html_text(d->html, s);
	fputs("</p>\n", d->html);
	free(s);
}

void report_doc_table(struct report_doc *d, size_t ncols, const char *const *headers)
{
	d->table_cols = ncols;
	/* tables of a few columns are key/value lists (the environment) with hashes and paths in
	 * them: those may wrap anywhere; a results table keeps its words whole */
	fputs(ncols <= 3 ? "<table class=\"kv\">\n<tr>" : "<table>\n<tr>", d->html);
	for (size_t i = 0; i < ncols; i++) {
		fputs("| ", d->md);
		md_text(d->md, headers[i], 0);
		fputc(' ', d->md);
		fputs("<th>", d->html);
		html_text(d->html, headers[i]);
		fputs("</th>", d->html);
	}
	fputs("|\n", d->md);
	for (size_t i = 0; i < ncols; i++)
		fputs("|---", d->md);
	fputs("|\n", d->md);
	fputs("</tr>\n", d->html);
}

/* A cell holding only a number, "12.3 ± 0.4", "+5.1%", "1/2" reads as a number: right-aligned
 * in HTML. Hashes and versions have letters and stay left. */
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

void report_doc_row(struct report_doc *d, const char *const *cells)
{
	fputs("<tr>", d->html);
	for (size_t i = 0; i < d->table_cols; i++) {
		const char *c = cells[i] ? cells[i] : "";

		fputs("| ", d->md);
		md_text(d->md, c, 0);
		fputc(' ', d->md);
		fputs(looks_numeric(c) ? "<td class=\"num\">" : "<td>", d->html);
		html_text(d->html, c);
		fputs("</td>", d->html);
	}
	fputs("|\n", d->md);
	fputs("</tr>\n", d->html);
}

void report_doc_table_end(struct report_doc *d)
{
	fputs("\n", d->md);
	fputs("</table>\n", d->html);
	d->table_cols = 0;
}

void report_doc_pre(struct report_doc *d, const char *text)
{
	/* a fence longer than any run of backticks in the text */
	size_t run = 0, longest = 2;

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fprintf(d->md, "%.*s\n", (int)longest + 1, "````````````````````````````````");
	for (const char *p = text; *p; p++) /* as it is, but what a terminal would act on */
		fputc(((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f ? '?'
											   : *p,
		      d->md);
	fprintf(d->md, "%s%.*s\n\n", text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "",
		(int)longest + 1, "````````````````````````````````");
	fputs("<pre>", d->html);
	html_text(d->html, text);
	fputs("</pre>\n", d->html);
}

void report_doc_plot(struct report_doc *d, const char *alt, const char *rel_path, const char *svg,
		     const char *missing)
{
	if (!svg) {
		fputs("(", d->md);
		md_text(d->md, alt, 0);
		fputs(": no plot: ", d->md);
		md_text(d->md, missing ? missing : "unknown reason", 0);
		fputs(")\n\n", d->md);
		fputs("<p>(", d->html);
		html_text(d->html, alt);
		fputs(": no plot: ", d->html);
		html_text(d->html, missing ? missing : "unknown reason");
		fputs(")</p>\n", d->html);
		return;
	}
	fputs("![", d->md);
	md_text(d->md, alt, 0);
	fprintf(d->md, "](%s)\n\n", rel_path);
	{
		size_t n = strlen(svg);
		unsigned char *b64 = xmalloc(4 * ((n + 2) / 3) + 1);

		EVP_EncodeBlock(b64, (const unsigned char *)svg, (int)n);
		fputs("<figure><img alt=\"", d->html);
		html_text(d->html, alt);
		fprintf(d->html, "\" src=\"data:image/svg+xml;base64,%s\"></figure>\n", b64);
		free(b64);
	}
}

void report_doc_finish(struct report_doc *d, char **md, char **html)
{
	fputs("</body>\n</html>\n", d->html);
	fclose(d->md);
	fclose(d->html);
	d->md = d->html = NULL;
	*md = d->md_buf;
	*html = d->html_buf;
	d->md_buf = d->html_buf = NULL;
}

int report_doc_write(struct report_doc *d, const struct outdir *out, const char *stem,
		     struct zb_error *err)
{
	char *md, *html, *name;
	int rc;

	report_doc_finish(d, &md, &html);
	name = xasprintf("%s.md", stem);
	rc = outdir_write(out, name, md, strlen(md), 0644, err);
	free(name);
	if (rc == 0) {
		name = xasprintf("%s.html", stem);
		rc = outdir_write(out, name, html, strlen(html), 0644, err);
		free(name);
	}
	free(md);
	free(html);
	return rc;
}

const char *report_fmt_num(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (a >= 1000 || a == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 10)
		snprintf(buf, len, "%.2f", v);
	else if (a >= 1)
		snprintf(buf, len, "%.3f", v);
	else if (a >= 0.01)
		snprintf(buf, len, "%.4f", v);
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}
