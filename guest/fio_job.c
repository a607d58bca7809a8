/* Our engine's options as a fio job file, and fio's JSON stream read back (contracts in
 * fio_job.h). */
#include "fio_job.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

#define FIO_VALUE_MAX 1024 /* characters of one string value */

/* How a value of ours becomes fio's. */
enum fio_kind {
	FIO_STR,  /* a string fio takes as it is (enums: the same names in fio) */
	FIO_INT,  /* digits */
	FIO_SIZE, /* our size ("4k", "1g", bytes) as bytes: the units are then not in question */
	FIO_DURATION, /* our duration (bare number: seconds) as "Ns" or "Nus" */
	FIO_BOOL,     /* 0 or 1 */
	FIO_FLAG,     /* fio's set-only options: the bare name when true, nothing when false */
	FIO_SYNC,     /* ours 0/1/false/true/none/sync/dsync; fio 3.33: none, sync or dsync */
	FIO_PATTERN,  /* ours 0xHEX, 'text' or text; fio: 0xHEX or "text" */
	FIO_MODE,     /* ours only: "fio" is fio itself, anything else is refused */
	FIO_REFUSED,  /* no fio counterpart: `why` says so */
};

/* One option of ours. `fio` is fio's name for it (ours is an alias of fio's, or the same);
 * `ours` is our default, written out when the cell leaves it unset and fio's default differs in
 * a way that changes the I/O (NULL: fio's default is ours). Table order is the file's order. */
struct fio_map {
	const char *name;
	const char *fio;
	enum fio_kind kind;
	const char *ours;
	const char *why; /* FIO_REFUSED */
};

#define IOZONE_ONLY "is iozone mode's: fio has no such option"

