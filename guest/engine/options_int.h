/* The engine's option table (options_table.c), the parsers its rows name (options_hooks.c) and
 * the generic parsing and dumps it drives (options.c), and nothing else. The public interface is
 * options.h. */
#ifndef ZB_ENGINE_OPTIONS_INT_H
#define ZB_ENGINE_OPTIONS_INT_H

#include <stddef.h>

#include "options.h"

enum opt_type {
	OPT_STR,
	OPT_SIZE,     /* uint64_t bytes, units_parse_size() */
	OPT_DURATION, /* uint64_t microseconds, units_parse_duration(); a bare number is seconds */
	OPT_INT,      /* int within [min, max] */
	OPT_U64,      /* uint64_t, any value */
	OPT_BOOL,     /* bool: true/false, 1/0; given bare on the command line: true */
	OPT_ENUM,     /* int, one of `values` */
};

struct opt_value {
	const char *name;
	int value;
};

struct engine_option {
	const char *name;
	const char *alias; /* another accepted name (fio's), or NULL */
	enum opt_type type;
	const char *def; /* default in text form, parsed like a given value; NULL: zero/NULL */
	const char *help;
	size_t off; /* offset of the field in struct job */
	int min, max;
	const struct opt_value *values; /* OPT_ENUM: NULL-terminated */
	/* Optional: called after the value is parsed and stored, to check or derive more. */
	int (*hook)(struct job *job, const struct engine_option *o, char *msg, size_t len);
};

/* ---- options_table.c ------------------------------------------------------------------------ */

/* One row per option, in --help order; engine_noptions rows. */
extern const struct engine_option engine_options[];
extern const size_t engine_noptions;

/* The row named `name` (or whose alias it is), or NULL. */
const struct engine_option *engine_option_find(const char *name);

/* ---- options_hooks.c: the parsers of options with more to them than their type ----------------
 */

/* Each is a row's `hook`: called after the value is parsed and stored. 0, or -1 with the reason
 * in msg. */
int engine_hook_ioengine(struct job *job, const struct engine_option *o, char *msg, size_t len);
int engine_hook_bssplit(struct job *job, const struct engine_option *o, char *msg, size_t len);
int engine_hook_pattern(struct job *job, const struct engine_option *o, char *msg, size_t len);
int engine_hook_tests(struct job *job, const struct engine_option *o, char *msg, size_t len);
int engine_hook_rwmixwrite(struct job *job, const struct engine_option *o, char *msg, size_t len);
int engine_hook_distribution(struct job *job, const struct engine_option *o, char *msg, size_t len);

/* rwmixwrite has no field of its own: options.c parses it here and its hook stores
 * 100 - value into rwmixread. */
extern int engine_rwmixwrite_scratch;

/* ---- options.c ------------------------------------------------------------------------------ */

/* A decimal integer and nothing else: 0, or -1. */
int engine_parse_i64(const char *s, long long *out);

#endif
