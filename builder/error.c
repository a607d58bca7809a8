#include "error.h"
#include "commands.h"
#include "term.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int error_set(struct zb_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int error_sys(struct zb_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
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

void error_clear(struct zb_error *err)
{
	err->errnum = 0;
	err->msg[0] = '\0';
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