/* clang-format off */
static const struct fio_map fio_maps[] = {
	{ "name", NULL, FIO_REFUSED, NULL, "is set by the agent: the job is named after the cell" },
	{ "description", "description", FIO_STR, NULL, NULL },
	{ "directory", "directory", FIO_STR, NULL, NULL },
	{ "filename", "filename", FIO_STR, NULL, NULL },
	{ "ioengine", "ioengine", FIO_STR, NULL, NULL },
	{ "rw", "rw", FIO_STR, NULL, NULL },
	{ "readwrite", "rw", FIO_STR, NULL, NULL },
	{ "rwmixread", "rwmixread", FIO_INT, NULL, NULL },
	{ "rwmixwrite", "rwmixwrite", FIO_INT, NULL, NULL },
	{ "bs", "bs", FIO_SIZE, NULL, NULL },
	{ "blocksize", "bs", FIO_SIZE, NULL, NULL },
	{ "bssplit", "bssplit", FIO_STR, NULL, NULL },
	{ "size", "size", FIO_SIZE, NULL, NULL },
	{ "offset", "offset", FIO_SIZE, NULL, NULL },
	{ "numjobs", "numjobs", FIO_INT, NULL, NULL },
	{ "thread", "thread", FIO_FLAG, NULL, NULL },
	{ "iodepth", "iodepth", FIO_INT, NULL, NULL },
	{ "iodepth_batch_submit", "iodepth_batch_submit", FIO_INT, NULL, NULL },
	{ "iodepth_batch", "iodepth_batch_submit", FIO_INT, NULL, NULL },
	{ "iodepth_batch_complete_min", "iodepth_batch_complete_min", FIO_INT, NULL, NULL },
	{ "iodepth_batch_complete", "iodepth_batch_complete_min", FIO_INT, NULL, NULL },
	{ "iodepth_batch_complete_max", "iodepth_batch_complete_max", FIO_INT, NULL, NULL },
	{ "direct", "direct", FIO_BOOL, NULL, NULL },
	{ "sync", "sync", FIO_SYNC, NULL, NULL },
	{ "fsync", "fsync", FIO_INT, NULL, NULL },
	{ "fdatasync", "fdatasync", FIO_INT, NULL, NULL },
	{ "end_fsync", "end_fsync", FIO_BOOL, NULL, NULL },
	{ "overwrite", "overwrite", FIO_BOOL, NULL, NULL },
	{ "invalidate", "invalidate", FIO_BOOL, NULL, NULL },
	{ "time_based", "time_based", FIO_FLAG, NULL, NULL },
	{ "runtime", "runtime", FIO_DURATION, NULL, NULL },
	{ "ramp_time", "ramp_time", FIO_DURATION, NULL, NULL },
	{ "loops", "loops", FIO_INT, NULL, NULL },
	{ "randseed", "randseed", FIO_INT, NULL, NULL },
	{ "randrepeat", "randrepeat", FIO_BOOL, NULL, NULL },
	/* ours draws random offsets with repetition; fio's default random map visits each block
	 * once per loop (and reads that repeat can hit the ARC) */
	{ "norandommap", "norandommap", FIO_FLAG, "1", NULL },
	{ "random_distribution", "random_distribution", FIO_STR, NULL, NULL },
	{ "rate_iops", "rate_iops", FIO_INT, NULL, NULL },
	{ "rate_process", "rate_process", FIO_STR, NULL, NULL },
	{ "buffer_compress_percentage", "buffer_compress_percentage", FIO_INT, NULL, NULL },
	{ "buffer_compress_chunk", "buffer_compress_chunk", FIO_SIZE, NULL, NULL },
	{ "buffer_pattern", "buffer_pattern", FIO_PATTERN, NULL, NULL },
	{ "dedupe_percentage", "dedupe_percentage", FIO_INT, NULL, NULL },
	{ "group_reporting", "group_reporting", FIO_FLAG, NULL, NULL },
	{ "mode", NULL, FIO_MODE, NULL, NULL },
	{ "children", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "tests", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "min_file_size", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "max_file_size", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "min_record_size", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "max_record_size", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "all_record_sizes", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "include_flush", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "include_close", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "stride", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
	{ "stonewall", NULL, FIO_REFUSED, NULL, IOZONE_ONLY },
};
/* clang-format on */

/* fio settings with no option of ours, written after the table's: what our engine always does.
 * fallocate: ours only ftruncates a write job's file; fio's default posix_fallocate() is
 * EOPNOTSUPP on OpenZFS 2.1, and glibc then writes a byte into every block of the file. */
static const char *const fio_fixed[] = { "fallocate=none" };

static const struct fio_map *map_find(const char *name)
{
	for (size_t i = 0; i < sizeof(fio_maps) / sizeof(fio_maps[0]); i++)
		if (!strcmp(fio_maps[i].name, name))
			return &fio_maps[i];
	return NULL;
}

/* A string that reads back as itself in a fio job file: printable ASCII, no '$' (fio expands
 * ${VAR} in job files), no leading or trailing blank (fio strips them), bounded. */
static int safe_string(const char *s)
{
	size_t n = strlen(s);

	if (n > FIO_VALUE_MAX || (n && (s[0] == ' ' || s[n - 1] == ' ')))
		return 0;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '$')
			return 0;
	return 1;
}

/* The value as text: a string as it is, an integer or a boolean printed into buf. */
static const char *value_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%d", json_is_true(v));
	else
		return NULL;
	return buf;
}

