/* The matrix schema's lookup (an index per table), validation against a table and default
 * filling; the tables are in schema_keys.c. */
#include "schema.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "guest/units.h"
#include "schema_int.h"

/* ---- lists of choices ----------------------------------------------------------------------- */

int schema_in_choices(const char *choices, const char *s)
{
	size_t n = strlen(s);

	for (const char *p = choices; *p;) {
		size_t k = strcspn(p, "|");

		if (k == n && !strncmp(p, s, n))
			return 1;
		p += k;
		if (*p)
			p++;
	}
	return 0;
}

/* `"a", "b" or "c"` from "a|b|c", into buf. */
void schema_format_choices(const char *choices, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const char *p = choices; *p && o < len;) {
		size_t k = strcspn(p, "|");
		const char *sep = o == 0 ? "" : p[k] ? ", " : " or ";
		int w = snprintf(buf + o, len - o, "%s\"%.*s\"", sep, (int)k, p);

		if (w < 0)
			break;
		o += (size_t)w;
		p += k;
		if (*p)
			p++;
	}
}

/* The choices as an array of names for did-you-mean (at most 64). */
static size_t split_choices(const char *choices, char store[][32], const char **names, size_t max)
{
	size_t n = 0;

	for (const char *p = choices; *p && n < max;) {
		size_t k = strcspn(p, "|");

		snprintf(store[n], 32, "%.*s", (int)k, p);
		names[n] = store[n];
		n++;
		p += k;
		if (*p)
			p++;
	}
	return n;
}

void schema_enum_error(const char *what, const char *choices, const char *got, struct zb_error *err)
{
	char list[768], store[64][32];
	const char *names[64];
	size_t n = split_choices(choices, store, names, 64);
	const char *best = schema_did_you_mean(got, names, n);

	schema_format_choices(choices, list, sizeof(list));
	if (best)
		error_set(err, 0, "%s%sexpected %s, got \"%s\" (did you mean \"%s\"?)", what,
			  *what ? ": " : "", list, got, best);
	else
		error_set(err, 0, "%s%sexpected %s, got \"%s\"", what, *what ? ": " : "", list,
			  got);
}

/* ---- lookup --------------------------------------------------------------------------------- */

const struct schema_key *schema_find(const struct schema *s, const char *pattern)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->keys[i].path, pattern))
			return &s->keys[i];
	}
	return NULL;
}

/* Per schema, built at its first lookup: each key's direct members (in table order) and, for an
 * array, its "[]" item, and each default parsed once. A lookup then reads one key's members (a
 * few dozen at most) instead of the whole table for every value of every cell (issue 12:
 * 10^4 cells spent most of their time in that scan). The two schemas are static: so is this. */
struct schema_index {
	const struct schema *s;
	size_t *first, *next, *item; /* key index, SIZE_MAX: none */
	json_t **def;		     /* parsed `def`, or NULL */
};

static struct schema_index *schema_index(const struct schema *s)
{
	static struct schema_index idx[4];
	struct schema_index *x = NULL;
	size_t *last;

	for (size_t i = 0; i < ARRAY_SIZE(idx); i++) {
		if (idx[i].s == s)
			return &idx[i];
		if (!idx[i].s && !x)
			x = &idx[i];
	}
	if (!x)
		abort(); /* more schemas than slots: a programming error */
	x->first = xmalloc(s->n * sizeof(size_t));
	x->next = xmalloc(s->n * sizeof(size_t));
	x->item = xmalloc(s->n * sizeof(size_t));
	x->def = xcalloc(s->n, sizeof(json_t *));
	last = xmalloc(s->n * sizeof(size_t));
	for (size_t i = 0; i < s->n; i++)
		x->first[i] = x->next[i] = x->item[i] = last[i] = SIZE_MAX;
	for (size_t i = 0; i < s->n; i++) {
		const char *p = s->keys[i].path, *dot = strrchr(p, '.');
		size_t n = strlen(p), plen;
		const struct schema_key *parent;
		char buf[256];

		if (s->keys[i].def)
			x->def[i] = json_loads(s->keys[i].def, JSON_DECODE_ANY, NULL);
		if (!*p)
			continue;
		if (n >= 2 && !strcmp(p + n - 2, "[]")) {
			snprintf(buf, sizeof(buf), "%.*s", (int)(n - 2), p);
			parent = schema_find(s, buf);
			if (parent)
				x->item[parent - s->keys] = i;
			continue;
		}
		plen = dot ? (size_t)(dot - p) : 0;
		snprintf(buf, sizeof(buf), "%.*s", (int)plen, p);
		parent = schema_find(s, buf);
		if (!parent)
			continue;
		if (last[parent - s->keys] == SIZE_MAX)
			x->first[parent - s->keys] = i;
		else
			x->next[last[parent - s->keys]] = i;
		last[parent - s->keys] = i;
	}
	free(last);
	x->s = s;
	return x;
}

