#include "error.h"
#include "term.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A new error has no position until error_path() or error_at() gives it one. */
static void pos_clear(struct zb_error_pos *pos)
{
	pos->path[0] = '\0';
	pos->at = JSON_POS_VALUE;
	pos->file[0] = '\0';
	pos->line = pos->column = 0;
}

/* The message is formatted aside first: the arguments may quote err's own message. */
static void set_message(struct zb_error *err, int errnum, const char *fmt, va_list ap)
{
	char text[ZB_ERROR_MAX];

	vsnprintf(text, sizeof(text), fmt, ap);
	err->errnum = errnum;
	memcpy(err->msg, text, strlen(text) + 1);
	pos_clear(&err->pos);
}

int error_set(struct zb_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_message(err, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int error_sys(struct zb_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	set_message(err, errnum, fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (errnum != 0 && len < sizeof(err->msg))
		snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(errnum));
	return -1;
}

int error_wrap(struct zb_error *err, const char *fmt, ...)
{
	char prefix[ZB_ERROR_MAX];
	char old[ZB_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation keeps the outer context, which is what a reader needs first. */
	if (snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old) < 0)
		err->msg[0] = '\0';
	return -1;
}

int error_path(struct zb_error *err, const char *path, enum json_pos_kind at, const char *fmt, ...)
{
	char where[JSON_POS_PATH_MAX];
	va_list ap;

	snprintf(where, sizeof(where), "%s", path); /* path may be err's own (re-pointing it) */
	va_start(ap, fmt);
	set_message(err, 0, fmt, ap);
	va_end(ap);
	memcpy(err->pos.path, where, strlen(where) + 1);
	err->pos.at = at;
	return -1;
}

int error_at(struct zb_error *err, const char *file, int line, int column, const char *fmt, ...)
{
	char text[ZB_ERROR_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	err->errnum = 0;
	if (file != err->pos.file)
		snprintf(err->pos.file, sizeof(err->pos.file), "%s", file);
	err->pos.line = line > 0 ? line : 0;
	err->pos.column = line > 0 && column > 0 ? column : 0;
	if (line > 0)
		n = snprintf(err->msg, sizeof(err->msg), "%s:%d:%d: %s", file, line, column, text);
	else
		n = snprintf(err->msg, sizeof(err->msg), "%s: %s", file, text);
	if (n < 0)
		err->msg[0] = '\0';
	return -1;
}

void error_clear(struct zb_error *err)
{
	err->errnum = 0;
	err->msg[0] = '\0';
	pos_clear(&err->pos);
}

/* An error's message quotes what files and guests said (names, values, a guest's detail): each
 * line goes through the terminal sanitiser, the line breaks stay. */
void die_message(const char *msg)
{
	char line[ZB_ERROR_MAX], buf[ZB_ERROR_MAX + 4];
	const char *p = msg;

	fputs("zbench: ", stderr);
	for (;;) {
		size_t n = strcspn(p, "\n");

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		fprintf(stderr, "%s\n", term_text(line, ZB_ERROR_MAX, buf, sizeof(buf)));
		p += n;
		if (*p != '\n' || !p[1])
			break;
		p++;
	}
}