static int parse_bool(const char *s, int *out)
{
	if (!strcmp(s, "1") || !strcasecmp(s, "true"))
		*out = 1;
	else if (!strcmp(s, "0") || !strcasecmp(s, "false"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int bad(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The fio text of value `v` of option `m` into out (empty: write nothing). 0 or -1 with msg. */
static int map_value(const struct fio_map *m, const json_t *v, char *out, size_t olen, char *msg,
		     size_t len)
{
	char tmp[64];
	const char *s = value_text(v, tmp, sizeof(tmp));
	uint64_t n;
	int b;

	out[0] = '\0';
	if (!s)
		return bad(msg, len, "option '%s': expected a string, a number or a boolean",
			   m->name);
	switch (m->kind) {
	case FIO_REFUSED:
		return bad(msg, len, "option '%s' %s", m->name, m->why);
	case FIO_MODE:
		if (strcmp(s, "fio"))
			return bad(
			    msg, len,
			    "option 'mode': \"%s\" is zbench-engine's own mode; fio has none", s);
		return 0;
	case FIO_INT:
		if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 20)
			return bad(msg, len, "option '%s': expected digits, got \"%s\"", m->name,
				   s);
		snprintf(out, olen, "%s=%s", m->fio, s);
		return 0;
	case FIO_SIZE:
		if (units_parse_size(s, &n) < 0)
			return bad(msg, len, "option '%s': expected a size, got \"%s\"", m->name,
				   s);
		snprintf(out, olen, "%s=%" PRIu64, m->fio, n);
		return 0;
	case FIO_DURATION:
		if (units_parse_duration(s, &n) < 0)
			return bad(msg, len, "option '%s': expected a duration, got \"%s\"",
				   m->name, s);
		if (n % 1000000 == 0)
			snprintf(out, olen, "%s=%" PRIu64 "s", m->fio, n / 1000000);
		else
			snprintf(out, olen, "%s=%" PRIu64 "us", m->fio, n);
		return 0;
	case FIO_BOOL:
	case FIO_FLAG:
		if (parse_bool(s, &b) < 0)
			return bad(msg, len, "option '%s': expected true/false or 1/0, got \"%s\"",
				   m->name, s);
		if (m->kind == FIO_BOOL)
			snprintf(out, olen, "%s=%d", m->fio, b);
		else if (b)
			snprintf(out, olen, "%s", m->fio);
		return 0;
	case FIO_SYNC:
		if (!strcmp(s, "0") || !strcasecmp(s, "false") || !strcmp(s, "none"))
			s = "none";
		else if (!strcmp(s, "1") || !strcasecmp(s, "true") || !strcmp(s, "sync"))
			s = "sync";
		else if (strcmp(s, "dsync"))
			return bad(msg, len,
				   "option 'sync': expected 0, 1, none, sync or dsync, got "
				   "\"%s\"",
				   s);
		snprintf(out, olen, "%s=%s", m->fio, s);
		return 0;
	case FIO_PATTERN:
		if (!safe_string(s) || strchr(s, '"'))
			break;
		if (!strncasecmp(s, "0x", 2))
			snprintf(out, olen, "%s=%s", m->fio, s);
		else if (s[0] == '\'' && strlen(s) >= 2 && s[strlen(s) - 1] == '\'')
			snprintf(out, olen, "%s=\"%.*s\"", m->fio, (int)strlen(s) - 2, s + 1);
		else
			snprintf(out, olen, "%s=\"%s\"", m->fio, s);
		return 0;
	case FIO_STR:
		if (!safe_string(s))
			break;
		snprintf(out, olen, "%s=%s", m->fio, s);
		return 0;
	}
	return bad(msg, len,
		   "option '%s': a value fio would read differently (control characters, '$', "
		   "quotes or edge blanks, or over %d characters)",
		   m->name, FIO_VALUE_MAX);
}

int fio_option_check(const char *name, const json_t *value, char *msg, size_t len)
{
	const struct fio_map *m = map_find(name);
	char out[FIO_VALUE_MAX + 64];

	if (!m)
		return 0;
	return map_value(m, value, out, sizeof(out), msg, len);
}

/* A growing string. */
struct text {
	char *s;
	size_t n, cap;
};

static void text_line(struct text *t, const char *line)
{
	size_t k = strlen(line);

	if (t->n + k + 2 > t->cap) {
		t->cap = (t->n + k + 2) * 2;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			abort();
	}
	memcpy(t->s + t->n, line, k);
	t->n += k;
	t->s[t->n++] = '\n';
	t->s[t->n] = '\0';
}

char *fio_job_file(const json_t *workload, const char *name, const char *target, int target_is_dev,
		   char *msg, size_t len)
{
	struct text t = { 0 };
	char line[FIO_VALUE_MAX + 64];
	const char *key;
	json_t *v;

	if (!safe_string(name) || !*name || strpbrk(name, "[]") || !safe_string(target) ||
	    !*target) {
		bad(msg, len, "the job's name or target is not safe in a fio job file");
		return NULL;
	}
	/* every option first, so a refused one fails before anything is written */
	json_object_foreach ((json_t *)workload, key, v) {
		if (strcmp(key, "target") && !map_find(key)) {
			bad(msg, len, "option '%s': fio has no mapping for it (guest/fio_job.c)",
			    key);
			return NULL;
		}
	}
	text_line(&t, "; written by the zbench agent from the cell's workload (guest/fio_job.c)");
	snprintf(line, sizeof(line), "[%s]", name);
	text_line(&t, line);
	snprintf(line, sizeof(line), "%s=%s", target_is_dev ? "filename" : "directory", target);
	text_line(&t, line);
	for (size_t i = 0; i < sizeof(fio_maps) / sizeof(fio_maps[0]); i++) {
		const struct fio_map *m = &fio_maps[i];
		json_t *given = json_object_get(workload, m->name);
		json_t *def = NULL;
		int rc;

		if (!given && !m->ours)
			continue;
		if (!given)
			given = def = json_string(m->ours);
		rc = map_value(m, given, line, sizeof(line), msg, len);
		json_decref(def);
		if (rc < 0) {
			free(t.s);
			return NULL;
		}
		if (line[0])
			text_line(&t, line);
	}
	for (size_t i = 0; i < sizeof(fio_fixed) / sizeof(fio_fixed[0]); i++)
		text_line(&t, fio_fixed[i]);
	return t.s;
}

json_t *fio_stream_next(const char *buf, size_t len, size_t *used, size_t *junk)
{
	size_t off = 0;
	json_error_t err;
	json_t *doc;

	*junk = 0;
	for (;;) {
		const char *nl;

		while (off < len && strchr(" \t\r\n", buf[off]))
			off++;
		if (off == len || buf[off] == '{')
			break;
		/* not a document: drop the line (a whole one only: its end may be coming) */
		nl = memchr(buf + off, '\n', len - off);
		if (!nl) {
			*used = *junk = off;
			return NULL;
		}
		off = (size_t)(nl - buf) + 1;
	}
	*junk = off;
	if (off == len) {
		*used = off;
		return NULL;
	}
	doc = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK, &err);
	if (doc) {
		*used = off + (size_t)err.position;
		return doc;
	}
	if (json_error_code(&err) == json_error_premature_end_of_input) {
		*used = off;
		return NULL;
	}
	/* a broken document: resume at the next line that starts one */
	for (size_t i = off + 1; i < len; i++) {
		if (buf[i - 1] == '\n' && buf[i] == '{') {
			*used = *junk = i;
			return NULL;
		}
	}
	*used = off; /* wait for the next document's start */
	return NULL;
}

static json_int_t dir_int(const json_t *job, const char *dir, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(job, dir), key));
}

json_t *fio_status_sample(const json_t *doc)
{
	json_int_t rio = 0, wio = 0, rb = 0, wb = 0, errors = 0;
	size_t i;
	json_t *job;

	json_array_foreach (json_object_get(doc, "jobs"), i, job) {
		rio += dir_int(job, "read", "total_ios");
		wio += dir_int(job, "write", "total_ios");
		rb += dir_int(job, "read", "io_bytes");
		wb += dir_int(job, "write", "io_bytes");
		errors += json_integer_value(json_object_get(job, "error")) != 0;
	}
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:i}", "phase", "run", "read_ios", rio,
			 "write_ios", wio, "read_bytes", rb, "write_bytes", wb, "errors", errors,
			 "layout_bytes", 0);
}
