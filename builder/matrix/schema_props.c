/* The zpool and zfs properties a matrix may set (zpool(7), zfsprops(7)), with what each takes:
 * the `check` hooks of pool.properties, datasets[].properties and zvols[].properties, and their
 * tables in docs/matrix.md. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "guest/units.h"
#include "schema_int.h"

enum prop_kind {
	PROP_ENUM,   /* choices */
	PROP_INT,    /* integer min..max */
	PROP_POW2,   /* a size (string or integer bytes), a power of two in min..max */
	PROP_SPACE,  /* "none", "auto" if listed in choices, or a size */
	PROP_STRING, /* any string */
	PROP_FN,     /* check() */
};

#define ON_DATASET 0x1
#define ON_ZVOL	   0x2
#define ON_POOL	   0x4

struct prop {
	const char *name;
	enum prop_kind kind;
	unsigned scope;
	const char *choices;
	long long min, max;
	int (*check)(const char *s); /* PROP_FN: 0 if the string value is valid */
	const char *values;	     /* for messages and docs when choices says too little */
	const char *help;
};

static int check_compression(const char *s)
{
	static const char *const plain[] = { "off", "on",   "lz4",  "gzip",
					     "zle", "lzjb", "zstd", "zstd-fast" };
	char *end;
	long n;

	for (size_t i = 0; i < ARRAY_SIZE(plain); i++) {
		if (!strcmp(s, plain[i]))
			return 0;
	}
	if (!strncmp(s, "gzip-", 5) && s[5] >= '1' && s[5] <= '9' && !s[6])
		return 0;
	if (!strncmp(s, "zstd-fast-", 10) && isdigit((unsigned char)s[10])) {
		n = strtol(s + 10, &end, 10);
		if (!*end && ((n >= 1 && n <= 10) || (n >= 20 && n <= 100 && n % 10 == 0) ||
			      n == 500 || n == 1000))
			return 0;
		return -1;
	}
	if (!strncmp(s, "zstd-", 5) && isdigit((unsigned char)s[5])) {
		n = strtol(s + 5, &end, 10);
		if (!*end && n >= 1 && n <= 19 && s[5] != '0')
			return 0;
	}
	return -1;
}

static const struct prop zpool_props[] = {
	{ "ashift", PROP_INT, ON_POOL, NULL, 9, 16, NULL, NULL,
	  "log2 of the vdevs' sector size (9 = 512 B, 12 = 4 KiB)" },
	{ "autoexpand", PROP_ENUM, ON_POOL, "on|off", 0, 0, NULL, NULL, "grow onto larger disks" },
	{ "autoreplace", PROP_ENUM, ON_POOL, "on|off", 0, 0, NULL, NULL,
	  "replace a new disk found in the old one's place" },
	{ "autotrim", PROP_ENUM, ON_POOL, "on|off", 0, 0, NULL, NULL, "TRIM freed space" },
	{ "cachefile", PROP_STRING, ON_POOL, NULL, 0, 0, NULL, NULL,
	  "pool cache file, or \"none\"" },
	{ "comment", PROP_STRING, ON_POOL, NULL, 0, 0, NULL, NULL, "free text kept in the pool" },
	{ "compatibility", PROP_STRING, ON_POOL, NULL, 0, 0, NULL, NULL,
	  "feature set: \"off\", \"legacy\" or a compatibility.d file name" },
	{ "delegation", PROP_ENUM, ON_POOL, "on|off", 0, 0, NULL, NULL, "zfs allow delegation" },
	{ "failmode", PROP_ENUM, ON_POOL, "wait|continue|panic", 0, 0, NULL, NULL,
	  "behaviour on catastrophic failure" },
	{ "listsnapshots", PROP_ENUM, ON_POOL, "on|off", 0, 0, NULL, NULL,
	  "zfs list shows snapshots" },
	{ "multihost", PROP_ENUM, ON_POOL, "on|off", 0, 0, NULL, NULL,
	  "multi-modifier protection" },
	{ "feature@*", PROP_ENUM, ON_POOL, "enabled|disabled", 0, 0, NULL, NULL,
	  "any feature flag, e.g. feature@async_destroy" },
};

