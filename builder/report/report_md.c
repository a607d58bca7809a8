/* The Markdown writer (builder/report/report.h): plain text escaped only where Markdown would read
 * it as markup, so the file stays readable as text. */
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Plain text into Markdown: escape only what Markdown would otherwise read as markup ("x86_64",
 * "p < 0.05" stay as they are). `line_start`: the text begins a line, where "#", ">", "-" and
 * "+" would start a block. */
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

/* A link target: the bytes of a safe file name as they are, anything else percent-encoded, so
 * no target can close the link or start markup. */
static void md_target(FILE *f, const char *target, const char *ext)
{
	for (const char *p = target; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (is_word((char)c) || strchr("+-._/", c))
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
	fprintf(f, ".%s", ext);
}

static void md_heading(struct report_writer *w, int level, const char *text)
{
	fprintf(w->f, "%.*s ", level, "######");
	md_text(w->f, text, 0);
	fputs("\n\n", w->f);
}

static void md_begin(struct report_writer *w, const char *title, const char *name)
{
	(void)name;
	md_heading(w, 1, title);
}

static void md_para(struct report_writer *w, const char *text)
{
	md_text(w->f, text, 1);
	fputs("\n\n", w->f);
}

static void md_link_inline(struct report_writer *w, const char *text, const char *target)
{
	fputc('[', w->f);
	md_text(w->f, text, 0);
	fputs("](", w->f);
	md_target(w->f, target, w->ops->ext);
	fputc(')', w->f);
}

static void md_link(struct report_writer *w, const char *text, const char *target)
{
	md_link_inline(w, text, target);
	fputs("\n\n", w->f);
}

static void md_table(struct report_writer *w, size_t ncols, const char *const *headers)
{
	for (size_t i = 0; i < ncols; i++) {
		fputs("| ", w->f);
		md_text(w->f, headers[i], 0);
		fputc(' ', w->f);
	}
	fputs("|\n", w->f);
	for (size_t i = 0; i < ncols; i++)
		fputs("|---", w->f);
	fputs("|\n", w->f);
}

static void md_row(struct report_writer *w, const char *const *cells, const char *const *links)
{
	for (size_t i = 0; i < w->table_cols; i++) {
		const char *c = cells[i] ? cells[i] : "";

		fputs("| ", w->f);
		if (links && links[i])
			md_link_inline(w, c, links[i]);
		else
			md_text(w->f, c, 0);
		fputc(' ', w->f);
	}
	fputs("|\n", w->f);
}

static void md_table_end(struct report_writer *w)
{
	fputs("\n", w->f);
}

static void md_pre(struct report_writer *w, const char *text)
{
	/* a fence longer than any run of backticks in the text */
	size_t run = 0, longest = 2;

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fprintf(w->f, "%.*s\n", (int)longest + 1, "````````````````````````````````");
	for (const char *p = text; *p; p++) /* as it is, but what a terminal would act on */
		fputc(((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f ? '?'
											   : *p,
		      w->f);
	fprintf(w->f, "%s%.*s\n\n", text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "",
		(int)longest + 1, "````````````````````````````````");
}

static void md_image(struct report_writer *w, const char *alt, const char *rel_path,
		     const char *svg, const char *missing)
{
	if (!svg) {
		fputs("(", w->f);
		md_text(w->f, alt, 0);
		fputs(": no plot: ", w->f);
		md_text(w->f, missing, 0);
		fputs(")\n\n", w->f);
		return;
	}
	fputs("![", w->f);
	md_text(w->f, alt, 0);
	fprintf(w->f, "](%s)\n\n", rel_path);
}

static char *md_end(struct report_writer *w)
{
	fclose(w->f);
	return w->buf;
}

const struct report_writer_ops report_md_ops = {
	.ext = "md",
	.begin = md_begin,
	.heading = md_heading,
	.para = md_para,
	.link = md_link,
	.table = md_table,
	.row = md_row,
	.table_end = md_table_end,
	.pre = md_pre,
	.image = md_image,
	.end = md_end,
};
