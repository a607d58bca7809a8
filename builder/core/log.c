/* Warnings and progress from library code (log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "term.h"
#include "util.h"

static int quiet;
static void (*sink)(const char *line, void *arg);
static void *sink_arg;

void log_set_quiet(int q)
{
	quiet = q;
}

int log_is_quiet(void)
{
	return quiet;
}

void log_set_sink(void (*fn)(const char *line, void *arg), void *arg)
{
	sink = fn;
	sink_arg = arg;
}

/* Format, sanitise and write one piece of a line to stderr in a single stdio call, so that
 * the -j workers' lines (each its own process, stderr unbuffered) do not interleave within a
 * line. */
static void emit(const char *prefix, unsigned flags, const char *fmt, va_list ap)
{
	char *text = NULL, *safe;
	size_t n;
	int len = vasprintf(&text, fmt, ap);

	if (len < 0)
		return;
	n = (size_t)len;
	safe = xmalloc(n + 4);
	term_text(text, n, safe, n + 4);
	if (sink && (flags & LOG_SINK)) {
		char *line = xasprintf("%s%s", prefix, safe);

		sink(line, sink_arg);
		free(line);
		free(safe);
		free(text);
		return;
	}
	fprintf(stderr, "%s%s%s%s", flags & LOG_CLEAR ? "\r\033[K" : "", prefix, safe,
		flags & LOG_NEWLINE ? "\n" : "");
	fflush(stderr);
	free(safe);
	free(text);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("zbench: ", LOG_NEWLINE | LOG_SINK, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	emit("zbench: ", LOG_NEWLINE | LOG_SINK, fmt, ap);
	va_end(ap);
}

void log_progress(unsigned flags, const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	emit("", flags, fmt, ap);
	va_end(ap);
}

void log_block(int erase, const char *above, const char *const *lines, int n, size_t max)
{
	size_t len = 32, w = 0, na = above ? strlen(above) : 0;
	char *out;

	if (quiet)
		return;
	if (max < 4)
		max = 4;
	len += na + 8 + (size_t)n * (max + 8);
	out = xmalloc(len);
	if (erase > 0)
		w += (size_t)snprintf(out, len, "\033[%dA", erase);
	w += (size_t)snprintf(out + w, len - w, "\r\033[J");
	if (above) {
		term_text(above, na, out + w, na + 4);
		w += strlen(out + w);
		out[w++] = '\n';
	}
	for (int i = 0; i < n; i++) {
		term_text(lines[i], max, out + w, max + 4);
		w += strlen(out + w);
		out[w++] = '\n';
	}
	fwrite(out, 1, w, stderr);
	fflush(stderr);
	free(out);
}