static const struct prop zfs_props[] = {
	{ "acltype", PROP_ENUM, ON_DATASET, "off|noacl|nfsv4|posix|posixacl", 0, 0, NULL, NULL,
	  "ACL type" },
	{ "atime", PROP_ENUM, ON_DATASET, "on|off", 0, 0, NULL, NULL, "update access times" },
	{ "casesensitivity", PROP_ENUM, ON_DATASET, "sensitive|insensitive|mixed", 0, 0, NULL, NULL,
	  "file name matching (creation only)" },
	{ "checksum", PROP_ENUM, ON_DATASET | ON_ZVOL,
	  "on|off|fletcher2|fletcher4|sha256|sha512|skein|edonr|blake3|noparity", 0, 0, NULL, NULL,
	  "block checksum" },
	{ "compression", PROP_FN, ON_DATASET | ON_ZVOL, NULL, 0, 0, check_compression,
	  "off|on|lz4|gzip|gzip-1..9|zle|lzjb|zstd|zstd-1..19|zstd-fast|zstd-fast-N",
	  "compression algorithm (zstd-fast-N: N 1..10, 20..100 by 10, 500, 1000)" },
	{ "copies", PROP_INT, ON_DATASET | ON_ZVOL, NULL, 1, 3, NULL, NULL,
	  "copies of each data block" },
	{ "dedup", PROP_ENUM, ON_DATASET | ON_ZVOL,
	  "off|on|verify|sha256|sha256,verify|sha512|sha512,verify|skein|skein,verify|"
	  "edonr,verify|blake3|blake3,verify",
	  0, 0, NULL, NULL, "deduplication" },
	{ "devices", PROP_ENUM, ON_DATASET, "on|off", 0, 0, NULL, NULL, "allow device nodes" },
	{ "direct", PROP_ENUM, ON_DATASET | ON_ZVOL, "standard|always|disabled", 0, 0, NULL, NULL,
	  "O_DIRECT behaviour (OpenZFS 2.3+)" },
	{ "dnodesize", PROP_ENUM, ON_DATASET, "legacy|auto|1k|2k|4k|8k|16k", 0, 0, NULL, NULL,
	  "dnode size" },
	{ "exec", PROP_ENUM, ON_DATASET, "on|off", 0, 0, NULL, NULL, "allow execution" },
	{ "logbias", PROP_ENUM, ON_DATASET | ON_ZVOL, "latency|throughput", 0, 0, NULL, NULL,
	  "ZIL use for synchronous writes" },
	{ "normalization", PROP_ENUM, ON_DATASET, "none|formC|formD|formKC|formKD", 0, 0, NULL,
	  NULL, "Unicode normalization of names (creation only)" },
	{ "prefetch", PROP_ENUM, ON_DATASET | ON_ZVOL, "all|none|metadata", 0, 0, NULL, NULL,
	  "predictive prefetch (OpenZFS 2.2+)" },
	{ "primarycache", PROP_ENUM, ON_DATASET | ON_ZVOL, "all|none|metadata", 0, 0, NULL, NULL,
	  "what the ARC caches" },
	{ "quota", PROP_SPACE, ON_DATASET, "none", 0, 0, NULL, NULL, "limit on space used" },
	{ "readonly", PROP_ENUM, ON_DATASET | ON_ZVOL, "on|off", 0, 0, NULL, NULL, "read-only" },
	{ "recordsize", PROP_POW2, ON_DATASET, NULL, 512, 16 << 20, NULL, NULL,
	  "largest file block: a power of two, 512 to 16M" },
	{ "redundant_metadata", PROP_ENUM, ON_DATASET | ON_ZVOL, "all|most|some|none", 0, 0, NULL,
	  NULL, "extra metadata copies" },
	{ "refquota", PROP_SPACE, ON_DATASET, "none", 0, 0, NULL, NULL,
	  "limit on space referenced" },
	{ "refreservation", PROP_SPACE, ON_DATASET | ON_ZVOL, "none|auto", 0, 0, NULL, NULL,
	  "space guaranteed to the dataset itself" },
	{ "relatime", PROP_ENUM, ON_DATASET, "on|off", 0, 0, NULL, NULL,
	  "update access times lazily" },
	{ "reservation", PROP_SPACE, ON_DATASET | ON_ZVOL, "none", 0, 0, NULL, NULL,
	  "space guaranteed to the dataset and its children" },
	{ "secondarycache", PROP_ENUM, ON_DATASET | ON_ZVOL, "all|none|metadata", 0, 0, NULL, NULL,
	  "what the L2ARC caches" },
	{ "setuid", PROP_ENUM, ON_DATASET, "on|off", 0, 0, NULL, NULL, "honour setuid bits" },
	{ "snapdev", PROP_ENUM, ON_ZVOL, "hidden|visible", 0, 0, NULL, NULL,
	  "device nodes for zvol snapshots" },
	{ "special_small_blocks", PROP_POW2, ON_DATASET, NULL, 0, 16 << 20, NULL, NULL,
	  "blocks up to this size go to the special vdev: 0 or a power of two up to 16M" },
	{ "sync", PROP_ENUM, ON_DATASET | ON_ZVOL, "standard|always|disabled", 0, 0, NULL, NULL,
	  "synchronous write semantics" },
	{ "utf8only", PROP_ENUM, ON_DATASET, "on|off", 0, 0, NULL, NULL,
	  "reject non-UTF-8 names (creation only)" },
	{ "volblocksize", PROP_POW2, ON_ZVOL, NULL, 512, 16 << 20, NULL, NULL,
	  "zvol block size: a power of two, 512 to 16M (above 128k needs OpenZFS 2.2+)" },
	{ "volmode", PROP_ENUM, ON_ZVOL, "default|full|geom|dev|none", 0, 0, NULL, NULL,
	  "how the zvol is exposed" },
	{ "xattr", PROP_ENUM, ON_DATASET, "on|off|sa|dir", 0, 0, NULL, NULL,
	  "extended attribute storage" },
};

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int check_prop_value(const struct prop *p, const json_t *v, struct zb_error *err)
{
	const char *s = json_string_value(v);
	char a[32], b[32];
	uint64_t bytes;

	switch (p->kind) {
	case PROP_INT:
		if (!json_is_integer(v)) {
			error_set(err, 0, "expected an integer, got %s", json_type_noun(v));
			return -1;
		}
		if (json_integer_value(v) < p->min || json_integer_value(v) > p->max) {
			error_set(err, 0, "%s must be %lld..%lld, got %lld", p->name, p->min,
				  p->max, (long long)json_integer_value(v));
			return -1;
		}
		return 0;
	case PROP_POW2:
		if (json_is_integer(v) && json_integer_value(v) >= 0)
			bytes = (uint64_t)json_integer_value(v);
		else if (!s || units_parse_size(s, &bytes) < 0) {
			if (s)
				error_set(err, 0, "expected a size such as \"4k\", got \"%s\"", s);
			else
				error_set(err, 0, "expected a size such as \"4k\", got %s",
					  json_type_noun(v));
			return -1;
		}
		if ((bytes != 0 || p->min > 0) &&
		    (!is_pow2(bytes) || bytes < (uint64_t)p->min || bytes > (uint64_t)p->max)) {
			units_format_size((uint64_t)p->min, a, sizeof(a));
			units_format_size((uint64_t)p->max, b, sizeof(b));
			if (s)
				error_set(err, 0,
					  "%s must be %sa power of two from %s to %s, got \"%s\"",
					  p->name, p->min ? "" : "0 or ", p->min ? a : "512", b, s);
			else
				error_set(err, 0,
					  "%s must be %sa power of two from %s to %s, got %llu",
					  p->name, p->min ? "" : "0 or ", p->min ? a : "512", b,
					  (unsigned long long)bytes);
			return -1;
		}
		return 0;
	case PROP_SPACE:
		if (json_is_integer(v) && json_integer_value(v) >= 0)
			return 0;
		if (s && (schema_in_choices(p->choices, s) || units_parse_size(s, &bytes) == 0))
			return 0;
		schema_format_choices(p->choices, a, sizeof(a));
		if (s)
			error_set(err, 0, "expected %s or a size such as \"1G\", got \"%s\"", a, s);
		else
			error_set(err, 0, "expected %s or a size such as \"1G\", got %s", a,
				  json_type_noun(v));
		return -1;
	case PROP_STRING:
	case PROP_ENUM:
	case PROP_FN:
		if (!s) {
			error_set(err, 0, "expected a string, got %s", json_type_noun(v));
			return -1;
		}
		if (p->kind == PROP_ENUM && !schema_in_choices(p->choices, s)) {
			schema_enum_error("", p->choices, s, err);
			return -1;
		}
		if (p->kind == PROP_FN && p->check(s) < 0) {
			error_set(err, 0, "expected %s, got \"%s\"", p->values, s);
			return -1;
		}
		return 0;
	}
	return -1;
}

