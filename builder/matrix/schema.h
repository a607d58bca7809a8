/* The matrix schema: one table of keys that drives validation, default filling, axis-path
 * checking, `zbench matrix keys` and the key reference in docs/matrix.md. Two tables: the
 * matrix file's top level (schema_matrix) and one cell configuration, the `base` object
 * (schema_config). Map-like objects whose keys are open (ZFS properties, module parameters,
 * workload options) have one "*" entry whose check() validates the key and its value, using the
 * zpool/zfs property tables (schema_props.c) and the engine's option table
 * (guest/engine/options.h).
 *
 * The tables are in schema_keys.c, the checks they name in schema_checks.c (claims' values in
 * claims.c, which owns the claim grammar), lookup, validation and defaults in schema.c, the
 * Markdown in schema_doc.c (builder/matrix/schema_int.h joins them).
 */
#ifndef ZB_SCHEMA_H
#define ZB_SCHEMA_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "core/error.h"
#include "core/json_pos.h"

enum schema_type {
	SCHEMA_ANY,	 /* any JSON value; checked elsewhere (or by check()) */
	SCHEMA_OBJECT,	 /* an object whose keys are the entries below it */
	SCHEMA_ARRAY,	 /* an array whose items are the entry "path[]" */
	SCHEMA_STRING,	 /* a string (check() may restrict it) */
	SCHEMA_INT,	 /* an integer in min..max, or one of choices ("512|4096") */
	SCHEMA_BOOL,	 /* true or false */
	SCHEMA_SIZE,	 /* a size string ("4k", "1G"; guest/units.h), at least min bytes */
	SCHEMA_DURATION, /* a duration string ("60s"; guest/units.h), at least min seconds */
	SCHEMA_ENUM,	 /* a string, one of choices ("stripe|mirror") */
	SCHEMA_SCALAR,	 /* a string or an integer */
};

#define SCHEMA_REQUIRED 0x1 /* an error if absent */
#define SCHEMA_NONEMPTY 0x2 /* arrays and objects: at least one item */

/* check() returns 0 if the value is fine, SCHEMA_BAD_VALUE or SCHEMA_BAD_KEY with a one-line
 * message in err (error_set(); the error then points at the value or at the key). */
#define SCHEMA_BAD_VALUE (-1)
#define SCHEMA_BAD_KEY	 (-2)

struct schema_key {
	const char *path; /* pattern: "pool.vdevs[].type"; "*" is any key of an open object */
	enum schema_type type;
	unsigned flags;	     /* SCHEMA_REQUIRED, SCHEMA_NONEMPTY */
	const char *choices; /* SCHEMA_ENUM and optionally SCHEMA_INT: "a|b|c" */
	long long min, max;  /* SCHEMA_INT range (max 0: none); SCHEMA_SIZE/DURATION minimum */
	/* Extra check after the type check; `key` is the object key naming the value (for "*"). */
	int (*check)(const char *key, const json_t *v, struct zb_error *err);
	const char *def; /* default as JSON text, filled in when the key is absent; or NULL */
	/* What the key's absence means, as JSON text, for a key that is not filled in (its absence
	 * is kept): canon_config() leaves out an explicit value equal to it. Or NULL. */
	const char *absent;
	const char *typename; /* for the docs, when `type` alone says too little; or NULL */
	const char *help;     /* one line */
};

struct schema {
	const char *name;
	const struct schema_key *keys;
	size_t n;
};

extern const struct schema schema_matrix; /* the top level of a matrix file */
extern const struct schema schema_config; /* one cell's configuration (`base`) */

/* The entry whose pattern is exactly `pattern`, or NULL. schema_find(s, "") is the root. */
const struct schema_key *schema_find(const struct schema *s, const char *pattern);

/* The entry for member `key` of the object entry `parent` (an exact entry, else its "*" entry),
 * or NULL if the key is not allowed there. For "*" entries the key itself is not checked. */
const struct schema_key *schema_child(const struct schema *s, const struct schema_key *parent,
				      const char *key);

/* The item entry of the array entry `parent`, or NULL. */
const struct schema_key *schema_item(const struct schema *s, const struct schema_key *parent);

/* Validate `v` against the subtree of `s` rooted at entry `root` (NULL: the whole schema), with
 * `path` as the path of v (for messages; "" at the top). Returns 0, or -1 with `err` holding the
 * first error in document order: its message, and in err->pos where it is (error_path(): path
 * relative to the validated value in the json_pos syntax, and whether the key or the value is
 * wrong); the caller with the text turns that into a line and column. */
int schema_validate(const struct schema *s, const struct schema_key *root, const json_t *v,
		    const char *path, struct zb_error *err);

/* Check one value against one entry (type, range, choices, check()), without recursing. 0, or
 * -1 with the message in err and err->pos.at saying whether the key or the value is wrong
 * (pos.path ""). */
int schema_check_value(const struct schema_key *sk, const char *key, const json_t *v,
		       struct zb_error *err);

/* Fill in the defaults of every absent key that has one, recursively. `v` must be valid. */
void schema_fill_defaults(const struct schema *s, const struct schema_key *root, json_t *v);

/* A matrix's `reference` and `expect` may name the metrics of builder/matrix/metrics.h and
 * "iozone:TEST" with TEST one of schema_iozone_tests (NULL-terminated);
 * builder/report/report_model.c computes them. */
extern const char *const schema_iozone_tests[];

/* The two schema tables and the zpool/zfs property tables, as Markdown (for docs/matrix.md). */
void schema_print_markdown(FILE *f);

/* "an object", "a string", "an integer", ...: for "expected X, got Y". */
const char *json_type_noun(const json_t *v);

/* Among the NULL-terminated names, the closest to `word` if close enough to be a typo, else
 * NULL. */
const char *schema_did_you_mean(const char *word, const char *const *names, size_t n);

#endif
