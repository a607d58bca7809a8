/* Where a value of a JSON text sits: jansson reports line and column only for syntax errors,
 * so when the matrix loader has an error to report on the parsed tree, it asks for the JSON path
 * it is about and this scans the (already accepted) text for it, giving the 1-based line and
 * column of the value or of the object key naming it.
 *
 * Nothing is recorded per value: json_pos_scan() only checks the text and keeps a pointer to it;
 * each lookup scans the text again, in time linear in its length and in constant memory (one
 * path buffer, recursion bounded by JSON_POS_DEPTH_MAX), and stops at the first match. A lookup
 * is for an error message, so a few scans of a 4 MiB file cost nothing that matters, where a
 * recorded path per value cost a gigabyte (issue 12).
 *
 * Paths are written as in error messages: `pool.vdevs[0].disks[1]`, `axes[0].values[2]`. An
 * object key that is not a plain name (it holds '.', '[', ']', '"', '\\' or is empty) is written
 * as `["pool.properties.ashift"]`. The root value's path is "".
 */
#ifndef ZB_JSON_POS_H
#define ZB_JSON_POS_H

#include <stddef.h>

#define JSON_POS_PATH_MAX  512 /* longer paths are truncated (and so never found) */
#define JSON_POS_DEPTH_MAX 128

enum json_pos_kind {
	JSON_POS_VALUE, /* where the value starts */
	JSON_POS_KEY,	/* where the object key naming this path starts (its opening quote) */
};

struct json_pos_entry {
	enum json_pos_kind kind;
	int line, col; /* 1-based; columns count characters, as jansson's do */
};

struct json_pos {
	const char *text; /* not owned: must outlive every lookup */
	size_t len;
	struct json_pos_entry hit;  /* the last lookup's answer */
	size_t values;		    /* values in the text (json_pos_scan) */
	size_t limit;		    /* set before json_pos_scan(): 0, or a number of values */
	struct json_pos_entry over; /* where value number limit + 1 starts, if there is one */
};

/* Check `len` bytes of JSON text and remember them in `pos` for lookups; count its values
 * (pos->values) and, when pos->limit is set (the rest of *pos zeroed), note in pos->over where
 * the value past the limit starts, so a caller can refuse a text before building its tree.
 * Returns 0, or -1 if the text is not well-formed JSON or nests deeper than JSON_POS_DEPTH_MAX;
 * lookups then see the text up to that point. Never reads past len. The text is not copied. */
int json_pos_scan(struct json_pos *pos, const char *text, size_t len);

/* The entry for exactly `path` and `kind` (the first in text order), or NULL. The entry lives in
 * `pos` and is overwritten by the next lookup. */
const struct json_pos_entry *json_pos_find(struct json_pos *pos, const char *path,
					   enum json_pos_kind kind);

/* The entry for `path`, or for its nearest recorded ancestor (`a.b[2].c`, then `a.b[2]`, `a.b`,
 * `a`, ""), so an error about a missing or defaulted key still points at its parent. NULL only
 * if not even the root value is in the text. */
const struct json_pos_entry *json_pos_find_near(struct json_pos *pos, const char *path,
						enum json_pos_kind kind);

/* Forget the text (nothing is allocated; kept for symmetry with json_pos_scan()). */
void json_pos_release(struct json_pos *pos);

/* Append ".key" (or `key` at the root, or `["key"]` when the key is not a plain name) or "[i]"
 * to the NUL-terminated path in buf (of size len). Return 0, or -1 if it was truncated. Shared
 * with the loader so both spell paths identically. */
int json_path_append_key(char *buf, size_t len, const char *key);
int json_path_append_index(char *buf, size_t len, size_t index);

#endif