static const struct prop *prop_find(const struct prop *table, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(table[i].name);

		if (table[i].name[k - 1] == '*' && !strncmp(name, table[i].name, k - 1) &&
		    name[k - 1])
			return &table[i];
		if (!strcmp(table[i].name, name))
			return &table[i];
	}
	return NULL;
}

static int unknown_prop(const char *what, const struct prop *table, size_t n, unsigned scope,
			const char *key, struct zb_error *err)
{
	const char *names[64];
	size_t k = 0, o;
	const char *best;

	for (size_t i = 0; i < n && k < ARRAY_SIZE(names); i++) {
		if (table[i].scope & scope)
			names[k++] = table[i].name;
	}
	best = schema_did_you_mean(key, names, k);
	if (best)
		error_set(err, 0, "unknown %s property (did you mean \"%s\"?); known:", what, best);
	else
		error_set(err, 0, "unknown %s property; known:", what);
	o = strlen(err->msg);
	for (size_t i = 0; i < k && o < sizeof(err->msg); i++)
		o += (size_t)snprintf(err->msg + o, sizeof(err->msg) - o, " %s", names[i]);
	return SCHEMA_BAD_KEY;
}

int schema_check_zpool_prop(const char *key, const json_t *v, struct zb_error *err)
{
	const struct prop *p = prop_find(zpool_props, ARRAY_SIZE(zpool_props), key);

	if (!p)
		return unknown_prop("pool", zpool_props, ARRAY_SIZE(zpool_props), ON_POOL, key,
				    err);
	return check_prop_value(p, v, err) < 0 ? SCHEMA_BAD_VALUE : 0;
}

