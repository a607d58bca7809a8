#include "json_pos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct scanner {
	const char *s;
	size_t len, i;
	int line, col;
	/* the lookup: NULL target for a plain check of the text (no paths built) */
	const char *target;
	size_t target_len;
	enum json_pos_kind kind;
	struct json_pos_entry *hit;
	int found; /* the target was seen: stop scanning (the scan "fails" on purpose) */
	struct json_pos *count; /* json_pos_scan(): count the values here */
	char path[JSON_POS_PATH_MAX];
	int truncated; /* the current path did not fit: nothing below it can match */
};

static int peek(const struct scanner *sc)
{
	return sc->i < sc->len ? (unsigned char)sc->s[sc->i] : -1;
}

/* Consume one byte, keeping line and column (characters, not bytes: UTF-8 continuation bytes do
 * not advance the column). */
static void advance(struct scanner *sc)
{
	unsigned char c;

	if (sc->i >= sc->len)
		return;
	c = (unsigned char)sc->s[sc->i++];
	if (c == '\n') {
		sc->line++;
		sc->col = 1;
	} else if ((c & 0xc0) != 0x80) {
		sc->col++;
	}
}

static void skip_ws(struct scanner *sc)
{
	int c;

	while ((c = peek(sc)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		advance(sc);
}

/* A value or key starts at line:col under the current path: is it the one looked for? */
static int record(struct scanner *sc, enum json_pos_kind kind, int line, int col)
{
	if (sc->count && kind == JSON_POS_VALUE && ++sc->count->values == sc->count->limit + 1) {
		sc->count->over.kind = kind;
		sc->count->over.line = line;
		sc->count->over.col = col;
	}
	if (!sc->target || sc->truncated || kind != sc->kind ||
	    strlen(sc->path) != sc->target_len || memcmp(sc->path, sc->target, sc->target_len))
		return 0;
	sc->hit->kind = kind;
	sc->hit->line = line;
	sc->hit->col = col;
	sc->found = 1;
	return -1;
}

static void put_utf8(char *buf, size_t len, size_t *n, unsigned long cp)
{
	char tmp[4];
	size_t k = 0;

	if (cp == 0)
		cp = '?';
	if (cp < 0x80) {
		tmp[k++] = (char)cp;
	} else if (cp < 0x800) {
		tmp[k++] = (char)(0xc0 | (cp >> 6));
		tmp[k++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		tmp[k++] = (char)(0xe0 | (cp >> 12));
		tmp[k++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		tmp[k++] = (char)(0x80 | (cp & 0x3f));
	} else {
		tmp[k++] = (char)(0xf0 | (cp >> 18));
		tmp[k++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		tmp[k++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		tmp[k++] = (char)(0x80 | (cp & 0x3f));
	}
	for (size_t j = 0; j < k && *n + 1 < len; j++)
		buf[(*n)++] = tmp[j];
}

static int hex4(struct scanner *sc, unsigned long *out)
{
	unsigned long v = 0;

	for (int k = 0; k < 4; k++) {
		int c = peek(sc);

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v * 16 + (unsigned long)(c - 'A' + 10);
		else
			return -1;
		advance(sc);
	}
	*out = v;
	return 0;
}

/* Scan a string at the current '"'; its decoded text (truncated to fit) goes to buf if not NULL.
 * Returns 0, or -1 if it is not a well-formed string. */
static int scan_string(struct scanner *sc, char *buf, size_t len)
{
	size_t n = 0;
	int c;

	if (peek(sc) != '"')
		return -1;
	advance(sc);
	for (;;) {
		c = peek(sc);
		if (c < 0 || c < 0x20)
			return -1;
		advance(sc);
		if (c == '"')
			break;
		if (c == '\\') {
			unsigned long cp, lo;

			c = peek(sc);
			if (c < 0)
				return -1;
			advance(sc);
			switch (c) {
			case '"':
			case '\\':
			case '/':
				cp = (unsigned long)c;
				break;
			case 'b':
				cp = '\b';
				break;
			case 'f':
				cp = '\f';
				break;
			case 'n':
				cp = '\n';
				break;
			case 'r':
				cp = '\r';
				break;
			case 't':
				cp = '\t';
				break;
			case 'u':
				if (hex4(sc, &cp) < 0)
					return -1;
				if (cp >= 0xd800 && cp < 0xdc00 && peek(sc) == '\\' &&
				    sc->i + 1 < sc->len && sc->s[sc->i + 1] == 'u') {
					advance(sc);
					advance(sc);
					if (hex4(sc, &lo) < 0)
						return -1;
					if (lo >= 0xdc00 && lo < 0xe000)
						cp =
						    0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				}
				break;
			default:
				return -1;
			}
			if (buf)
				put_utf8(buf, len, &n, cp);
		} else if (buf && n + 1 < len) {
			buf[n++] = (char)c;
		}
	}
	if (buf)
		buf[n] = '\0';
	return 0;
}

static int scan_value(struct scanner *sc, int depth);

/* Restore the path to `keep` bytes after a member or element was scanned. */
static void path_restore(struct scanner *sc, size_t keep, int truncated)
{
	sc->path[keep] = '\0';
	sc->truncated = truncated;
}

/* After a member or element: restore the path, then 1 past a ',' (another follows), 0 past
 * the closing `close`, -1 at anything else. */
static int scan_next(struct scanner *sc, int close, size_t keep, int truncated)
{
	int c;

	path_restore(sc, keep, truncated);
	skip_ws(sc);
	c = peek(sc);
	if (c != ',' && c != close)
		return -1;
	advance(sc);
	return c == ',';
}

static int scan_object(struct scanner *sc, int depth)
{
	size_t keep = strlen(sc->path);
	int was_truncated = sc->truncated, next;
	char key[256];

	advance(sc); /* '{' */
	skip_ws(sc);
	if (peek(sc) == '}') {
		advance(sc);
		return 0;
	}
	for (;;) {
		int line, col;

		skip_ws(sc);
		line = sc->line;
		col = sc->col;
		if (scan_string(sc, sc->target ? key : NULL, sizeof(key)) < 0)
			return -1;
		if (sc->target && json_path_append_key(sc->path, sizeof(sc->path), key) < 0)
			sc->truncated = 1;
		if (record(sc, JSON_POS_KEY, line, col) < 0)
			return -1;
		skip_ws(sc);
		if (peek(sc) != ':')
			return -1;
		advance(sc);
		if (scan_value(sc, depth + 1) < 0)
			return -1;
		next = scan_next(sc, '}', keep, was_truncated);
		if (next <= 0)
			return next;
	}
}

static int scan_array(struct scanner *sc, int depth)
{
	size_t keep = strlen(sc->path);
	int was_truncated = sc->truncated, next;

	advance(sc); /* '[' */
	skip_ws(sc);
	if (peek(sc) == ']') {
		advance(sc);
		return 0;
	}
	for (size_t index = 0;; index++) {
		if (sc->target && json_path_append_index(sc->path, sizeof(sc->path), index) < 0)
			sc->truncated = 1;
		if (scan_value(sc, depth + 1) < 0)
			return -1;
		next = scan_next(sc, ']', keep, was_truncated);
		if (next <= 0)
			return next;
	}
}

static int scan_value(struct scanner *sc, int depth)
{
	int c;

	if (depth > JSON_POS_DEPTH_MAX)
		return -1;
	skip_ws(sc);
	if (record(sc, JSON_POS_VALUE, sc->line, sc->col) < 0)
		return -1;
	c = peek(sc);
	if (c == '{')
		return scan_object(sc, depth);
	if (c == '[')
		return scan_array(sc, depth);
	if (c == '"')
		return scan_string(sc, NULL, 0);
	/* A number or a literal: its characters up to the next delimiter. */
	if (!((c >= '0' && c <= '9') || c == '-' || c == 't' || c == 'f' || c == 'n'))
		return -1;
	while ((c = peek(sc)) >= 0 && c != ',' && c != '}' && c != ']' && c != ' ' && c != '\t' &&
	       c != '\n' && c != '\r')
		advance(sc);
	return 0;
}

int json_pos_scan(struct json_pos *pos, const char *text, size_t len)
{
	struct scanner sc = { .s = text, .len = len, .line = 1, .col = 1, .count = pos };
	size_t limit = pos->limit;

	memset(pos, 0, sizeof(*pos));
	pos->limit = limit;
	if (!text)
		return -1;
	pos->text = text;
	pos->len = len;
	if (scan_value(&sc, 0) < 0)
		return -1;
	skip_ws(&sc);
	return sc.i == sc.len ? 0 : -1;
}

const struct json_pos_entry *json_pos_find(struct json_pos *pos, const char *path,
					   enum json_pos_kind kind)
{
	struct scanner sc = { .s = pos->text,
			      .len = pos->len,
			      .line = 1,
			      .col = 1,
			      .target = path,
			      .target_len = strlen(path),
			      .kind = kind,
			      .hit = &pos->hit };

	if (!pos->text || sc.target_len >= JSON_POS_PATH_MAX)
		return NULL;
	scan_value(&sc, 0);
	return sc.found ? &pos->hit : NULL;
}

/* Drop the last component of a path in place: "a.b[2]" -> "a.b" -> "a" -> "". */
static void path_parent(char *path)
{
	size_t n = strlen(path);
	int depth = 0;

	if (n == 0)
		return;
	/* A trailing `[...]`: an index, or a quoted key (which may hold '.' and '['). */
	if (path[n - 1] == ']') {
		if (n >= 2 && path[n - 2] == '"') {
			/* find the `["` that opens it, skipping escaped quotes */
			for (size_t i = n - 2; i-- > 0;) {
				if (path[i] == '"' && (i == 0 || path[i - 1] != '\\') && i >= 1 &&
				    path[i - 1] == '[') {
					path[i - 1] = '\0';
					return;
				}
			}
			path[0] = '\0';
			return;
		}
		for (size_t i = n; i-- > 0;) {
			if (path[i] == '[') {
				path[i] = '\0';
				return;
			}
		}
	}
	for (size_t i = n; i-- > 0;) {
		if (path[i] == ']')
			depth++;
		if (path[i] == '.' && depth == 0) {
			path[i] = '\0';
			return;
		}
	}
	path[0] = '\0';
}

const struct json_pos_entry *json_pos_find_near(struct json_pos *pos, const char *path,
						enum json_pos_kind kind)
{
	char buf[JSON_POS_PATH_MAX];
	const struct json_pos_entry *e;

	snprintf(buf, sizeof(buf), "%s", path);
	e = json_pos_find(pos, buf, kind);
	while (!e && buf[0]) {
		path_parent(buf);
		/* Ancestors are reported where their value starts, whatever was asked for. */
		e = json_pos_find(pos, buf, JSON_POS_VALUE);
	}
	return e ? e : json_pos_find(pos, "", JSON_POS_VALUE);
}

void json_pos_release(struct json_pos *pos)
{
	memset(pos, 0, sizeof(*pos));
}

static int plain_key(const char *key)
{
	if (!*key)
		return 0;
	for (const char *p = key; *p; p++) {
		if (*p == '.' || *p == '[' || *p == ']' || *p == '"' || *p == '\\' ||
		    (unsigned char)*p < 0x20)
			return 0;
	}
	return 1;
}

int json_path_append_key(char *buf, size_t len, const char *key)
{
	size_t n = strlen(buf);
	int w;

	if (plain_key(key)) {
		w = snprintf(buf + n, len - n, "%s%s", n ? "." : "", key);
		if (w < 0 || (size_t)w >= len - n) {
			buf[n] = '\0';
			return -1;
		}
		return 0;
	}
	/* `["..."]`, with '"' and '\' escaped and control characters as '?' */
	if (n + 3 >= len)
		return -1;
	buf[n] = '[';
	buf[n + 1] = '"';
	size_t o = n + 2;
	for (const char *p = key; *p; p++) {
		int esc = *p == '"' || *p == '\\';

		if (o + (size_t)esc + 3 >= len) {
			buf[n] = '\0';
			return -1;
		}
		if (esc)
			buf[o++] = '\\';
		buf[o++] = (unsigned char)*p < 0x20 ? '?' : *p;
	}
	buf[o++] = '"';
	buf[o++] = ']';
	buf[o] = '\0';
	return 0;
}

int json_path_append_index(char *buf, size_t len, size_t index)
{
	size_t n = strlen(buf);
	int w = snprintf(buf + n, len - n, "[%zu]", index);

	if (w < 0 || (size_t)w >= len - n) {
		buf[n] = '\0';
		return -1;
	}
	return 0;
}
