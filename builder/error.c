#include "error.h"
#include "commands.h"

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

void die_message(const char *msg)
{
	fprintf(stderr, "zbench: %s\n", msg);
}