static int check_zfs_prop(unsigned scope, const char *key, const json_t *v, struct zb_error *err)
{
	const struct prop *p = prop_find(zfs_props, ARRAY_SIZE(zfs_props), key);

	if (!p)
		return unknown_prop(scope == ON_ZVOL ? "zvol" : "dataset", zfs_props,
				    ARRAY_SIZE(zfs_props), scope, key, err);
	if (!(p->scope & scope)) {
		if (!strcmp(key, "recordsize"))
			error_set(err, 0, "recordsize is not valid on a zvol (use volblocksize)");
		else
			error_set(err, 0, "%s is only valid on %s", key,
				  scope == ON_ZVOL ? "datasets" : "zvols");
		return SCHEMA_BAD_KEY;
	}
	return check_prop_value(p, v, err) < 0 ? SCHEMA_BAD_VALUE : 0;
}

int schema_check_dataset_prop(const char *key, const json_t *v, struct zb_error *err)
{
	return check_zfs_prop(ON_DATASET, key, v, err);
}

int schema_check_zvol_prop(const char *key, const json_t *v, struct zb_error *err)
{
	return check_zfs_prop(ON_ZVOL, key, v, err);
}

/* ---- documentation -------------------------------------------------------------------------- */

static void print_props(FILE *f, const struct prop *table, size_t n, int show_scope)
{
	if (show_scope)
		fprintf(f, "| property | on | values | description |\n|---|---|---|---|\n");
	else
		fprintf(f, "| property | values | description |\n|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct prop *p = &table[i];
		char a[32], b[32];

		fprintf(f, "| `%s` | ", p->name);
		if (show_scope)
			fprintf(f, "%s | ",
				p->scope == (ON_DATASET | ON_ZVOL) ? "both"
				: p->scope == ON_ZVOL		   ? "zvol"
								   : "dataset");
		switch (p->kind) {
		case PROP_ENUM:
		case PROP_SPACE:
			for (const char *c = p->choices; *c;) {
				size_t k = strcspn(c, "|");

				fprintf(f, "%s`%.*s`", c == p->choices ? "" : ", ", (int)k, c);
				c += k;
				if (*c)
					c++;
			}
			if (p->kind == PROP_SPACE)
				fprintf(f, " or a size");
			break;
		case PROP_INT:
			fprintf(f, "integer %lld..%lld", p->min, p->max);
			break;
		case PROP_POW2:
			fprintf(f, "size: %sa power of two %s..%s", p->min ? "" : "0 or ",
				units_format_size(p->min ? (uint64_t)p->min : 512, a, sizeof(a)),
				units_format_size((uint64_t)p->max, b, sizeof(b)));
			break;
		case PROP_STRING:
			fprintf(f, "string");
			break;
		case PROP_FN:
			schema_print_bar_list(f, "", p->values, "`");
			break;
		}
		fprintf(f, " | %s |\n", p->help);
	}
}

void schema_props_print_markdown(FILE *f)
{
	fprintf(f, "\n### Pool properties (`pool.properties`)\n\n");
	print_props(f, zpool_props, ARRAY_SIZE(zpool_props), 0);
	fprintf(f, "\n### Dataset and zvol properties (`datasets[].properties`, "
		   "`zvols[].properties`)\n\n");
	print_props(f, zfs_props, ARRAY_SIZE(zfs_props), 1);
}
