/* Where each value of a JSON text sits: jansson reports line and column only for syntax errors,
 * so the matrix loader scans the (already accepted) text once more and records, for every value
 * and every object key, its JSON path and 1-based line and column. Errors found later, on the
 * parsed tree, are then pointed at the exact place in the file.
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
	char *path; /* owned */
	enum json_pos_kind kind;
	int line, col; /* 1-based; columns count characters, as jansson's do */
};

struct json_pos {
	struct json_pos_entry *v; /* owned, in text order */
	size_t n, cap;
};

/* Scan `len` bytes of JSON text into `pos` (which must be zeroed or released). Returns 0, or -1
 * if the text is not well-formed JSON or nests deeper than JSON_POS_DEPTH_MAX; the entries
 * recorded up to that point are kept (pos must be released either way). Never reads past len. */
int json_pos_scan(struct json_pos *pos, const char *text, size_t len);

/* The entry for exactly `path` and `kind`, or NULL. */
const struct json_pos_entry *json_pos_find(const struct json_pos *pos, const char *path,
					   enum json_pos_kind kind);

/* The entry for `path`, or for its nearest recorded ancestor (`a.b[2].c`, then `a.b[2]`, `a.b`,
 * `a`, ""), so an error about a missing or defaulted key still points at its parent. NULL only
 * if nothing at all was recorded. */
const struct json_pos_entry *json_pos_find_near(const struct json_pos *pos, const char *path,
						enum json_pos_kind kind);

void json_pos_release(struct json_pos *pos);

/* Append ".key" (or `key` at the root, or `["key"]` when the key is not a plain name) or "[i]"
 * to the NUL-terminated path in buf (of size len). Return 0, or -1 if it was truncated. Shared
 * with the loader so both spell paths identically. */
int json_path_append_key(char *buf, size_t len, const char *key);
int json_path_append_index(char *buf, size_t len, size_t index);

#endif
