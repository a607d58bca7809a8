#include "schema.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "disk.h"
#include "libvirt_uri.h"
#include "metrics.h"
#include "options.h"
#include "units.h"
#include "util.h"

/* ---- value checks used by the tables -------------------------------------------------------- */

static int check_name(const char *s, const char *extra, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return -1;
	for (const char *p = s; *p; p++) {
		if (!(isalnum((unsigned char)*p) || strchr(extra, *p)))
			return -1;
	}
	return 0;
}

/* Matrix, axis and case names: they appear in summaries, file names and report columns. */
static int check_ident(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);

	if (check_name(s, "_-", 64) < 0 || s[0] == '-') {
		snprintf(msg, len,
			 "expected a name of letters, digits, '_' and '-' (at most 64), got \"%s\"",
			 s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

static int check_disk_name(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);

	for (const char *p = s; *p; p++) {
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) {
			snprintf(msg, len,
				 "expected a disk name of [a-z0-9_] (at most 32), got \"%s\"", s);
			return SCHEMA_BAD_VALUE;
		}
	}
	if (!*s || strlen(s) > 32) {
		snprintf(msg, len, "expected a disk name of [a-z0-9_] (at most 32), got \"%s\"", s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* zpool(8): a letter first, then letters, digits, '_', '-', ':', '.'; not a vdev type word. We
 * also refuse spaces (they would need quoting everywhere downstream). */
static int check_pool_name(const char *key, const json_t *v, char *msg, size_t len)
{
	static const char *const reserved[] = { "mirror", "raidz", "draid", "spare", "log" };
	const char *s = json_string_value(v);

	if (!isalpha((unsigned char)s[0]) || check_name(s, "_-:.", 200) < 0) {
		snprintf(
		    msg, len,
		    "expected a pool name (a letter, then letters, digits, '_', '-', ':', '.'), "
		    "got \"%s\"",
		    s);
		return SCHEMA_BAD_VALUE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++) {
		if (!strncmp(s, reserved[i], strlen(reserved[i]))) {
			snprintf(msg, len,
				 "pool name \"%s\" is reserved by zpool (it begins with \"%s\")", s,
				 reserved[i]);
			return SCHEMA_BAD_VALUE;
		}
	}
	if (s[0] == 'c' && isdigit((unsigned char)s[1])) {
		snprintf(msg, len, "pool name \"%s\" is reserved by zpool (c[0-9]...)", s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* Datasets and zvols, relative to the pool: "bench", "a/b". */
static int check_dataset_name(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);
	int bad = check_name(s, "_.:-/", 200) < 0 || s[0] == '/' || s[strlen(s) - 1] == '/' ||
		  strstr(s, "//") != NULL;

	/* no "." or ".." components */
	for (const char *p = s; !bad && *p;) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			bad = 1;
		p += n;
		if (*p)
			p++;
	}
	if (bad) {
		snprintf(msg, len,
			 "expected a dataset name relative to the pool ([A-Za-z0-9_.:-] and '/'), "
			 "got \"%s\"",
			 s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

static int check_param_name(const char *key, const char *what, char *msg, size_t len)
{
	for (const char *p = key; *p; p++) {
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			goto bad;
	}
	if (*key && strlen(key) <= 64)
		return 0;
bad:
	snprintf(msg, len, "expected a %s name of [a-z0-9_], got \"%s\"", what, key);
	return SCHEMA_BAD_KEY;
}

static int check_module(const char *key, const json_t *v, char *msg, size_t len)
{
	return check_param_name(key, "kernel module", msg, len);
}

static int check_module_param(const char *key, const json_t *v, char *msg, size_t len)
{
	return check_param_name(key, "module parameter", msg, len);
}

/* "a.b[2].c": keys of [A-Za-z0-9_@:-] and indexes; checked against the schema by the loader. */
static int check_axis_path(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);
	int want_key = 1;

	for (const char *p = s;;) {
		if (want_key) {
			size_t n = 0;

			while (isalnum((unsigned char)p[n]) || (p[n] && strchr("_@:-", p[n])))
				n++;
			if (n == 0)
				goto bad;
			p += n;
			want_key = 0;
		}
		if (!*p)
			return 0;
		if (*p == '.') {
			p++;
			want_key = 1;
		} else if (*p == '[') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto bad;
			while (isdigit((unsigned char)*p))
				p++;
			if (*p++ != ']')
				goto bad;
		} else {
			goto bad;
		}
	}
bad:
	snprintf(msg, len,
		 "expected a path into the configuration such as \"pool.properties.ashift\" or "
		 "\"disks[1].size\", got \"%s\"",
		 s);
	return SCHEMA_BAD_VALUE;
}

/* An image named by the matrix: a recipe (.json) or a cloud image to import (.qcow2); whether it
 * exists is `zbench run`'s business (the matrix may be checked on a machine without them). */
static int check_recipe_path(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);
	size_t n = strlen(s);

	if (n < 6 || n > 1024 || (strcmp(s + n - 5, ".json") && strcmp(s + n - 6, ".qcow2")) ||
	    strpbrk(s, "\n\t")) {
		snprintf(
		    msg, len,
		    "expected the path of an image recipe (a .json file) or of a cloud image to "
		    "import (a .qcow2 file), got \"%s\"",
		    s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* "images": at least two (one is "image"), at most RUN_MAX_IMAGES (8) of them. */
static int check_images(const char *key, const json_t *v, char *msg, size_t len)
{
	size_t n = json_array_size(v);

	(void)key;
	if (n < 2 || n > 8) {
		snprintf(msg, len, "expected 2 to 8 image recipes, got %zu", n);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* ---- disks ----------------------------------------------------------------------------------- */

/* SCSI's rotation rate: 1 means solid state, 2..1024 are reserved, 0 "not reported". */
static int check_rotation_rate(const char *key, const json_t *v, char *msg, size_t len)
{
	json_int_t r = json_integer_value(v);

	if (r != 1 && r < 1025) {
		snprintf(msg, len,
			 "rotation_rate must be 1 (solid state) or 1025..65534 rpm, got %lld",
			 (long long)r);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* Passthrough devices are named by an absolute path; the safety checks run at `zbench run`. */
static int check_device_path(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);

	if (strncmp(s, "/dev/", 5) || strlen(s) > 255 || strstr(s, "/../") ||
	    strpbrk(s, " \t\n,")) {
		snprintf(msg, len,
			 "expected a block device path under /dev/ (no spaces or commas), got "
			 "\"%s\"",
			 s);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

static int check_model_name(const char *key, const json_t *v, char *msg, size_t len)
{
	if (check_name(key, "_-", 64) < 0 || key[0] == '-') {
		snprintf(msg, len,
			 "expected a model name of letters, digits, '_' and '-' (at most 64), got "
			 "\"%s\"",
			 key);
		return SCHEMA_BAD_KEY;
	}
	return 0;
}

/* The attributes a disk and a disk model share (disks[].X and disk_models.NAME.X). */
#define DISK_ATTR_KEYS(P, BUSDEF)                                                                  \
	{ .path = P "bus",                                                                         \
	  .type = SCHEMA_ENUM,                                                                     \
	  .choices = DISK_BUS_CHOICES,                                                             \
	  .def = BUSDEF,                                                                           \
	  .help = "controller the guest sees the disk on (default virtio-blk); sata, usb2 and "    \
		  "usb3 need an image whose kernel has them (docs/disks.md)" },                    \
	    { .path = P "logical_block_size",                                                      \
	      .type = SCHEMA_INT,                                                                  \
	      .choices = "512|4096",                                                               \
	      .help = "sector size the guest sees" },                                              \
	    { .path = P "physical_block_size",                                                     \
	      .type = SCHEMA_INT,                                                                  \
	      .choices = "512|4096",                                                               \
	      .help = "physical sector size the guest sees (>= logical)" },                        \
	    { .path = P "rotational",                                                              \
	      .type = SCHEMA_BOOL,                                                                 \
	      .help = "whether the guest sees a spinning disk (virtio-blk: always true; nvme: "    \
		      "always false)" },                                                           \
	    { .path = P "rotation_rate",                                                           \
	      .type = SCHEMA_INT,                                                                  \
	      .min = 1,                                                                            \
	      .max = 65534,                                                                        \
	      .check = check_rotation_rate,                                                        \
	      .help =                                                                              \
		  "rpm the disk reports (virtio-scsi): 1 = solid state, 1025..65534 = rotating" }, \
	    { .path = P "write_cache",                                                             \
	      .type = SCHEMA_BOOL,                                                                 \
	      .help = "volatile write cache the guest sees (QEMU write-cache); default on" },      \
	    { .path = P "discard",                                                                 \
	      .type = SCHEMA_BOOL,                                                                 \
	      .help = "pass TRIM/UNMAP through to the image (default on)" },                       \
	    { .path = P "throttle",                                                                \
	      .type = SCHEMA_OBJECT,                                                               \
	      .help =                                                                              \
		  "QEMU I/O limits (a throttle group per disk): what makes CI numbers stable" },   \
	    { .path = P "throttle.iops",                                                           \
	      .type = SCHEMA_INT,                                                                  \
	      .min = 1,                                                                            \
	      .max = 100000000,                                                                    \
	      .help = "I/Os per second, reads and writes together" },                              \
	    { .path = P "throttle.bps",                                                            \
	      .type = SCHEMA_SIZE,                                                                 \
	      .min = 4096,                                                                         \
	      .help = "bytes per second, reads and writes together (\"100M\")" },                  \
	    { .path = P "throttle.iops_burst",                                                     \
	      .type = SCHEMA_INT,                                                                  \
	      .min = 1,                                                                            \
	      .max = 100000000,                                                                    \
	      .help = "I/Os per second allowed during a burst (> iops)" },                         \
	    { .path = P "throttle.bps_burst",                                                      \
	      .type = SCHEMA_SIZE,                                                                 \
	      .min = 4096,                                                                         \
	      .help = "bytes per second allowed during a burst (> bps)" },                         \
	{                                                                                          \
		.path = P "throttle.burst_length", .type = SCHEMA_DURATION, .min = 1,              \
		.help = "how long a burst may last (default 1s)"                                   \
	}

/* ---- zpool and zfs properties ---------------------------------------------------------------- */

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

static int in_choices(const char *choices, const char *s)
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
static void format_choices(const char *choices, char *buf, size_t len)
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

static void enum_error(const char *what, const char *choices, const char *got, char *msg,
		       size_t len)
{
	char list[768], store[64][32];
	const char *names[64];
	size_t n = split_choices(choices, store, names, 64);
	const char *best = schema_did_you_mean(got, names, n);

	format_choices(choices, list, sizeof(list));
	if (best)
		snprintf(msg, len, "%s%sexpected %s, got \"%s\" (did you mean \"%s\"?)", what,
			 *what ? ": " : "", list, got, best);
	else
		snprintf(msg, len, "%s%sexpected %s, got \"%s\"", what, *what ? ": " : "", list,
			 got);
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int check_prop_value(const struct prop *p, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);
	char a[32], b[32];
	uint64_t bytes;

	switch (p->kind) {
	case PROP_INT:
		if (!json_is_integer(v)) {
			snprintf(msg, len, "expected an integer, got %s", json_type_noun(v));
			return -1;
		}
		if (json_integer_value(v) < p->min || json_integer_value(v) > p->max) {
			snprintf(msg, len, "%s must be %lld..%lld, got %lld", p->name, p->min,
				 p->max, (long long)json_integer_value(v));
			return -1;
		}
		return 0;
	case PROP_POW2:
		if (json_is_integer(v) && json_integer_value(v) >= 0)
			bytes = (uint64_t)json_integer_value(v);
		else if (!s || units_parse_size(s, &bytes) < 0) {
			if (s)
				snprintf(msg, len, "expected a size such as \"4k\", got \"%s\"", s);
			else
				snprintf(msg, len, "expected a size such as \"4k\", got %s",
					 json_type_noun(v));
			return -1;
		}
		if ((bytes != 0 || p->min > 0) &&
		    (!is_pow2(bytes) || bytes < (uint64_t)p->min || bytes > (uint64_t)p->max)) {
			units_format_size((uint64_t)p->min, a, sizeof(a));
			units_format_size((uint64_t)p->max, b, sizeof(b));
			if (s)
				snprintf(msg, len,
					 "%s must be %sa power of two from %s to %s, got \"%s\"",
					 p->name, p->min ? "" : "0 or ", p->min ? a : "512", b, s);
			else
				snprintf(msg, len,
					 "%s must be %sa power of two from %s to %s, got %llu",
					 p->name, p->min ? "" : "0 or ", p->min ? a : "512", b,
					 (unsigned long long)bytes);
			return -1;
		}
		return 0;
	case PROP_SPACE:
		if (json_is_integer(v) && json_integer_value(v) >= 0)
			return 0;
		if (s && (in_choices(p->choices, s) || units_parse_size(s, &bytes) == 0))
			return 0;
		format_choices(p->choices, a, sizeof(a));
		if (s)
			snprintf(msg, len, "expected %s or a size such as \"1G\", got \"%s\"", a,
				 s);
		else
			snprintf(msg, len, "expected %s or a size such as \"1G\", got %s", a,
				 json_type_noun(v));
		return -1;
	case PROP_STRING:
	case PROP_ENUM:
	case PROP_FN:
		if (!s) {
			snprintf(msg, len, "expected a string, got %s", json_type_noun(v));
			return -1;
		}
		if (p->kind == PROP_ENUM && !in_choices(p->choices, s)) {
			enum_error("", p->choices, s, msg, len);
			return -1;
		}
		if (p->kind == PROP_FN && p->check(s) < 0) {
			snprintf(msg, len, "expected %s, got \"%s\"", p->values, s);
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
			const char *key, char *msg, size_t len)
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
		o = (size_t)snprintf(
		    msg, len, "unknown %s property (did you mean \"%s\"?); known:", what, best);
	else
		o = (size_t)snprintf(msg, len, "unknown %s property; known:", what);
	for (size_t i = 0; i < k && o < len; i++)
		o += (size_t)snprintf(msg + o, len - o, " %s", names[i]);
	return SCHEMA_BAD_KEY;
}

static int check_zpool_prop(const char *key, const json_t *v, char *msg, size_t len)
{
	const struct prop *p = prop_find(zpool_props, ARRAY_SIZE(zpool_props), key);

	if (!p)
		return unknown_prop("pool", zpool_props, ARRAY_SIZE(zpool_props), ON_POOL, key, msg,
				    len);
	return check_prop_value(p, v, msg, len) < 0 ? SCHEMA_BAD_VALUE : 0;
}

static int check_zfs_prop(unsigned scope, const char *key, const json_t *v, char *msg, size_t len)
{
	const struct prop *p = prop_find(zfs_props, ARRAY_SIZE(zfs_props), key);

	if (!p)
		return unknown_prop(scope == ON_ZVOL ? "zvol" : "dataset", zfs_props,
				    ARRAY_SIZE(zfs_props), scope, key, msg, len);
	if (!(p->scope & scope)) {
		if (!strcmp(key, "recordsize"))
			snprintf(msg, len, "recordsize is not valid on a zvol (use volblocksize)");
		else
			snprintf(msg, len, "%s is only valid on %s", key,
				 scope == ON_ZVOL ? "datasets" : "zvols");
		return SCHEMA_BAD_KEY;
	}
	return check_prop_value(p, v, msg, len) < 0 ? SCHEMA_BAD_VALUE : 0;
}

static int check_dataset_prop(const char *key, const json_t *v, char *msg, size_t len)
{
	return check_zfs_prop(ON_DATASET, key, v, msg, len);
}

static int check_zvol_prop(const char *key, const json_t *v, char *msg, size_t len)
{
	return check_zfs_prop(ON_ZVOL, key, v, msg, len);
}

/* Workload options are the engine's (guest/engine/options.c): the host checks them with the same
 * table the guest parses them with. The engine says "unknown option..." for a name it lacks. */
static int check_workload_option(const char *key, const json_t *v, char *msg, size_t len)
{
	if (engine_option_check(key, v, msg, len) == 0)
		return 0;
	if (!strncmp(msg, "unknown option", 14)) {
		snprintf(msg, len,
			 "unknown workload option (see `zbench-engine --help` for the list)");
		return SCHEMA_BAD_KEY;
	}
	return SCHEMA_BAD_VALUE;
}

/* ---- the tables ----------------------------------------------------------------------------- */

static int check_cv_percent(const char *key, const json_t *v, char *msg, size_t len)
{
	if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) >= 100) {
		snprintf(msg, len, "expected a number between 0 and 100 (percent)");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* Metrics a reference or a claim may name: builder/metrics.h's table and, for iozone mode,
 * "iozone:TEST", the mean throughput of that test over its results (guest/engine, output). */
const char *const schema_iozone_tests[] = {
	"write",	"rewrite",	 "read",	   "reread",	  "random_read",
	"random_write", "backward_read", "record_rewrite", "stride_read", "fwrite",
	"refwrite",	"fread",	 "refread",	   NULL,
};

static int check_claim_metric(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);

	(void)key;
	if (metric_find(s))
		return 0;
	if (!strncmp(s, "iozone:", 7))
		for (size_t i = 0; schema_iozone_tests[i]; i++)
			if (!strcmp(s + 7, schema_iozone_tests[i]))
				return 0;
	snprintf(msg, len,
		 "unknown metric \"%s\"; known: read_iops write_iops iops read_bw write_bw bw "
		 "read_lat_mean read_lat_p99 write_lat_mean write_lat_p99 iozone:TEST (TEST: write "
		 "rewrite read reread random_read random_write backward_read record_rewrite "
		 "stride_read fwrite refwrite fread refread)",
		 s);
	return SCHEMA_BAD_VALUE;
}

static int check_claim_number(const char *key, const json_t *v, char *msg, size_t len)
{
	(void)key;
	if (!json_is_number(v) || !(json_number_value(v) > 0)) {
		snprintf(msg, len, "expected a number greater than 0");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

static int check_claim_percent(const char *key, const json_t *v, char *msg, size_t len)
{
	(void)key;
	if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) >= 100) {
		snprintf(msg, len, "expected a number from 0 to under 100 (percent)");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

static int check_claim_rho(const char *key, const json_t *v, char *msg, size_t len)
{
	(void)key;
	if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1) {
		snprintf(msg, len, "expected a number above 0 and at most 1 (Spearman's rho)");
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

/* A libvirt URI zbench can drive (builder/libvirt_uri.c): checked when the matrix loads, not
 * when the first cell would connect, as a URI from a file (it may not run programs). */
static int check_libvirt_uri(const char *key, const json_t *v, char *msg, size_t len)
{
	struct libvirt_uri u;
	char m[1536];

	(void)key;
	if (libvirt_uri_check(json_string_value(v), LIBVIRT_URI_FILE, &u, m, sizeof(m)) < 0) {
		snprintf(msg, len, "%s", m);
		return SCHEMA_BAD_VALUE;
	}
	return 0;
}

static const struct schema_key matrix_keys[] = {
	{ .path = "", .type = SCHEMA_OBJECT, .help = "a matrix file" },
	{ .path = "zbench",
	  .type = SCHEMA_INT,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "1",
	  .help = "format version: 1" },
	{ .path = "name",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_ident,
	  .typename = "name",
	  .help = "the study's name ([A-Za-z0-9_-], at most 64)" },
	{ .path = "description", .type = SCHEMA_STRING, .help = "what the study measures" },
	{ .path = "image",
	  .type = SCHEMA_STRING,
	  .check = check_recipe_path,
	  .typename = "path",
	  .help = "image recipe for `zbench run` without -i: absolute, or relative to the "
		  "repository, else to the matrix file's directory (default "
		  "images/debian12-zfs.json)" },
	{ .path = "images",
	  .type = SCHEMA_ARRAY,
	  .check = check_images,
	  .help = "image recipes compared in one run, instead of \"image\" (at most 8; "
		  "`zbench run` without -i): every cell runs on each, back to back, in an "
		  "order that alternates between repeats (docs/compare.md)" },
	{ .path = "images[]",
	  .type = SCHEMA_STRING,
	  .check = check_recipe_path,
	  .typename = "path",
	  .help = "one image recipe, found as \"image\" is" },
	{ .path = "backend",
	  .type = SCHEMA_ENUM,
	  .choices = "qemu|libvirt",
	  .def = "\"qemu\"",
	  .help = "VM backend for `zbench run` without --backend: qemu starts QEMU itself, "
		  "libvirt goes through libvirt (docs/libvirt.md)" },
	{ .path = "libvirt_uri",
	  .type = SCHEMA_STRING,
	  .check = check_libvirt_uri,
	  .typename = "URI",
	  .help = "libvirt connection of the libvirt backend without --libvirt-uri or "
		  "$ZBENCH_LIBVIRT_URI (default: the embedded driver, root in the run directory)" },
	{ .path = "base",
	  .type = SCHEMA_ANY,
	  .flags = SCHEMA_REQUIRED,
	  .typename = "object",
	  .help = "the base configuration (next table); must be valid on its own" },
	{ .path = "axes",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "parameters to vary; cells are their cartesian product, first axis slowest" },
	{ .path = "axes[]", .type = SCHEMA_OBJECT, .help = "one axis" },
	{ .path = "axes[].name",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_ident,
	  .typename = "name",
	  .help = "its name in cell summaries (unique)" },
	{ .path = "axes[].path",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_axis_path,
	  .typename = "path",
	  .help = "where in the configuration the value goes: \"pool.properties.ashift\", "
		  "\"disks[1].size\"" },
	{ .path = "axes[].values",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "the values, each valid where the path points" },
	{ .path = "axes[].values[]", .type = SCHEMA_ANY, .help = "one value" },
	{ .path = "cases",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "named points instead of the single base point; crossed with the axes" },
	{ .path = "cases[]", .type = SCHEMA_OBJECT, .help = "one case" },
	{ .path = "cases[].name",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_ident,
	  .typename = "name",
	  .help = "its name in cell summaries (unique)" },
	{ .path = "cases[].set",
	  .type = SCHEMA_OBJECT,
	  .flags = SCHEMA_REQUIRED,
	  .help = "path: value pairs applied to base, paths as in axes[].path" },
	{ .path = "cases[].set.*", .type = SCHEMA_ANY, .help = "one value" },
	{ .path = "repeats",
	  .type = SCHEMA_INT,
	  .min = 1,
	  .max = 1000,
	  .def = "1",
	  .help = "how many times the runner runs each cell" },
	{ .path = "disk_models",
	  .type = SCHEMA_OBJECT,
	  .help = "the matrix's own disk models, by name (disks[].model); they shadow built-in "
		  "ones" },
	{ .path = "disk_models.*",
	  .type = SCHEMA_OBJECT,
	  .check = check_model_name,
	  .typename = "object",
	  .help = "one model: the disk attributes below" },
	{ .path = "disk_models.*.description",
	  .type = SCHEMA_STRING,
	  .help = "what it stands for" },
	DISK_ATTR_KEYS("disk_models.*.", NULL),
	{ .path = "retries",
	  .type = SCHEMA_INT,
	  .min = 0,
	  .max = 10,
	  .def = "0",
	  .help = "extra attempts at a cell that did not end ok (each attempt is recorded)" },
	{ .path = "order",
	  .type = SCHEMA_ENUM,
	  .choices = "shuffled|sequential",
	  .def = "\"shuffled\"",
	  .help =
	      "run order of the cells within each repeat; shuffled spreads drift over all cells" },
	{ .path = "seed",
	  .type = SCHEMA_INT,
	  .min = 0,
	  .max = 2147483647,
	  .help =
	      "seed of the shuffle (default: derived from the matrix, so reruns keep the order)" },
	{ .path = "adaptive",
	  .type = SCHEMA_OBJECT,
	  .help = "after `repeats`, repeat cells whose metric still varies too much" },
	{ .path = "adaptive.metric",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "iops|read_iops|write_iops|bw|read_bw|write_bw",
	  .help = "the metric whose coefficient of variation decides (sum over fio jobs)" },
	{ .path = "adaptive.cv_percent",
	  .type = SCHEMA_ANY,
	  .check = check_cv_percent,
	  .def = "3.5",
	  .typename = "number",
	  .help = "repeat until the CV is at most this (the Phoronix Test Suite uses 3.5)" },
	{ .path = "adaptive.max_repeats",
	  .type = SCHEMA_INT,
	  .min = 1,
	  .max = 1000,
	  .def = "10",
	  .help = "never more repeats than this per cell" },
	{ .path = "reference",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "published values to compare with, per cell (docs/matrix.md, \"References\")" },
	{ .path = "reference[]", .type = SCHEMA_OBJECT, .help = "one table or figure of a source" },
	{ .path = "reference[].source",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "where the numbers are: \"seeds/000_49621e76a22189bd.txt, section 'ashift'\"" },
	{ .path = "reference[].metric",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_claim_metric,
	  .typename = "metric",
	  .help = "what the values measure: write_iops, read_bw, iozone:random_write, ..." },
	{ .path = "reference[].note",
	  .type = SCHEMA_STRING,
	  .help = "how the source's setup differs, how values were read off" },
	{ .path = "reference[].values",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "the published values" },
	{ .path = "reference[].values[]", .type = SCHEMA_OBJECT, .help = "one published value" },
	{ .path = "reference[].values[].match",
	  .type = SCHEMA_OBJECT,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the cell: axis names (and \"case\") to values; must select exactly one cell" },
	{ .path = "reference[].values[].match.*",
	  .type = SCHEMA_ANY,
	  .help = "a value of the axis" },
	{ .path = "reference[].values[].value",
	  .type = SCHEMA_ANY,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_claim_number,
	  .typename = "number",
	  .help = "the published value, in the metric's unit" },
	{ .path = "expect",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "claims `zbench report` judges and CI gates on (docs/matrix.md, \"Claims\")" },
	{ .path = "expect[]",
	  .type = SCHEMA_OBJECT,
	  .help = "one claim: exactly one of compare, ratio, ranking, peak" },
	{ .path = "expect[].claim",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the claim in words (the JUnit test name)" },
	{ .path = "expect[].note",
	  .type = SCHEMA_STRING,
	  .help = "where it comes from; why it should (not) hold on emulated disks" },
	{ .path = "expect[].metric",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_claim_metric,
	  .typename = "metric",
	  .help = "the metric compared (mean over a cell's ok repeats)" },
	{ .path = "expect[].where",
	  .type = SCHEMA_OBJECT,
	  .help =
	      "only the cells with these axis values; other free axes make groups, each judged" },
	{ .path = "expect[].where.*", .type = SCHEMA_ANY, .help = "a value of the axis" },
	{ .path = "expect[].compare",
	  .type = SCHEMA_OBJECT,
	  .help = "lhs OP rhs: the cells the two matches select" },
	{ .path = "expect[].compare.lhs",
	  .type = SCHEMA_OBJECT,
	  .flags = SCHEMA_REQUIRED,
	  .help = "axis values of the left cell" },
	{ .path = "expect[].compare.lhs.*", .type = SCHEMA_ANY, .help = "a value of the axis" },
	{ .path = "expect[].compare.op",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "<|>",
	  .help = "lhs lower or higher than rhs" },
	{ .path = "expect[].compare.rhs",
	  .type = SCHEMA_OBJECT,
	  .flags = SCHEMA_REQUIRED,
	  .help = "axis values of the right cell" },
	{ .path = "expect[].compare.rhs.*", .type = SCHEMA_ANY, .help = "a value of the axis" },
	{ .path = "expect[].compare.margin_percent",
	  .type = SCHEMA_ANY,
	  .check = check_claim_percent,
	  .def = "0",
	  .typename = "number",
	  .help = "by at least this much: lhs < rhs * (1 - m/100), lhs > rhs * (1 + m/100)" },
	{ .path = "expect[].ratio",
	  .type = SCHEMA_OBJECT,
	  .help = "num / den within [min, max]: \"at least 1.5x\", \"within 20%\"" },
	{ .path = "expect[].ratio.num",
	  .type = SCHEMA_OBJECT,
	  .flags = SCHEMA_REQUIRED,
	  .help = "axis values of the numerator's cell" },
	{ .path = "expect[].ratio.num.*", .type = SCHEMA_ANY, .help = "a value of the axis" },
	{ .path = "expect[].ratio.den",
	  .type = SCHEMA_OBJECT,
	  .flags = SCHEMA_REQUIRED,
	  .help = "axis values of the denominator's cell" },
	{ .path = "expect[].ratio.den.*", .type = SCHEMA_ANY, .help = "a value of the axis" },
	{ .path = "expect[].ratio.min",
	  .type = SCHEMA_ANY,
	  .check = check_claim_number,
	  .typename = "number",
	  .help = "the ratio is at least this (min or max or both)" },
	{ .path = "expect[].ratio.max",
	  .type = SCHEMA_ANY,
	  .check = check_claim_number,
	  .typename = "number",
	  .help = "the ratio is at most this" },
	{ .path = "expect[].ranking",
	  .type = SCHEMA_OBJECT,
	  .help = "the metric rises or falls along an axis (Spearman's rho)" },
	{ .path = "expect[].ranking.axis",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .typename = "name",
	  .help = "an axis name, or \"case\"" },
	{ .path = "expect[].ranking.order",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "increasing|decreasing",
	  .help = "along the values in the order listed" },
	{ .path = "expect[].ranking.values",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_NONEMPTY,
	  .help = "the axis values in order, at least 2 (default: all, in matrix order)" },
	{ .path = "expect[].ranking.values[]", .type = SCHEMA_ANY, .help = "a value of the axis" },
	{ .path = "expect[].ranking.min_rho",
	  .type = SCHEMA_ANY,
	  .check = check_claim_rho,
	  .def = "1",
	  .typename = "number",
	  .help = "holds when rho (sign by order) is at least this in every group; 1: strictly" },
	{ .path = "expect[].peak",
	  .type = SCHEMA_OBJECT,
	  .help = "the metric is highest (or lowest) at one value of an axis" },
	{ .path = "expect[].peak.axis",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .typename = "name",
	  .help = "an axis name, or \"case\"" },
	{ .path = "expect[].peak.at",
	  .type = SCHEMA_ANY,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the axis value where the extreme is" },
	{ .path = "expect[].peak.kind",
	  .type = SCHEMA_ENUM,
	  .choices = "max|min",
	  .def = "\"max\"",
	  .help = "highest or lowest" },
};

/* Kernel arguments reach the guest's /proc/cmdline verbatim: printable ASCII, bounded. */
static int check_kernel_args(const char *key, const json_t *v, char *msg, size_t len)
{
	const char *s = json_string_value(v);

	if (strlen(s) > 1024) {
		snprintf(msg, len, "longer than 1024 characters");
		return SCHEMA_BAD_VALUE;
	}
	for (; *s; s++) {
		if (*s < 0x20 || *s > 0x7e) {
			snprintf(msg, len, "only printable ASCII is allowed");
			return SCHEMA_BAD_VALUE;
		}
	}
	return 0;
}

static const struct schema_key config_keys[] = {
	{ .path = "", .type = SCHEMA_OBJECT, .help = "one cell's configuration" },
	{ .path = "vm", .type = SCHEMA_OBJECT, .def = "{}", .help = "the virtual machine" },
	{ .path = "vm.memory",
	  .type = SCHEMA_SIZE,
	  .min = 128 << 20,
	  .def = "\"1G\"",
	  .help = "guest memory, at least 128M" },
	{ .path = "vm.cpus",
	  .type = SCHEMA_INT,
	  .min = 1,
	  .max = 64,
	  .def = "2",
	  .help = "virtual CPUs" },
	{ .path = "vm.accel",
	  .type = SCHEMA_ENUM,
	  .choices = "auto|kvm|tcg",
	  .def = "\"auto\"",
	  .help = "accelerator; auto probes KVM and falls back to TCG" },
	{ .path = "vm.kernel_args",
	  .type = SCHEMA_STRING,
	  .check = check_kernel_args,
	  .def = "\"\"",
	  .help = "appended to the guest kernel's command line (zbench.fault=... injects faults, "
		  "docs/protocol.md)" },
	{ .path = "disks",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "fresh disks given to the guest" },
	{ .path = "disks[]", .type = SCHEMA_OBJECT, .help = "one disk" },
	{ .path = "disks[].name",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_disk_name,
	  .typename = "name",
	  .help = "[a-z0-9_], unique; vdevs use it" },
	{ .path = "disks[].size",
	  .type = SCHEMA_SIZE,
	  .min = DISK_SIZE_MIN,
	  .help = "capacity, at least 80M (ZFS's smallest vdev is 64M and zpool create reserves "
		  "8M of a whole disk); required unless `device` is given" },
	{ .path = "disks[].device",
	  .type = SCHEMA_STRING,
	  .check = check_device_path,
	  .typename = "path",
	  .help = "a host block device passed through (raw, no host cache) instead of a fresh "
		  "image; needs `zbench run --allow-device PATH` (docs/disks.md)" },
	{ .path = "disks[].model",
	  .type = SCHEMA_STRING,
	  .check = check_ident,
	  .typename = "model name",
	  .help = "a disk model (top-level disk_models, else built in: docs/disks.md) whose bus, "
		  "geometry and throttle fill what the disk leaves out" },
	DISK_ATTR_KEYS("disks[].", "\"virtio-blk\""),
	{ .path = "pool", .type = SCHEMA_OBJECT, .flags = SCHEMA_REQUIRED, .help = "the pool" },
	{ .path = "pool.name",
	  .type = SCHEMA_STRING,
	  .check = check_pool_name,
	  .def = "\"tank\"",
	  .typename = "pool name",
	  .help = "zpool naming rules, no spaces" },
	{ .path = "pool.vdevs",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "top-level data vdevs" },
	{ .path = "pool.vdevs[]", .type = SCHEMA_OBJECT, .help = "one vdev" },
	{ .path = "pool.vdevs[].type",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "stripe|mirror|raidz1|raidz2|raidz3",
	  .help = "stripe >= 1 disk, mirror >= 2, raidzN >= N+1" },
	{ .path = "pool.vdevs[].disks",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "disk names" },
	{ .path = "pool.vdevs[].disks[]",
	  .type = SCHEMA_STRING,
	  .typename = "disk name",
	  .help = "a disk of `disks`, used once in the pool" },
	{ .path = "pool.log",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "separate intent log vdevs, as pool.vdevs" },
	{ .path = "pool.log[]", .type = SCHEMA_OBJECT, .help = "one log vdev" },
	{ .path = "pool.log[].type",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "stripe|mirror|raidz1|raidz2|raidz3",
	  .help = "as pool.vdevs[].type" },
	{ .path = "pool.log[].disks",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "disk names" },
	{ .path = "pool.log[].disks[]",
	  .type = SCHEMA_STRING,
	  .typename = "disk name",
	  .help = "a disk of `disks`" },
	{ .path = "pool.cache", .type = SCHEMA_ARRAY, .def = "[]", .help = "L2ARC disks" },
	{ .path = "pool.cache[]",
	  .type = SCHEMA_STRING,
	  .typename = "disk name",
	  .help = "a disk of `disks`" },
	{ .path = "pool.special",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "special allocation class vdevs, as pool.vdevs" },
	{ .path = "pool.special[]", .type = SCHEMA_OBJECT, .help = "one special vdev" },
	{ .path = "pool.special[].type",
	  .type = SCHEMA_ENUM,
	  .flags = SCHEMA_REQUIRED,
	  .choices = "stripe|mirror|raidz1|raidz2|raidz3",
	  .help = "as pool.vdevs[].type" },
	{ .path = "pool.special[].disks",
	  .type = SCHEMA_ARRAY,
	  .flags = SCHEMA_REQUIRED | SCHEMA_NONEMPTY,
	  .help = "disk names" },
	{ .path = "pool.special[].disks[]",
	  .type = SCHEMA_STRING,
	  .typename = "disk name",
	  .help = "a disk of `disks`" },
	{ .path = "pool.properties",
	  .type = SCHEMA_OBJECT,
	  .def = "{}",
	  .help = "zpool properties (zpool create -o), table below" },
	{ .path = "pool.properties.*",
	  .type = SCHEMA_SCALAR,
	  .check = check_zpool_prop,
	  .typename = "string or integer",
	  .help = "a known zpool property, or feature@NAME" },
	{ .path = "datasets",
	  .type = SCHEMA_ARRAY,
	  .def = "[]",
	  .help = "file systems to create, in order" },
	{ .path = "datasets[]", .type = SCHEMA_OBJECT, .help = "one file system" },
	{ .path = "datasets[].name",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_dataset_name,
	  .typename = "dataset name",
	  .help = "relative to the pool: \"bench\", \"a/b\"; unique" },
	{ .path = "datasets[].properties",
	  .type = SCHEMA_OBJECT,
	  .def = "{}",
	  .help = "zfs properties (zfs create -o), table below" },
	{ .path = "datasets[].properties.*",
	  .type = SCHEMA_SCALAR,
	  .check = check_dataset_prop,
	  .typename = "string or integer",
	  .help = "a known dataset property" },
	{ .path = "zvols", .type = SCHEMA_ARRAY, .def = "[]", .help = "volumes to create" },
	{ .path = "zvols[]", .type = SCHEMA_OBJECT, .help = "one volume" },
	{ .path = "zvols[].name",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .check = check_dataset_name,
	  .typename = "dataset name",
	  .help = "relative to the pool; unique among datasets and zvols" },
	{ .path = "zvols[].size",
	  .type = SCHEMA_SIZE,
	  .flags = SCHEMA_REQUIRED,
	  .min = 1,
	  .help = "volume size" },
	{ .path = "zvols[].properties",
	  .type = SCHEMA_OBJECT,
	  .def = "{}",
	  .help = "zfs properties for volumes, table below" },
	{ .path = "zvols[].properties.*",
	  .type = SCHEMA_SCALAR,
	  .check = check_zvol_prop,
	  .typename = "string or integer",
	  .help = "a known zvol property" },
	{ .path = "module_params",
	  .type = SCHEMA_OBJECT,
	  .def = "{}",
	  .help = "kernel module parameters, set before the pool is created" },
	{ .path = "module_params.*",
	  .type = SCHEMA_OBJECT,
	  .check = check_module,
	  .typename = "object",
	  .help = "module name ([a-z0-9_]) -> its parameters" },
	{ .path = "module_params.*.*",
	  .type = SCHEMA_SCALAR,
	  .check = check_module_param,
	  .typename = "string or integer",
	  .help = "parameter name ([a-z0-9_]) -> value" },
	{ .path = "workload",
	  .type = SCHEMA_OBJECT,
	  .flags = SCHEMA_REQUIRED,
	  .help = "the workload engine's job, in fio option names" },
	{ .path = "workload.target",
	  .type = SCHEMA_STRING,
	  .flags = SCHEMA_REQUIRED,
	  .typename = "dataset name",
	  .help = "the dataset or zvol the job runs on" },
	{ .path = "workload.*",
	  .type = SCHEMA_ANY,
	  .check = check_workload_option,
	  .typename = "per option",
	  .help = "a fio option the engine knows (rw, bs, size, ...)" },
	{ .path = "timeouts", .type = SCHEMA_OBJECT, .def = "{}", .help = "deadlines" },
	{ .path = "timeouts.boot",
	  .type = SCHEMA_DURATION,
	  .min = 1,
	  .def = "\"120s\"",
	  .help = "power-on to the guest's first message" },
	{ .path = "timeouts.heartbeat",
	  .type = SCHEMA_DURATION,
	  .min = 1,
	  .def = "\"60s\"",
	  .help = "longest silence from the guest" },
	{ .path = "timeouts.overall",
	  .type = SCHEMA_DURATION,
	  .min = 1,
	  .help = "whole cell; absent: derived by the runner from the workload" },
};

const struct schema schema_matrix = { "matrix", matrix_keys, ARRAY_SIZE(matrix_keys) };
const struct schema schema_config = { "config", config_keys, ARRAY_SIZE(config_keys) };

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

int schema_check_value(const struct schema_key *sk, const char *key, const json_t *v, char *msg,
		       size_t len, enum json_pos_kind *at)
{
	const char *s = json_string_value(v);
	uint64_t u;
	int ok, rc;

	*at = JSON_POS_VALUE;
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
		snprintf(msg, len, "expected %s, got %s", type_noun(sk->type), json_type_noun(v));
		return -1;
	}
	switch (sk->type) {
	case SCHEMA_INT: {
		long long n = json_integer_value(v);
		char buf[32];

		snprintf(buf, sizeof(buf), "%lld", n);
		if (sk->choices && !in_choices(sk->choices, buf)) {
			char list[256];

			format_choices(sk->choices, list, sizeof(list));
			for (char *p = list; (p = strchr(p, '"'));)
				memmove(p, p + 1, strlen(p));
			snprintf(msg, len, "expected %s, got %lld", list, n);
			return -1;
		}
		if (sk->max && (n < sk->min || n > sk->max)) {
			snprintf(msg, len, "expected an integer from %lld to %lld, got %lld",
				 sk->min, sk->max, n);
			return -1;
		}
		break;
	}
	case SCHEMA_SIZE:
		if (units_parse_size(s, &u) < 0) {
			snprintf(msg, len, "expected a size such as \"4k\", got \"%s\"", s);
			return -1;
		}
		if (u < (uint64_t)sk->min) {
			char buf[32];

			snprintf(msg, len, "must be at least %s, got \"%s\"",
				 units_format_size((uint64_t)sk->min, buf, sizeof(buf)), s);
			return -1;
		}
		break;
	case SCHEMA_DURATION:
		if (units_parse_duration(s, &u) < 0) {
			snprintf(msg, len, "expected a duration such as \"60s\", got \"%s\"", s);
			return -1;
		}
		if (u < (uint64_t)sk->min * 1000000) {
			snprintf(msg, len, "must be at least %llds, got \"%s\"", sk->min, s);
			return -1;
		}
		break;
	case SCHEMA_ENUM:
		if (!in_choices(sk->choices, s)) {
			enum_error("", sk->choices, s, msg, len);
			return -1;
		}
		break;
	default:
		break;
	}
	if (sk->check) {
		rc = sk->check(key, v, msg, len);
		if (rc == SCHEMA_BAD_KEY)
			*at = JSON_POS_KEY;
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int fail(struct schema_error *e, const char *path, enum json_pos_kind at)
{
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->at = at;
	return -1;
}

static int walk(const struct schema *s, const struct schema_key *sk, const char *key,
		const json_t *v, char *path, struct schema_error *e)
{
	size_t keep = strlen(path);

	if (schema_check_value(sk, key, v, e->msg, sizeof(e->msg), &e->at) < 0)
		return fail(e, path, e->at);

	if (sk->type == SCHEMA_OBJECT) {
		const char *k;
		json_t *member;
		const char *names[64];
		size_t n;

		if ((sk->flags & SCHEMA_NONEMPTY) && json_object_size(v) == 0) {
			snprintf(e->msg, sizeof(e->msg), "must not be empty");
			return fail(e, path, JSON_POS_VALUE);
		}
		json_object_foreach ((json_t *)v, k, member) {
			const struct schema_key *child = schema_child(s, sk, k);

			json_path_append_key(path, JSON_POS_PATH_MAX, k);
			if (!child) {
				const char *best;

				n = member_names(s, sk, names, ARRAY_SIZE(names));
				best = schema_did_you_mean(k, names, n);
				if (best)
					snprintf(e->msg, sizeof(e->msg),
						 "unknown key (did you mean \"%s\"?)", best);
				else
					snprintf(e->msg, sizeof(e->msg), "unknown key");
				return fail(e, path, JSON_POS_KEY);
			}
			if (walk(s, child, k, member, path, e) < 0)
				return -1;
			path[keep] = '\0';
		}
		n = member_names(s, sk, names, ARRAY_SIZE(names));
		for (size_t i = 0; i < n; i++) {
			const struct schema_key *child = find_member(s, sk, names[i]);

			if ((child->flags & SCHEMA_REQUIRED) && !json_object_get(v, names[i])) {
				snprintf(e->msg, sizeof(e->msg), "missing required key \"%s\"",
					 names[i]);
				return fail(e, path, JSON_POS_VALUE);
			}
		}
	} else if (sk->type == SCHEMA_ARRAY) {
		const struct schema_key *item = schema_item(s, sk);
		json_t *elem;
		size_t i;

		if ((sk->flags & SCHEMA_NONEMPTY) && json_array_size(v) == 0) {
			snprintf(e->msg, sizeof(e->msg), "must not be empty");
			return fail(e, path, JSON_POS_VALUE);
		}
		json_array_foreach ((json_t *)v, i, elem) {
			json_path_append_index(path, JSON_POS_PATH_MAX, i);
			if (item && walk(s, item, NULL, elem, path, e) < 0)
				return -1;
			path[keep] = '\0';
		}
	}
	return 0;
}

int schema_validate(const struct schema *s, const struct schema_key *root, const json_t *v,
		    const char *path, struct schema_error *e)
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
	return walk(s, root, key, v, buf, e);
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

/* ---- documentation -------------------------------------------------------------------------- */

/* "a|b|c" as "a, b, c" (a '|' would end a Markdown table cell), each item in `quote`. */
static void print_bar_list(FILE *f, const char *lead, const char *list, const char *quote)
{
	fprintf(f, "%s", lead);
	for (const char *c = list; *c;) {
		size_t k = strcspn(c, "|");

		fprintf(f, "%s%s%.*s%s", c == list ? "" : ", ", quote, (int)k, c, quote);
		c += k;
		if (*c)
			c++;
	}
}

static void print_type(FILE *f, const struct schema_key *sk)
{
	char list[512];

	if (sk->typename) {
		fprintf(f, "%s", sk->typename);
		return;
	}
	switch (sk->type) {
	case SCHEMA_ANY:
		fprintf(f, "any");
		break;
	case SCHEMA_OBJECT:
		fprintf(f, "object");
		break;
	case SCHEMA_ARRAY:
		fprintf(f, "array");
		break;
	case SCHEMA_STRING:
		fprintf(f, "string");
		break;
	case SCHEMA_INT:
		if (sk->choices)
			print_bar_list(f, "integer: ", sk->choices, "");
		else if (sk->max)
			fprintf(f, "integer %lld..%lld", sk->min, sk->max);
		else
			fprintf(f, "integer");
		break;
	case SCHEMA_BOOL:
		fprintf(f, "boolean");
		break;
	case SCHEMA_SIZE:
		fprintf(f, "size");
		break;
	case SCHEMA_DURATION:
		fprintf(f, "duration");
		break;
	case SCHEMA_ENUM:
		format_choices(sk->choices, list, sizeof(list));
		for (char *p = list; (p = strchr(p, '"'));)
			*p = '`';
		fprintf(f, "%s", list);
		break;
	case SCHEMA_SCALAR:
		fprintf(f, "string or integer");
		break;
	}
}

static void print_table(FILE *f, const struct schema *s, const char *prefix)
{
	fprintf(f, "| key | type | default | description |\n|---|---|---|---|\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct schema_key *sk = &s->keys[i];
		char path[256];
		size_t o = 0;

		if (!sk->path[0])
			continue;
		/* "*" reads as <name> in the docs */
		for (const char *p = sk->path; *p && o + 8 < sizeof(path); p++) {
			if (*p == '*') {
				memcpy(path + o, "<name>", 6);
				o += 6;
			} else {
				path[o++] = *p;
			}
		}
		path[o] = '\0';
		fprintf(f, "| `%s%s` | ", prefix, path);
		print_type(f, sk);
		fprintf(f, " | %s%s%s | %s%s |\n", sk->def ? "`" : "", sk->def ? sk->def : "",
			sk->def ? "`" : "", (sk->flags & SCHEMA_REQUIRED) ? "**required.** " : "",
			sk->help);
	}
}

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
			print_bar_list(f, "", p->values, "`");
			break;
		}
		fprintf(f, " | %s |\n", p->help);
	}
}

void schema_print_markdown(FILE *f)
{
	fprintf(f,
		"<!-- generated by `zbench matrix keys` from builder/schema.c: edit there -->\n\n");
	fprintf(f, "### Top level\n\n");
	print_table(f, &schema_matrix, "");
	fprintf(f, "\n### Configuration (`base`, and what axes and cases set)\n\n");
	print_table(f, &schema_config, "");
	fprintf(f, "\n### Pool properties (`pool.properties`)\n\n");
	print_props(f, zpool_props, ARRAY_SIZE(zpool_props), 0);
	fprintf(f, "\n### Dataset and zvol properties (`datasets[].properties`, "
		   "`zvols[].properties`)\n\n");
	print_props(f, zfs_props, ARRAY_SIZE(zfs_props), 1);
	fprintf(f, "\nSizes: a number with k, m, g, t or p (powers of 1024, any case, optionally "
		   "followed by b or ib); a bare number is bytes. Durations: a number with us, ms, "
		   "s, m, h or d; a bare number is seconds.\n");
}