/* The member `key` of object key `parent` (exactly: "*" finds the open entry), or NULL. */
static const struct schema_key *find_member(const struct schema *s, const struct schema_key *parent,
					    const char *key)
{
	const struct schema_index *x = schema_index(s);
	size_t n = strlen(parent->path);

	for (size_t i = x->first[parent - s->keys]; i != SIZE_MAX; i = x->next[i]) {
		if (!strcmp(s->keys[i].path + (n ? n + 1 : 0), key))
			return &s->keys[i];
	}
	return NULL;
}

const struct schema_key *schema_child(const struct schema *s, const struct schema_key *parent,
				      const char *key)
{
	const struct schema_key *sk;

	if (parent->type != SCHEMA_OBJECT || !strcmp(key, "*"))
		return NULL;
	sk = find_member(s, parent, key);
	return sk ? sk : find_member(s, parent, "*");
}

const struct schema_key *schema_item(const struct schema *s, const struct schema_key *parent)
{
	size_t i;

	if (parent->type != SCHEMA_ARRAY)
		return NULL;
	i = schema_index(s)->item[parent - s->keys];
	return i == SIZE_MAX ? NULL : &s->keys[i];
}

/* The exact (non-"*") member names of an object entry, for did-you-mean. */
static size_t member_names(const struct schema *s, const struct schema_key *parent,
			   const char **names, size_t max)
{
	const struct schema_index *x = schema_index(s);
	size_t n = strlen(parent->path), k = 0;

	for (size_t i = x->first[parent - s->keys]; i != SIZE_MAX && k < max; i = x->next[i]) {
		const char *rest = s->keys[i].path + (n ? n + 1 : 0);

		if (!strpbrk(rest, ".[*"))
			names[k++] = rest;
	}
	return k;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[65], cur[65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

const char *schema_did_you_mean(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, limit = strlen(word) <= 4 ? 1 : strlen(word) <= 8 ? 2 : 3;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, names[i]);

		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best && best_d > 0 && best_d <= limit ? best : NULL;
}

const char *json_type_noun(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

/* ---- validation ----------------------------------------------------------------------------- */

static const char *type_noun(enum schema_type t)
{
	switch (t) {
	case SCHEMA_OBJECT:
		return "an object";
	case SCHEMA_ARRAY:
		return "an array";
	case SCHEMA_INT:
		return "an integer";
	case SCHEMA_BOOL:
		return "a boolean";
	case SCHEMA_SCALAR:
		return "a string or an integer";
	default:
		return "a string";
	}
}

int schema_check_value(const struct schema_key *sk, const char *key, const json_t *v,
		       struct zb_error *err)
{
	const char *s = json_string_value(v);
	uint64_t u;
	int ok, rc;

	switch (sk->type) {
	case SCHEMA_ANY:
		ok = 1;
		break;
	case SCHEMA_OBJECT:
		ok = json_is_object(v);
		break;
	case SCHEMA_ARRAY:
		ok = json_is_array(v);
		break;
	case SCHEMA_INT:
		ok = json_is_integer(v);
		break;
	case SCHEMA_BOOL:
		ok = json_is_boolean(v);
		break;
	case SCHEMA_SCALAR:
		ok = json_is_string(v) || json_is_integer(v);
		break;
	default:
		ok = json_is_string(v);
		break;
	}
	if (!ok) {
		error_set(err, 0, "expected %s, got %s", type_noun(sk->type), json_type_noun(v));
		return -1;
	}
	switch (sk->type) {
	case SCHEMA_INT: {
		long long n = json_integer_value(v);
		char buf[32];

		snprintf(buf, sizeof(buf), "%lld", n);
		if (sk->choices && !schema_in_choices(sk->choices, buf)) {
			char list[256];

			schema_format_choices(sk->choices, list, sizeof(list));
			for (char *p = list; (p = strchr(p, '"'));)
				memmove(p, p + 1, strlen(p));
			error_set(err, 0, "expected %s, got %lld", list, n);
			return -1;
		}
		if (sk->max && (n < sk->min || n > sk->max)) {
			error_set(err, 0, "expected an integer from %lld to %lld, got %lld",
				  sk->min, sk->max, n);
			return -1;
		}
		break;
	}
	case SCHEMA_SIZE:
		if (units_parse_size(s, &u) < 0) {
			error_set(err, 0, "expected a size such as \"4k\", got \"%s\"", s);
			return -1;
		}
		if (u < (uint64_t)sk->min) {
			char buf[32];

			error_set(err, 0, "must be at least %s, got \"%s\"",
				  units_format_size((uint64_t)sk->min, buf, sizeof(buf)), s);
			return -1;
		}
		break;
	case SCHEMA_DURATION:
		if (units_parse_duration(s, &u) < 0) {
			error_set(err, 0, "expected a duration such as \"60s\", got \"%s\"", s);
			return -1;
		}
		if (u < (uint64_t)sk->min * 1000000) {
			error_set(err, 0, "must be at least %llds, got \"%s\"", sk->min, s);
			return -1;
		}
		break;
	case SCHEMA_ENUM:
		if (!schema_in_choices(sk->choices, s)) {
			schema_enum_error("", sk->choices, s, err);
			return -1;
		}
		break;
	default:
		break;
	}
	if (sk->check) {
		rc = sk->check(key, v, err);
		if (rc == SCHEMA_BAD_KEY)
			return error_path(err, "", JSON_POS_KEY, "%s", err->msg);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Point the error in err at `path`. */
static int fail(struct zb_error *err, const char *path, enum json_pos_kind at)
{
	return error_path(err, path, at, "%s", err->msg);
}

static int walk(const struct schema *s, const struct schema_key *sk, const char *key,
		const json_t *v, char *path, struct zb_error *err)
{
	size_t keep = strlen(path);

	if (schema_check_value(sk, key, v, err) < 0)
		return fail(err, path, err->pos.at);

	if (sk->type == SCHEMA_OBJECT) {
		const char *k;
		json_t *member;
		const char *names[64];
		size_t n;

		if ((sk->flags & SCHEMA_NONEMPTY) && json_object_size(v) == 0) {
			error_set(err, 0, "must not be empty");
			return fail(err, path, JSON_POS_VALUE);
		}
		json_object_foreach ((json_t *)v, k, member) {
			const struct schema_key *child = schema_child(s, sk, k);

			json_path_append_key(path, JSON_POS_PATH_MAX, k);
			if (!child) {
				const char *best;

				n = member_names(s, sk, names, ARRAY_SIZE(names));
				best = schema_did_you_mean(k, names, n);
				if (best)
					error_set(err, 0, "unknown key (did you mean \"%s\"?)",
						  best);
				else
					error_set(err, 0, "unknown key");
				return fail(err, path, JSON_POS_KEY);
			}
			if (walk(s, child, k, member, path, err) < 0)
				return -1;
			path[keep] = '\0';
		}
		n = member_names(s, sk, names, ARRAY_SIZE(names));
		for (size_t i = 0; i < n; i++) {
			const struct schema_key *child = find_member(s, sk, names[i]);

			if ((child->flags & SCHEMA_REQUIRED) && !json_object_get(v, names[i])) {
				error_set(err, 0, "missing required key \"%s\"", names[i]);
				return fail(err, path, JSON_POS_VALUE);
			}
		}
	} else if (sk->type == SCHEMA_ARRAY) {
		const struct schema_key *item = schema_item(s, sk);
		json_t *elem;
		size_t i;

		if ((sk->flags & SCHEMA_NONEMPTY) && json_array_size(v) == 0) {
			error_set(err, 0, "must not be empty");
			return fail(err, path, JSON_POS_VALUE);
		}
		json_array_foreach ((json_t *)v, i, elem) {
			json_path_append_index(path, JSON_POS_PATH_MAX, i);
			if (item && walk(s, item, NULL, elem, path, err) < 0)
				return -1;
			path[keep] = '\0';
		}
	}
	return 0;
}

int schema_validate(const struct schema *s, const struct schema_key *root, const json_t *v,
		    const char *path, struct zb_error *err)
{
	char buf[JSON_POS_PATH_MAX];
	const char *key = NULL;

	if (!root)
		root = schema_find(s, "");
	snprintf(buf, sizeof(buf), "%s", path);
	/* a "*" entry checks its key: give it the last component of the path */
	if (root->path[0] && !strcmp(root->path + strlen(root->path) - 1, "*")) {
		const char *dot = strrchr(path, '.');

		key = dot ? dot + 1 : path;
	}
	return walk(s, root, key, v, buf, err);
}

void schema_fill_defaults(const struct schema *s, const struct schema_key *root, json_t *v)
{
	if (!root)
		root = schema_find(s, "");
	if (json_is_object(v) && root->type == SCHEMA_OBJECT) {
		const char *names[64];
		size_t n = member_names(s, root, names, ARRAY_SIZE(names));
		const char *k;
		json_t *member;

		for (size_t i = 0; i < n; i++) {
			const struct schema_key *child = find_member(s, root, names[i]);
			json_t *d = schema_index(s)->def[child - s->keys];

			/* a copy: a cell's configuration is its own */
			if (d && !json_object_get(v, names[i]))
				json_object_set_new(v, names[i], json_deep_copy(d));
		}
		json_object_foreach (v, k, member) {
			const struct schema_key *child = schema_child(s, root, k);

			if (child)
				schema_fill_defaults(s, child, member);
		}
	} else if (json_is_array(v) && root->type == SCHEMA_ARRAY) {
		const struct schema_key *item = schema_item(s, root);
		json_t *elem;
		size_t i;

		if (item) {
			json_array_foreach (v, i, elem)
				schema_fill_defaults(s, item, elem);
		}
	}
}
