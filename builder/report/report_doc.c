/* The document (builder/report/report.h): each call goes to every writer of the document, so the
 * formats always hold the same sections; the formats themselves are report_md.c, report_html.c
 * and junit.c. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/outdir.h"
#include "core/util.h"
#include "report.h"

/* Call op `op` of every writer that has it. */
#define EACH(d, op, ...)                                                                           \
	do {                                                                                       \
		for (size_t i_ = 0; i_ < (d)->n; i_++)                                             \
			if ((d)->w[i_].ops->op)                                                    \
				(d)->w[i_].ops->op(&(d)->w[i_], __VA_ARGS__);                      \
	} while (0)

void report_doc_open_as(struct report_doc *d, const char *title, const char *name,
			const struct report_writer_ops *const *ops, size_t n)
{
	memset(d, 0, sizeof(*d));
	if (n > REPORT_DOC_WRITERS)
		abort();
	d->n = n;
	for (size_t i = 0; i < n; i++) {
		d->w[i].ops = ops[i];
		d->w[i].f = open_memstream(&d->w[i].buf, &d->w[i].len);
		if (!d->w[i].f)
			abort();
	}
	EACH(d, begin, title, name);
}

void report_doc_open(struct report_doc *d, const char *title)
{
	static const struct report_writer_ops *const docs[] = { &report_md_ops, &report_html_ops };

	report_doc_open_as(d, title, title, docs, ARRAY_SIZE(docs));
}

void report_doc_heading(struct report_doc *d, int level, const char *text)
{
	EACH(d, heading, level, text);
}

void report_doc_para(struct report_doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	EACH(d, para, s);
	free(s);
}

void report_doc_link(struct report_doc *d, const char *text, const char *target)
{
	EACH(d, link, text, target);
}

void report_doc_table(struct report_doc *d, size_t ncols, const char *const *headers)
{
	for (size_t i = 0; i < d->n; i++)
		d->w[i].table_cols = ncols;
	EACH(d, table, ncols, headers);
}

void report_doc_row(struct report_doc *d, const char *const *cells)
{
	EACH(d, row, cells, NULL);
}

void report_doc_row_links(struct report_doc *d, const char *const *cells, const char *const *links)
{
	EACH(d, row, cells, links);
}

void report_doc_table_end(struct report_doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->w[i].ops->table_end)
			d->w[i].ops->table_end(&d->w[i]);
	for (size_t i = 0; i < d->n; i++)
		d->w[i].table_cols = 0;
}

void report_doc_pre(struct report_doc *d, const char *text)
{
	EACH(d, pre, text);
}

void report_doc_plot(struct report_doc *d, const char *alt, const char *rel_path, const char *svg,
		     const char *missing)
{
	EACH(d, image, alt, rel_path, svg, missing ? missing : "unknown reason");
}

void report_doc_check(struct report_doc *d, const struct report_check *c)
{
	for (size_t i = 0; i < d->n; i++) {
		d->w[i].checks++;
		d->w[i].failed += c->failure != NULL;
	}
	EACH(d, check, c);
}

void report_doc_finish(struct report_doc *d, char **docs)
{
	for (size_t i = 0; i < d->n; i++) {
		docs[i] = d->w[i].ops->end(&d->w[i]);
		d->w[i].f = NULL;
		d->w[i].buf = NULL;
		free(d->w[i].name);
		d->w[i].name = NULL;
	}
	d->n = 0;
}

int report_doc_write(struct report_doc *d, const struct outdir *out, const char *stem,
		     struct zb_error *err)
{
	const struct report_writer_ops *ops[REPORT_DOC_WRITERS];
	char *docs[REPORT_DOC_WRITERS];
	size_t n = d->n;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		ops[i] = d->w[i].ops;
	report_doc_finish(d, docs);
	for (size_t i = 0; i < n; i++) {
		char *name = xasprintf("%s.%s", stem, ops[i]->ext);

		if (rc == 0)
			rc = outdir_write(out, name, docs[i], strlen(docs[i]), 0644, err);
		free(name);
		free(docs[i]);
	}
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
