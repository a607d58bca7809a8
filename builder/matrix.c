#include "matrix.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disk.h"
#include "fio_job.h"
#include "json_pos.h"
#include "proto.h"
#include "schema.h"
#include "units.h"
#include "util.h"

/* Where a part of a cell's configuration came from in the file: config paths under `cfg` came
 * from the file path `file` (base: cfg "" from "base"; an axis value: cfg = the axis path, from
 * "axes[i].values[j]"). Errors found on the resolved configuration are mapped back through the
 * longest matching origin, so they point at the value the user wrote. */
struct origin {
	const char *cfg;
	char file[JSON_POS_PATH_MAX];
	int from_value; /* 1: an axis value, 2: a case value (name the config path in messages) */
	const json_t *value; /* the axis or case value, or NULL (the base) */
};

struct loader {
	const char *path; /* the file, for messages */
	struct json_pos pos;
	struct zb_error *err;
	const json_t *models; /* the file's disk_models, or NULL */
};

#define PATH_COMPONENTS_MAX 32

struct component {
	char key[128];
	size_t index;
	int is_index;
};

/* snprintf into a fixed buffer where truncating a long message is the intended behaviour. */
static void bprintf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* ---- errors --------------------------------------------------------------------------------- */

/* Does config path `p` lie under `prefix` (component-wise)? */
static int path_under(const char *p, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 0)
		return 1;
	return !strncmp(p, prefix, n) && (p[n] == '\0' || p[n] == '.' || p[n] == '[');
}

static void origin_file_path(const struct origin *o, const char *cfg_path, char *buf, size_t len)
{
	const char *rest = cfg_path + strlen(o->cfg);

	if (!o->file[0])
		bprintf(buf, len, "%s", rest);
	else if (!o->cfg[0] && rest[0] && rest[0] != '[')
		bprintf(buf, len, "%s.%s", o->file, rest);
	else
		bprintf(buf, len, "%s%s", o->file, rest);
}

/* Fill L->err with "FILE:LINE:COL: PATH: msg" for an error at file path `file_path`. */
static int report_at(struct loader *L, const char *file_path, enum json_pos_kind at,
		     const char *msg)
{
	const struct json_pos_entry *e = json_pos_find_near(&L->pos, file_path, at);

	if (e)
		return error_set(L->err, 0, "%s:%d:%d: %s%s%s", L->path, e->line, e->col, file_path,
				 file_path[0] ? ": " : "", msg);
	return error_set(L->err, 0, "%s: %s%s%s", L->path, file_path, file_path[0] ? ": " : "",
			 msg);
}

/* Report a schema error on a configuration assembled from `origins`; `cell` adds the cell's
 * context when the error lies in a part that did not come from an axis or case value. */
static int report(struct loader *L, const struct origin *origins, size_t n,
		  const struct schema_error *se, const char *cell)
{
	const struct origin *best = NULL;
	char file[JSON_POS_PATH_MAX], msg[1400];

	for (size_t i = 0; i < n; i++) {
		if (path_under(se->path, origins[i].cfg) &&
		    (!best || strlen(origins[i].cfg) >= strlen(best->cfg)))
			best = &origins[i];
	}
	if (!best)
		return report_at(L, se->path, se->at, se->msg);
	origin_file_path(best, se->path, file, sizeof(file));
	/* name the config path unless the file path already spells it (a case's key) */
	if (best->from_value && !(best->from_value == 2 && !strcmp(se->path, best->cfg)))
		bprintf(msg, sizeof(msg), "%s: %s", se->path, se->msg);
	else if (cell)
		bprintf(msg, sizeof(msg), "%s (in %s)", se->msg, cell);
	else
		bprintf(msg, sizeof(msg), "%s", se->msg);
	/* a key an axis or case created has no position of its own: point at the value */
	return report_at(L, file, best->from_value ? JSON_POS_VALUE : se->at, msg);
}

static int seterr(struct schema_error *e, const char *path, enum json_pos_kind at, const char *fmt,
		  ...) __attribute__((format(printf, 4, 5)));

static int seterr(struct schema_error *e, const char *path, enum json_pos_kind at, const char *fmt,
		  ...)
{
	va_list ap;

	bprintf(e->path, sizeof(e->path), "%s", path);
	e->at = at;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- cross-references within one configuration ----------------------------------------------- */

/* "d0, d1" (at most len bytes) */
static void list_names(json_t *arr, const char *member, char *buf, size_t len)
{
	size_t o = 0, i;
	json_t *it;

	buf[0] = '\0';
	json_array_foreach (arr, i, it) {
		const char *s = json_string_value(json_object_get(it, member));

		int w;

		if (!s || o >= len)
			continue;
		w = snprintf(buf + o, len - o, "%s%s", o ? ", " : "", s);
		if (w > 0)
			o += (size_t)w;
	}
	if (!buf[0])
		bprintf(buf, len, "none");
}

static int vdev_min_disks(const char *type)
{
	if (!strcmp(type, "mirror"))
		return 2;
	if (!strncmp(type, "raidz", 5))
		return type[5] - '0' + 1;
	return 1;
}

/* Where a name was seen, as a number, spelled as a path only for a message (a configuration
 * of n disks then costs n map entries, not n formatted paths). A reference to a disk: its group
 * (vdevs, log, special, cache), vdev and place; a name: its array (disks, datasets, zvols) and
 * index. */
static const char *const ref_groups[] = { "vdevs", "log", "special", "cache" };
static const char *const name_arrays[] = { "disks", "datasets", "zvols" };

static json_int_t ref_code(size_t group, size_t i, size_t j)
{
	return (json_int_t)(group << 56 | (i & 0xffffff) << 28 | (j & 0xfffffff));
}

static void ref_path(json_int_t code, char *buf, size_t len)
{
	uint64_t c = (uint64_t)code;
	size_t group = (size_t)(c >> 56) % ARRAY_SIZE(ref_groups);

	if (!strcmp(ref_groups[group], "cache"))
		bprintf(buf, len, "pool.cache[%llu]", (unsigned long long)(c & 0xfffffff));
	else
		bprintf(buf, len, "pool.%s[%llu].disks[%llu]", ref_groups[group],
			(unsigned long long)(c >> 28 & 0xffffff),
			(unsigned long long)(c & 0xfffffff));
}

/* One disk named in the pool at reference `code`: it must exist (`names` maps each disk's name,
 * a hash lookup: a pool of n disks costs n lookups, not n^2 comparisons) and not be used yet.
 * `used` maps each disk name to the reference that used it first. */
static int check_disk_ref(json_t *disks, json_t *names, json_t *used, const char *name,
			  json_int_t code, struct schema_error *e)
{
	json_t *prev;
	char list[512], path[JSON_POS_PATH_MAX], first[JSON_POS_PATH_MAX];

	if (!json_object_get(names, name)) {
		list_names(disks, "name", list, sizeof(list));
		ref_path(code, path, sizeof(path));
		return seterr(e, path, JSON_POS_VALUE, "no disk named \"%s\"; disks: %s", name,
			      list);
	}
	prev = json_object_get(used, name);
	if (prev) {
		ref_path(code, path, sizeof(path));
		ref_path(json_integer_value(prev), first, sizeof(first));
		return seterr(e, path, JSON_POS_VALUE, "disk \"%s\" is already used at %s", name,
			      first);
	}
	json_object_set_new(used, name, json_integer(code));
	return 0;
}

static int check_vdevs(json_t *cfg, json_t *names, json_t *used, size_t group,
		       struct schema_error *e)
{
	json_t *vdevs = json_object_get(json_object_get(cfg, "pool"), ref_groups[group]);
	json_t *disks = json_object_get(cfg, "disks");
	json_t *v, *d;
	size_t i, j;
	char path[JSON_POS_PATH_MAX];

	json_array_foreach (vdevs, i, v) {
		const char *type = json_string_value(json_object_get(v, "type"));
		json_t *refs = json_object_get(v, "disks");
		int min = vdev_min_disks(type);

		if (json_array_size(refs) < (size_t)min) {
			bprintf(path, sizeof(path), "pool.%s[%zu].disks", ref_groups[group], i);
			return seterr(e, path, JSON_POS_VALUE,
				      "%s needs at least %d disk%s, got %zu", type, min,
				      min == 1 ? "" : "s", json_array_size(refs));
		}
		json_array_foreach (refs, j, d) {
			if (check_disk_ref(disks, names, used, json_string_value(d),
					   ref_code(group, i, j), e) < 0)
				return -1;
		}
	}
	return 0;
}

/* The names of the items of name_arrays[array] are unique, also with the names already in
 * `seen` (name -> (index << 2 | array)). */
static int check_unique(json_t *arr, const char *what, size_t array, json_t *seen,
			struct schema_error *e)
{
	json_t *it;
	size_t i;
	char path[JSON_POS_PATH_MAX], first[JSON_POS_PATH_MAX];

	json_array_foreach (arr, i, it) {
		const char *name = json_string_value(json_object_get(it, "name"));
		json_t *prev = json_object_get(seen, name);

		if (prev) {
			json_int_t c = json_integer_value(prev);

			bprintf(path, sizeof(path), "%s[%zu].name", name_arrays[array], i);
			bprintf(first, sizeof(first), "%s[%lld].name",
				name_arrays[(size_t)(c & 3) % ARRAY_SIZE(name_arrays)],
				(long long)(c >> 2));
			return seterr(e, path, JSON_POS_VALUE,
				      "duplicate %s name \"%s\" (also at %s)", what, name, first);
		}
		json_object_set_new(seen, name, json_integer((json_int_t)(i << 2 | array)));
	}
	return 0;
}

/* Disks per bus so far, to hold each bus to its controller's ports in one pass. */
struct bus_count {
	const struct disk_bus *bus;
	size_t n;
};

#define BUS_COUNT_MAX 32 /* more than disk.c's buses */

/* What a disk's bus can show the guest, and size or device (exactly one). `counts` (of `ncounts`
 * buses, grown here) holds the disks before this one per bus. */
static int check_disk(struct bus_count *counts, size_t *ncounts, json_t *d, size_t i,
		      struct schema_error *e)
{
	const char *busname = json_string_value(json_object_get(d, "bus"));
	const struct disk_bus *bus = disk_bus_find(busname ? busname : "virtio-blk");
	json_t *rot = json_object_get(d, "rotational"), *rate = json_object_get(d, "rotation_rate");
	int has_size = json_object_get(d, "size") != NULL;
	int has_dev = json_object_get(d, "device") != NULL;
	char path[64];

	if (has_size == has_dev) {
		bprintf(path, sizeof(path), "disks[%zu]", i);
		return seterr(e, path, JSON_POS_VALUE,
			      has_size
				  ? "give either size (a fresh image) or device (passthrough), "
				    "not both"
				  : "needs a size (a fresh image) or a device (passthrough)");
	}
	if (has_size && json_integer_value(json_object_get(d, "logical_block_size")) == 4096) {
		uint64_t bytes = 0;

		/* zpool's EFI label counts its reserve in sectors: 16384 of them (partition 9)
		 * plus a 2048-sector start, so with 4 KiB sectors a whole disk loses 72M, and
		 * ZFS needs 64M of what is left (measured: 128M fails). */
		if (units_parse_size(json_string_value(json_object_get(d, "size")), &bytes) == 0 &&
		    bytes < DISK_SIZE_MIN_4KN) {
			bprintf(path, sizeof(path), "disks[%zu].size", i);
			return seterr(e, path, JSON_POS_VALUE,
				      "a disk with 4096-byte logical sectors must be at least 160M "
				      "(zpool reserves 72M of it), got \"%s\"",
				      json_string_value(json_object_get(d, "size")));
		}
	}
	if (!bus)
		return 0; /* the schema has reported it */
	if (bus->max_disks) {
		size_t k = 0, same;

		while (k < *ncounts && counts[k].bus != bus)
			k++;
		if (k == *ncounts) {
			counts[k].bus = bus;
			counts[k].n = 0;
			++*ncounts;
		}
		same = counts[k].n++;
		if (same >= (size_t)bus->max_disks) {
			bprintf(path, sizeof(path), "disks[%zu].bus", i);
			return seterr(e, path, JSON_POS_VALUE,
				      "bus \"%s\" takes at most %d disks (its controller's ports)",
				      bus->name, bus->max_disks);
		}
	}
	if (bus->logical_512_only &&
	    json_integer_value(json_object_get(d, "logical_block_size")) == 4096) {
		bprintf(path, sizeof(path), "disks[%zu].logical_block_size", i);
		return seterr(e, path, JSON_POS_VALUE,
			      "bus \"%s\" carries only 512-byte logical sectors (QEMU's IDE); use "
			      "physical_block_size 4096 (a 512e disk) or virtio-scsi",
			      bus->name);
	}
	if (rate && !bus->rotation_rate) {
		bprintf(path, sizeof(path), "disks[%zu].rotation_rate", i);
		return seterr(e, path, JSON_POS_KEY,
			      "bus \"%s\" cannot report a rotation rate (the guest always sees it "
			      "%s); use virtio-scsi",
			      bus->name, bus->rotational ? "rotational" : "non-rotational");
	}
	if (rot && !bus->rotation_rate && json_is_true(rot) != bus->rotational) {
		bprintf(path, sizeof(path), "disks[%zu].rotational", i);
		return seterr(e, path, JSON_POS_VALUE,
			      "bus \"%s\" cannot show a %s disk (the guest always sees it %s); use "
			      "virtio-scsi",
			      bus->name, json_is_true(rot) ? "rotational" : "non-rotational",
			      bus->rotational ? "rotational" : "non-rotational");
	}
	if (rot && rate && json_is_true(rot) != (json_integer_value(rate) > 1)) {
		bprintf(path, sizeof(path), "disks[%zu].rotational", i);
		return seterr(
		    e, path, JSON_POS_VALUE, "rotational %s contradicts rotation_rate %lld",
		    json_is_true(rot) ? "true" : "false", (long long)json_integer_value(rate));
	}
	return 0;
}

/* With "engine": "fio", every workload option must be one fio can run as our engine would
 * (guest/fio_job.c's table: iozone mode's options cannot). */
static int check_fio_options(const json_t *cfg, struct schema_error *e)
{
	const json_t *workload = json_object_get(cfg, "workload");
	const char *engine = json_string_value(json_object_get(cfg, "engine"));
	const char *key;
	json_t *v;

	if (!engine || strcmp(engine, "fio"))
		return 0;
	json_object_foreach ((json_t *)workload, key, v) {
		char path[JSON_POS_PATH_MAX], msg[512];

		if (!strcmp(key, "target") || fio_option_check(key, v, msg, sizeof(msg)) == 0)
			continue;
		bprintf(path, sizeof(path), "workload.%s", key);
		return seterr(e, path, JSON_POS_VALUE, "%s (with \"engine\": \"fio\")", msg);
	}
	return 0;
}

/* What the schema cannot say: names unique, every disk named exists and is used once, vdev
 * widths, the workload's target exists. `cfg` has passed schema_validate(). */
static int config_check_refs(json_t *cfg, struct schema_error *e)
{
	json_t *disks = json_object_get(cfg, "disks");
	json_t *pool = json_object_get(cfg, "pool");
	json_t *seen = json_object(), *used = json_object(), *d;
	struct bus_count counts[BUS_COUNT_MAX];
	size_t ncounts = 0;
	const char *target;
	size_t i;
	int rc = -1;

	/* `seen`: every disk name, for the pool's references; then the datasets' */
	if (check_unique(disks, "disk", 0, seen, e) < 0)
		goto out;
	json_array_foreach (disks, i, d) {
		json_t *lbs = json_object_get(d, "logical_block_size");
		json_t *pbs = json_object_get(d, "physical_block_size");
		char path[64];

		if (lbs && pbs && json_integer_value(lbs) > json_integer_value(pbs)) {
			bprintf(path, sizeof(path), "disks[%zu].physical_block_size", i);
			seterr(e, path, JSON_POS_VALUE,
			       "physical_block_size %lld is smaller than logical_block_size %lld",
			       (long long)json_integer_value(pbs),
			       (long long)json_integer_value(lbs));
			goto out;
		}
		if (check_disk(counts, &ncounts, d, i, e) < 0)
			goto out;
	}
	if (check_vdevs(cfg, seen, used, 0, e) < 0 || check_vdevs(cfg, seen, used, 1, e) < 0 ||
	    check_vdevs(cfg, seen, used, 2, e) < 0)
		goto out;
	json_array_foreach (json_object_get(pool, "cache"), i, d) {
		if (check_disk_ref(disks, seen, used, json_string_value(d), ref_code(3, 0, i), e) <
		    0)
			goto out;
	}
	json_object_clear(seen);
	if (check_unique(json_object_get(cfg, "datasets"), "dataset", 1, seen, e) < 0 ||
	    check_unique(json_object_get(cfg, "zvols"), "dataset or zvol", 2, seen, e) < 0)
		goto out;
	target = json_string_value(json_object_get(json_object_get(cfg, "workload"), "target"));
	if (target && !json_object_get(seen, target)) {
		char ds[512], zv[512];

		list_names(json_object_get(cfg, "datasets"), "name", ds, sizeof(ds));
		list_names(json_object_get(cfg, "zvols"), "name", zv, sizeof(zv));
		seterr(e, "workload.target", JSON_POS_VALUE,
		       "no dataset or zvol named \"%s\" (datasets: %s; zvols: %s)", target, ds, zv);
		goto out;
	}
	if (check_fio_options(cfg, e) < 0)
		goto out;
	rc = 0;
out:
	json_decref(seen);
	json_decref(used);
	return rc;
}

/* Resolve the disks' models into `cfg`, then validate it completely. */
static int config_validate(struct loader *L, json_t *cfg, struct schema_error *e)
{
	if (disk_models_resolve(cfg, L->models, e->path, sizeof(e->path), e->msg, sizeof(e->msg)) <
	    0) {
		e->at = JSON_POS_VALUE;
		return -1;
	}
	if (schema_validate(&schema_config, NULL, cfg, "", e) < 0)
		return -1;
	return config_check_refs(cfg, e);
}

/* ---- paths into a configuration ---------------------------------------------------------------
 */

/* Split "a.b[2].c" (syntax already checked by the schema) into components. */
static int path_split(const char *path, struct component *c, size_t max, size_t *n)
{
	*n = 0;
	for (const char *p = path; *p;) {
		if (*n == max)
			return -1;
		memset(&c[*n], 0, sizeof(c[*n]));
		if (*p == '[') {
			c[*n].is_index = 1;
			c[*n].index = strtoul(p + 1, (char **)&p, 10);
			if (*p != ']')
				return -1;
			p++;
		} else {
			size_t k = strcspn(p, ".[");

			if (k == 0 || k >= sizeof(c[*n].key))
				return -1;
			memcpy(c[*n].key, p, k);
			p += k;
		}
		(*n)++;
		if (*p == '.')
			p++;
	}
	return *n ? 0 : -1;
}

/* Check that `path` names a place in the configuration schema. `value` is what will be set there
 * (for the checks of open keys such as zpool properties, which look at key and value). Returns
 * 0, or -1 with a message in msg. */
static int path_check_schema(const char *path, const json_t *value, char *msg, size_t len)
{
	struct component c[PATH_COMPONENTS_MAX];
	const struct schema_key *sk = schema_find(&schema_config, "");
	char sofar[JSON_POS_PATH_MAX] = "";
	size_t n;

	if (path_split(path, c, PATH_COMPONENTS_MAX, &n) < 0) {
		bprintf(msg, len, "\"%s\" is not a configuration path", path);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct schema_key *next;

		if (c[i].is_index) {
			next = schema_item(&schema_config, sk);
			if (!next) {
				bprintf(msg, len,
					"\"%s\" is not a configuration path: %s is not an array",
					path, sofar[0] ? sofar : "the configuration");
				return -1;
			}
			json_path_append_index(sofar, sizeof(sofar), c[i].index);
		} else {
			next = schema_child(&schema_config, sk, c[i].key);
			if (!next) {
				const char *names[64], *best;
				size_t k = 0, pl = strlen(sk->path);

				for (size_t j = 0; j < schema_config.n && k < 64; j++) {
					const char *p = schema_config.keys[j].path, *rest;

					if (!*p ||
					    (pl && (strncmp(p, sk->path, pl) || p[pl] != '.')))
						continue;
					rest = p + (pl ? pl + 1 : 0);
					if (!strpbrk(rest, ".[*"))
						names[k++] = rest;
				}
				best = sk->type == SCHEMA_OBJECT
					   ? schema_did_you_mean(c[i].key, names, k)
					   : NULL;
				bprintf(msg, len,
					"\"%s\" is not a configuration path: %s%s%s has no key "
					"\"%s\"%s%s%s",
					path, sofar[0] ? "\"" : "",
					sofar[0] ? sofar : "the configuration",
					sofar[0] ? "\"" : "", c[i].key,
					best ? " (did you mean \"" : "", best ? best : "",
					best ? "\"?)" : "");
				return -1;
			}
			json_path_append_key(sofar, sizeof(sofar), c[i].key);
			/* an open key ("*"): let its check judge the key */
			if (next->check && !strcmp(next->path + strlen(next->path) - 1, "*")) {
				char m[1024];
				const json_t *v = i + 1 == n ? value : json_object();
				int rc = next->check(c[i].key, v, m, sizeof(m));

				if (i + 1 != n)
					json_decref((json_t *)v);
				if (rc == SCHEMA_BAD_KEY) {
					bprintf(msg, len, "%s: %s", sofar, m);
					return -1;
				}
			}
		}
		sk = next;
	}
	return 0;
}

/* Set `value` (copied) at `path` in cfg, creating missing objects on the way. Array items must
 * exist. Returns 0, or -1 with a message in msg. */
static int path_set(json_t *cfg, const char *path, const json_t *value, char *msg, size_t len)
{
	struct component c[PATH_COMPONENTS_MAX];
	char sofar[JSON_POS_PATH_MAX] = "";
	json_t *cur = cfg;
	size_t n;

	if (path_split(path, c, PATH_COMPONENTS_MAX, &n) < 0) {
		bprintf(msg, len, "\"%s\" is not a configuration path", path);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int last = i + 1 == n;
		json_t *next;

		if (c[i].is_index) {
			if (!json_is_array(cur) || c[i].index >= json_array_size(cur)) {
				bprintf(msg, len, "cannot set \"%s\": %s has %zu item%s, no [%zu]",
					path, sofar, json_array_size(cur),
					json_array_size(cur) == 1 ? "" : "s", c[i].index);
				return -1;
			}
			if (last)
				return json_array_set_new(cur, c[i].index, json_deep_copy(value));
			next = json_array_get(cur, c[i].index);
			json_path_append_index(sofar, sizeof(sofar), c[i].index);
		} else {
			if (!json_is_object(cur)) {
				bprintf(msg, len, "cannot set \"%s\": %s is not an object", path,
					sofar[0] ? sofar : "the configuration");
				return -1;
			}
			if (last)
				return json_object_set_new(cur, c[i].key, json_deep_copy(value));
			next = json_object_get(cur, c[i].key);
			if (!next) {
				if (c[i + 1].is_index) {
					bprintf(msg, len, "cannot set \"%s\": %s%s%s is absent",
						path, sofar, sofar[0] ? "." : "", c[i].key);
					return -1;
				}
				next = json_object();
				json_object_set_new(cur, c[i].key, next);
			}
			json_path_append_key(sofar, sizeof(sofar), c[i].key);
		}
		cur = next;
	}
	return 0;
}

/* ---- the matrix ------------------------------------------------------------------------------ */

static void summary_append(char **s, const char *name, const json_t *value)
{
	char *v = json_is_string(value) ? xstrdup(json_string_value(value))
					: json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
	char *next = xasprintf("%s%s%s=%s", *s ? *s : "", *s ? "," : "", name, v ? v : "?");

	free(v);
	free(*s);
	*s = next;
}

static void cell_release(struct cell *c)
{
	free(c->summary);
	json_decref(c->config);
}

void matrix_free(struct matrix *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_cells; i++)
		cell_release(&m->cells[i]);
	free(m->cells);
	free(m->path);
	free(m->name);
	free(m->description);
	json_decref(m->json);
	free(m);
}

/* Two configuration paths overlap when one is the other or lies under it (path_under). To find
 * that in one pass, `paths` maps each axis path to its axis and `under` maps each proper prefix
 * of an axis path ("a", "a.b", "a.b[2]" of "a.b[2].c") to the first axis it leads to: a path P
 * overlaps an axis when P or one of its prefixes is in `paths`, or P is in `under`. Returns the
 * axis index, or -1. */
static long long overlapping_axis(json_t *paths, json_t *under, const char *p)
{
	char prefix[JSON_POS_PATH_MAX];
	json_t *hit = json_object_get(paths, p);

	if (!hit)
		hit = json_object_get(under, p);
	for (size_t i = 0; p[i] && !hit && i < sizeof(prefix); i++) {
		if (i && (p[i] == '.' || p[i] == '[')) {
			memcpy(prefix, p, i);
			prefix[i] = '\0';
			hit = json_object_get(paths, prefix);
		}
	}
	return hit ? json_integer_value(hit) : -1;
}

static void axis_path_add(json_t *paths, json_t *under, const char *p, size_t index)
{
	char prefix[JSON_POS_PATH_MAX];

	json_object_set_new(paths, p, json_integer((json_int_t)index));
	for (size_t i = 1; p[i] && i < sizeof(prefix); i++) {
		if (p[i] == '.' || p[i] == '[') {
			memcpy(prefix, p, i);
			prefix[i] = '\0';
			if (!json_object_get(under, prefix))
				json_object_set_new(under, prefix, json_integer((json_int_t)index));
		}
	}
}

/* Check the axes' and cases' paths, names, overlaps and counts before expanding. */
static int check_axes_cases(struct loader *L, json_t *axes, json_t *cases)
{
	json_t *a, *c, *names = json_object(), *paths = json_object(), *under = json_object();
	size_t i;
	long long j;
	const char *key;
	char fp[JSON_POS_PATH_MAX], msg[1200];
	int rc = -1;

	if (json_array_size(axes) > MATRIX_AXES_MAX) {
		bprintf(fp, sizeof(fp), "axes[%d]", MATRIX_AXES_MAX);
		bprintf(msg, sizeof(msg), "more than %d axes (each cell sets every one)",
			MATRIX_AXES_MAX);
		report_at(L, fp, JSON_POS_VALUE, msg);
		goto out;
	}
	json_array_foreach (axes, i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));
		const char *path = json_string_value(json_object_get(a, "path"));

		if (json_object_get(names, name)) {
			bprintf(fp, sizeof(fp), "axes[%zu].name", i);
			bprintf(msg, sizeof(msg), "duplicate axis name \"%s\"", name);
			report_at(L, fp, JSON_POS_VALUE, msg);
			goto out;
		}
		json_object_set_new(names, name, json_true());
		bprintf(fp, sizeof(fp), "axes[%zu].path", i);
		if (path_check_schema(path, json_array_get(json_object_get(a, "values"), 0), msg,
				      sizeof(msg)) < 0) {
			report_at(L, fp, JSON_POS_VALUE, msg);
			goto out;
		}
		j = overlapping_axis(paths, under, path);
		if (j >= 0) {
			bprintf(msg, sizeof(msg), "\"%s\" overlaps axes[%lld].path \"%s\"", path, j,
				json_string_value(
				    json_object_get(json_array_get(axes, (size_t)j), "path")));
			report_at(L, fp, JSON_POS_VALUE, msg);
			goto out;
		}
		axis_path_add(paths, under, path, i);
	}
	json_object_clear(names);
	json_array_foreach (cases, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		json_t *v;

		if (json_object_get(names, name)) {
			bprintf(fp, sizeof(fp), "cases[%zu].name", i);
			bprintf(msg, sizeof(msg), "duplicate case name \"%s\"", name);
			report_at(L, fp, JSON_POS_VALUE, msg);
			goto out;
		}
		json_object_set_new(names, name, json_true());
		if (json_object_size(json_object_get(c, "set")) > MATRIX_CASE_SET_MAX) {
			bprintf(fp, sizeof(fp), "cases[%zu].set", i);
			bprintf(msg, sizeof(msg),
				"more than %d paths in one case (each of its cells sets every one)",
				MATRIX_CASE_SET_MAX);
			report_at(L, fp, JSON_POS_VALUE, msg);
			goto out;
		}
		json_object_foreach (json_object_get(c, "set"), key, v) {
			bprintf(fp, sizeof(fp), "cases[%zu].set", i);
			json_path_append_key(fp, sizeof(fp), key);
			if (path_check_schema(key, v, msg, sizeof(msg)) < 0) {
				report_at(L, fp, JSON_POS_KEY, msg);
				goto out;
			}
			j = overlapping_axis(paths, under, key);
			if (j >= 0) {
				bprintf(msg, sizeof(msg), "\"%s\" overlaps axes[%lld].path \"%s\"",
					key, j,
					json_string_value(json_object_get(
					    json_array_get(axes, (size_t)j), "path")));
				report_at(L, fp, JSON_POS_KEY, msg);
				goto out;
			}
		}
	}
	rc = 0;
out:
	json_decref(names);
	json_decref(paths);
	json_decref(under);
	return rc;
}

/* ---- references and claims (docs/matrix.md, "References" and "Claims") ---------------------- */

/* What the claims are checked against: the axes, the cases, and built as needed the case names
 * and, per axis, the set of its values (keyed by their canonical text: a claim's value is
 * looked up, not compared with every value, so n claims on an axis of m values cost n + m). */
struct claim_ctx {
	json_t *axes, *cases;
	json_t *case_names; /* the cases' names, as an axis "case" */
	json_t *sets;	    /* axis name -> { canonical value -> true } */
};

/* The canonical text of a value: equal JSON values (json_equal: 1 and 1.0 differ) have equal
 * texts. Malloc'd. */
static char *claim_key(const json_t *v)
{
	char *k = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	return k ? k : xstrdup("");
}

/* The axis named `name` ("case" when the matrix has cases is the case names), or NULL. */
static const json_t *claim_axis_values(struct claim_ctx *cc, const char *name)
{
	json_t *a;
	size_t i;

	if (!strcmp(name, "case") && json_array_size(cc->cases) > 0) {
		if (!cc->case_names) {
			cc->case_names = json_array();
			json_array_foreach (cc->cases, i, a)
				json_array_append(cc->case_names, json_object_get(a, "name"));
		}
		return cc->case_names;
	}
	json_array_foreach (cc->axes, i, a) {
		if (!strcmp(json_string_value(json_object_get(a, "name")), name))
			return json_object_get(a, "values");
	}
	return NULL;
}

/* Whether `v` is one of `values`, the values of axis `name`. */
static int claim_value_in(struct claim_ctx *cc, const char *name, const json_t *values,
			  const json_t *v)
{
	json_t *set = json_object_get(cc->sets, name), *x;
	char *k;
	size_t i;
	int in;

	if (!set) {
		set = json_object();
		json_array_foreach (values, i, x) {
			k = claim_key(x);
			json_object_set_new(set, k, json_true());
			free(k);
		}
		json_object_set_new(cc->sets, name, set);
	}
	k = claim_key(v);
	in = json_object_get(set, k) != NULL;
	free(k);
	return in;
}

/* "ashift, bs, case" */
static void claim_axis_list(const struct claim_ctx *cc, char *buf, size_t len)
{
	size_t o = 0, i;
	json_t *a;

	buf[0] = '\0';
	if (json_array_size(cc->cases) > 0)
		o += (size_t)snprintf(buf, len, "case");
	json_array_foreach (cc->axes, i, a) {
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
					      json_string_value(json_object_get(a, "name")));
	}
	if (!buf[0])
		snprintf(buf, len, "none: the matrix has one cell");
}

/* The axis value `v` (at file path fp) of axis `name`: the axis must exist, v must be one of its
 * values. */
static int claim_check_value(struct loader *L, struct claim_ctx *cc, const char *fp,
			     const char *name, const json_t *v, enum json_pos_kind at)
{
	const json_t *values = claim_axis_values(cc, name);
	char msg[1200], list[600];
	char *dump;

	if (!values) {
		claim_axis_list(cc, list, sizeof(list));
		bprintf(msg, sizeof(msg), "no axis \"%s\" (axes: %s)", name, list);
		return report_at(L, fp, at, msg);
	}
	if (claim_value_in(cc, name, values, v))
		return 0;
	dump = json_dumps(values, JSON_COMPACT | JSON_ENCODE_ANY);
	{
		char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		bprintf(msg, sizeof(msg), "%s is not a value of axis \"%s\" (values: %s)",
			got ? got : "?", name, dump ? dump : "?");
		free(got);
	}
	free(dump);
	return report_at(L, fp, JSON_POS_VALUE, msg);
}

/* A match object ({"ashift": 12, "case": "hdd"}) at file path `base`: every key an axis, every
 * value one of its values, no key also in `where`. */
static int claim_check_match(struct loader *L, struct claim_ctx *cc, const char *base,
			     json_t *match, json_t *where)
{
	char fp[JSON_POS_PATH_MAX], msg[600];
	const char *key;
	json_t *v;

	json_object_foreach (match, key, v) {
		bprintf(fp, sizeof(fp), "%s", base);
		json_path_append_key(fp, sizeof(fp), key);
		if (claim_check_value(L, cc, fp, key, v, JSON_POS_KEY) < 0)
			return -1;
		if (where && json_object_get(where, key)) {
			bprintf(msg, sizeof(msg), "axis \"%s\" is also fixed by \"where\"", key);
			return report_at(L, fp, JSON_POS_KEY, msg);
		}
	}
	return 0;
}

/* Both sides of a compare or ratio name the same axes, and differ. */
static int claim_check_sides(struct loader *L, const char *fp, json_t *a, json_t *b, const char *an,
			     const char *bn)
{
	char msg[600];
	const char *key;
	json_t *v;

	json_object_foreach (a, key, v) {
		if (!json_object_get(b, key)) {
			bprintf(msg, sizeof(msg), "\"%s\" names axis \"%s\" but \"%s\" does not",
				an, key, bn);
			return report_at(L, fp, JSON_POS_VALUE, msg);
		}
	}
	json_object_foreach (b, key, v) {
		if (!json_object_get(a, key)) {
			bprintf(msg, sizeof(msg), "\"%s\" names axis \"%s\" but \"%s\" does not",
				bn, key, an);
			return report_at(L, fp, JSON_POS_VALUE, msg);
		}
	}
	if (json_object_size(a) == 0 || json_equal(a, b)) {
		bprintf(msg, sizeof(msg), "\"%s\" and \"%s\" select the same cells", an, bn);
		return report_at(L, fp, JSON_POS_VALUE, msg);
	}
	return 0;
}

static int check_references(struct loader *L, struct claim_ctx *cc, json_t *refs)
{
	char fp[JSON_POS_PATH_MAX], msg[1200], list[600];
	json_t *r, *val, *a;
	size_t i, j, k;

	json_array_foreach (refs, i, r) {
		json_array_foreach (json_object_get(r, "values"), j, val) {
			json_t *match = json_object_get(val, "match");

			bprintf(fp, sizeof(fp), "reference[%zu].values[%zu].match", i, j);
			if (claim_check_match(L, cc, fp, match, NULL) < 0)
				return -1;
			/* one published value is for one cell: every axis named */
			if (json_array_size(cc->cases) > 0 && !json_object_get(match, "case")) {
				bprintf(msg, sizeof(msg),
					"names no case: a published value is for one cell");
				return report_at(L, fp, JSON_POS_VALUE, msg);
			}
			json_array_foreach (cc->axes, k, a) {
				const char *name = json_string_value(json_object_get(a, "name"));

				if (!json_object_get(match, name)) {
					claim_axis_list(cc, list, sizeof(list));
					bprintf(
					    msg, sizeof(msg),
					    "names no value for axis \"%s\": a published value is "
					    "for one cell (axes: %s)",
					    name, list);
					return report_at(L, fp, JSON_POS_VALUE, msg);
				}
			}
		}
	}
	return 0;
}

/* A ranking's or peak's "values" (at file path `sub`.values): each a value of `axis`, none
 * listed twice (a set of what was seen: linear). */
static int claim_check_list(struct loader *L, struct claim_ctx *cc, const char *sub,
			    const char *axis, json_t *list)
{
	char fp[JSON_POS_PATH_MAX], *k;
	json_t *seen = json_object(), *v;
	size_t j;
	int rc = 0;

	json_array_foreach (list, j, v) {
		bprintf(fp, sizeof(fp), "%s.values[%zu]", sub, j);
		rc = claim_check_value(L, cc, fp, axis, v, JSON_POS_VALUE);
		if (rc < 0)
			break;
		k = claim_key(v);
		if (json_object_get(seen, k))
			rc = report_at(L, fp, JSON_POS_VALUE, "listed twice");
		json_object_set_new(seen, k, json_true());
		free(k);
		if (rc < 0)
			break;
	}
	json_decref(seen);
	return rc;
}

static int check_expect(struct loader *L, struct claim_ctx *cc, json_t *claims)
{
	static const char *const forms[] = { "compare", "ratio", "ranking", "peak" };
	char fp[JSON_POS_PATH_MAX], sub[JSON_POS_PATH_MAX], msg[600];
	json_t *c;
	size_t i, j;

	json_array_foreach (claims, i, c) {
		json_t *where = json_object_get(c, "where"), *form = NULL;
		const char *fname = NULL;
		size_t n = 0;

		bprintf(fp, sizeof(fp), "expect[%zu]", i);
		for (j = 0; j < ARRAY_SIZE(forms); j++) {
			if (json_object_get(c, forms[j])) {
				n++;
				if (!form) {
					form = json_object_get(c, forms[j]);
					fname = forms[j];
				}
			}
		}
		if (n != 1) {
			bprintf(msg, sizeof(msg),
				"a claim has exactly one of \"compare\", \"ratio\", \"ranking\", "
				"\"peak\" (this one has %zu)",
				n);
			return report_at(L, fp, JSON_POS_VALUE, msg);
		}
		bprintf(sub, sizeof(sub), "%s.where", fp);
		if (where && claim_check_match(L, cc, sub, where, NULL) < 0)
			return -1;
		bprintf(sub, sizeof(sub), "%s.%s", fp, fname);
		if (!strcmp(fname, "compare") || !strcmp(fname, "ratio")) {
			int cmp = !strcmp(fname, "compare");
			const char *an = cmp ? "lhs" : "num", *bn = cmp ? "rhs" : "den";
			json_t *a = json_object_get(form, an), *b = json_object_get(form, bn);
			char side[JSON_POS_PATH_MAX];

			bprintf(side, sizeof(side), "%s.%s", sub, an);
			if (claim_check_match(L, cc, side, a, where) < 0)
				return -1;
			bprintf(side, sizeof(side), "%s.%s", sub, bn);
			if (claim_check_match(L, cc, side, b, where) < 0)
				return -1;
			if (claim_check_sides(L, sub, a, b, an, bn) < 0)
				return -1;
			if (!cmp && !json_object_get(form, "min") && !json_object_get(form, "max"))
				return report_at(L, sub, JSON_POS_VALUE,
						 "a ratio needs \"min\", \"max\" or both");
			if (!cmp && json_object_get(form, "min") && json_object_get(form, "max") &&
			    json_number_value(json_object_get(form, "min")) >
				json_number_value(json_object_get(form, "max")))
				return report_at(L, sub, JSON_POS_VALUE,
						 "\"min\" is greater than \"max\"");
		} else {
			const char *axis = json_string_value(json_object_get(form, "axis"));
			const json_t *values = claim_axis_values(cc, axis);
			json_t *list = json_object_get(form, "values");
			char list_s[600];

			bprintf(fp, sizeof(fp), "%s.axis", sub);
			if (!values) {
				claim_axis_list(cc, list_s, sizeof(list_s));
				bprintf(msg, sizeof(msg), "no axis \"%s\" (axes: %s)", axis,
					list_s);
				return report_at(L, fp, JSON_POS_VALUE, msg);
			}
			if (where && json_object_get(where, axis)) {
				bprintf(msg, sizeof(msg), "axis \"%s\" is also fixed by \"where\"",
					axis);
				return report_at(L, fp, JSON_POS_VALUE, msg);
			}
			if (json_array_size(values) < 2) {
				bprintf(msg, sizeof(msg), "axis \"%s\" has only one value", axis);
				return report_at(L, fp, JSON_POS_VALUE, msg);
			}
			if (!strcmp(fname, "peak")) {
				bprintf(fp, sizeof(fp), "%s.at", sub);
				if (claim_check_value(L, cc, fp, axis, json_object_get(form, "at"),
						      JSON_POS_VALUE) < 0)
					return -1;
			}
			if (claim_check_list(L, cc, sub, axis, list) < 0)
				return -1;
			if (list && json_array_size(list) < 2) {
				bprintf(fp, sizeof(fp), "%s.values", sub);
				return report_at(L, fp, JSON_POS_VALUE,
						 "a ranking needs at least 2 values");
			}
		}
	}
	return 0;
}

/* The references and claims name axes, cases and values the matrix has. */
static int check_claims(struct loader *L, json_t *root)
{
	struct claim_ctx cc = { .axes = json_object_get(root, "axes"),
				.cases = json_object_get(root, "cases"),
				.sets = json_object() };
	int rc;

	rc = check_references(L, &cc, json_object_get(root, "reference"));
	if (rc == 0)
		rc = check_expect(L, &cc, json_object_get(root, "expect"));
	json_decref(cc.case_names);
	json_decref(cc.sets);
	return rc;
}

/* The bytes of the job frame that carries configuration `cfg` (`n` bytes of compact JSON) to
 * its guest, at most: the configuration, each disk's entry, the envelope (matrix.h). */
static size_t job_frame_bytes(const json_t *cfg, size_t n)
{
	return n + json_array_size(json_object_get(cfg, "disks")) * MATRIX_JOB_DISK_BYTES +
	       MATRIX_JOB_ENVELOPE;
}

/* A cell whose job frame would not fit one frame is refused now, not when its VM has booted:
 * pointed at its largest axis or case value (what most likely made it too big). The base alone
 * was checked before expanding. */
static int cell_frame_check(struct loader *L, const struct origin *origins, size_t n,
			    const struct cell *cell, const json_t *cfg, size_t bytes)
{
	size_t job = job_frame_bytes(cfg, bytes), best_size = 0;
	const struct origin *best = NULL;
	char msg[1200];

	if (job <= PROTO_MAX_PAYLOAD)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char *d = origins[i].value
			      ? json_dumps(origins[i].value, JSON_COMPACT | JSON_ENCODE_ANY)
			      : NULL;

		if (d && strlen(d) >= best_size) {
			best_size = strlen(d);
			best = &origins[i];
		}
		free(d);
	}
	bprintf(msg, sizeof(msg),
		"cell %d (%.200s): its job frame would be %zu bytes (%zu of configuration, %d per "
		"disk for %zu disks), more than a frame's %u (docs/protocol.md): the guest could "
		"not receive it",
		cell->index, cell->summary, job, bytes, MATRIX_JOB_DISK_BYTES,
		json_array_size(json_object_get(cfg, "disks")), PROTO_MAX_PAYLOAD);
	return report_at(L, best ? best->file : "base", JSON_POS_VALUE, msg);
}

/* Build cell `index`: case `ci` (or none when there are no cases), axis value choice `pick[]`. */
static int build_cell(struct loader *L, struct matrix *m, json_t *base, json_t *axes, json_t *cases,
		      size_t ci, const size_t *pick, struct cell *cell, size_t *bytes)
{
	size_t n_axes = json_array_size(axes), n_set, k = 0, i;
	struct origin *origins;
	struct schema_error se;
	json_t *cfg = json_deep_copy(base), *c = json_array_get(cases, ci), *v;
	const char *key;
	char msg[1200], ctx[1200], fp[JSON_POS_PATH_MAX];
	int rc = -1;

	n_set = c ? json_object_size(json_object_get(c, "set")) : 0;
	origins = xcalloc(1 + n_set + n_axes, sizeof(*origins));
	origins[k].cfg = "";
	bprintf(origins[k++].file, sizeof(origins[0].file), "base");
	if (c) {
		summary_append(&cell->summary, "case", json_object_get(c, "name"));
		i = 0;
		json_object_foreach (json_object_get(c, "set"), key, v) {
			bprintf(fp, sizeof(fp), "cases[%zu].set", ci);
			json_path_append_key(fp, sizeof(fp), key);
			if (path_set(cfg, key, v, msg, sizeof(msg)) < 0) {
				report_at(L, fp, JSON_POS_KEY, msg);
				goto out;
			}
			origins[k].cfg = key;
			origins[k].from_value = 2;
			origins[k].value = v;
			bprintf(origins[k++].file, sizeof(origins[0].file), "%s", fp);
			i++;
		}
	}
	for (i = 0; i < n_axes; i++) {
		json_t *a = json_array_get(axes, i);
		const char *path = json_string_value(json_object_get(a, "path"));

		v = json_array_get(json_object_get(a, "values"), pick[i]);
		summary_append(&cell->summary, json_string_value(json_object_get(a, "name")), v);
		if (path_set(cfg, path, v, msg, sizeof(msg)) < 0) {
			bprintf(fp, sizeof(fp), "axes[%zu].path", i);
			report_at(L, fp, JSON_POS_VALUE, msg);
			goto out;
		}
		origins[k].cfg = path;
		origins[k].from_value = 1;
		origins[k].value = v;
		bprintf(origins[k++].file, sizeof(origins[0].file), "axes[%zu].values[%zu]", i,
			pick[i]);
	}
	if (!cell->summary)
		cell->summary = xstrdup("base");
	bprintf(ctx, sizeof(ctx), "cell %d: %s", cell->index, cell->summary);
	if (config_validate(L, cfg, &se) < 0) {
		report(L, origins, k, &se, ctx);
		goto out;
	}
	schema_fill_defaults(&schema_config, NULL, cfg);
	{
		char *dump = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
		size_t n = strlen(dump);
		char hex[65];

		sha256_hex(dump, n, hex);
		memcpy(cell->id, hex, 16);
		cell->id[16] = '\0';
		free(dump);
		*bytes = n + strlen(cell->summary);
		if (cell_frame_check(L, origins, k, cell, cfg, n) < 0)
			goto out;
	}
	cell->config = cfg;
	cfg = NULL;
	rc = 0;
out:
	(void)m;
	json_decref(cfg);
	free(origins);
	return rc;
}

/* The base alone, before defaults: if its job frame does not fit, no cell's does. */
static int base_frame_check(struct loader *L, const json_t *base)
{
	char *d = json_dumps(base, JSON_COMPACT);
	size_t n = d ? strlen(d) : 0, job = job_frame_bytes(base, n);
	char msg[600];

	free(d);
	if (job <= PROTO_MAX_PAYLOAD)
		return 0;
	bprintf(msg, sizeof(msg),
		"the base configuration's job frame would be %zu bytes (%zu of configuration, %d "
		"per disk for %zu disks), more than a frame's %u (docs/protocol.md): the guest "
		"could not receive it",
		job, n, MATRIX_JOB_DISK_BYTES, json_array_size(json_object_get(base, "disks")),
		PROTO_MAX_PAYLOAD);
	return report_at(L, "base", JSON_POS_VALUE, msg);
}

/* Values in a JSON tree (objects and arrays count as one each, plus their members). */
static size_t json_values(const json_t *v)
{
	size_t n = 1, i;
	const char *k;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, x)
			n += json_values(x);
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, x)
			n += json_values(x);
	}
	return n;
}

static int expand(struct loader *L, struct matrix *m, json_t *base, json_t *axes, json_t *cases)
{
	size_t n_axes = json_array_size(axes), n_cases = json_array_size(cases);
	size_t total = n_cases ? n_cases : 1, *pick;
	json_t *a, *ids;
	size_t i;
	int rc = -1;

	json_array_foreach (axes, i, a) {
		size_t nv = json_array_size(json_object_get(a, "values"));

		if (total > MATRIX_CELLS_MAX / nv) {
			char msg[128];

			bprintf(msg, sizeof(msg), "the matrix expands to more than %d cells",
				MATRIX_CELLS_MAX);
			return report_at(L, "axes", JSON_POS_VALUE, msg);
		}
		total *= nv;
	}
	if (base_frame_check(L, base) < 0)
		return -1;
	m->cells = xcalloc(total, sizeof(*m->cells));
	pick = xcalloc(n_axes + 1, sizeof(*pick));
	ids = json_object();
	for (size_t idx = 0, bytes = 0, values = L->pos.values; idx < total; idx++) {
		/* idx = case, then axes, last axis fastest */
		size_t rest = idx, ci, cell_bytes = 0;
		struct cell *cell = &m->cells[idx];
		json_t *prev;

		for (size_t k = n_axes; k-- > 0;) {
			size_t nv =
			    json_array_size(json_object_get(json_array_get(axes, k), "values"));

			pick[k] = rest % nv;
			rest /= nv;
		}
		ci = rest;
		cell->index = (int)idx;
		m->n_cells = idx + 1;
		if (build_cell(L, m, base, axes, n_cases ? cases : NULL, ci, pick, cell,
			       &cell_bytes) < 0)
			goto out;
		/* what the cells hold in all: checked as they are built, so the work done before a
		 * refusal is bounded by the limit too */
		bytes += cell_bytes;
		values += json_values(cell->config);
		if (values > MATRIX_VALUES_MAX) {
			char msg[512];

			bprintf(msg, sizeof(msg),
				"the matrix's %zu cells would hold more than %u values with the "
				"file's %zu (cell %zu brings them to %zu): fewer cells or smaller "
				"configurations",
				total, MATRIX_VALUES_MAX, L->pos.values, idx, values);
			report_at(L, n_axes ? "axes" : "cases", JSON_POS_VALUE, msg);
			goto out;
		}
		if (bytes > MATRIX_EXPANDED_MAX) {
			char msg[512];

			bprintf(
			    msg, sizeof(msg),
			    "the matrix's %zu cells would hold more than %u MiB of configuration "
			    "(cell %zu brings it to %zu bytes): fewer cells or smaller values",
			    total, MATRIX_EXPANDED_MAX >> 20, idx, bytes);
			report_at(L, n_axes ? "axes" : "cases", JSON_POS_VALUE, msg);
			goto out;
		}
		prev = json_object_get(ids, cell->id);
		if (prev) {
			char msg[1024];
			struct cell *p = &m->cells[json_integer_value(prev)];

			bprintf(msg, sizeof(msg),
				"cell %d (%s) has the same configuration as cell %d (%s): a value "
				"repeats, or sets what is already there",
				cell->index, cell->summary, p->index, p->summary);
			report_at(L, n_axes ? "axes" : "cases", JSON_POS_VALUE, msg);
			goto out;
		}
		json_object_set_new(ids, cell->id, json_integer((json_int_t)idx));
	}
	rc = 0;
out:
	free(pick);
	json_decref(ids);
	return rc;
}

int matrix_load_buffer(const char *path, const char *text, size_t len, struct matrix **out,
		       struct zb_error *err)
{
	struct loader L = { .path = path, .err = err };
	struct origin top = { .cfg = "" }, base_origin = { .cfg = "" };
	struct schema_error se;
	struct matrix *m = NULL;
	json_error_t jerr;
	json_t *root, *base;
	int rc = -1;

	*out = NULL;
	/* Count the values before jansson builds a tree of them (a 4 MiB file of zeros is 2M
	 * values, ~180 MB as a tree): positions for messages come from the same text. */
	L.pos.limit = MATRIX_VALUES_MAX;
	if (json_pos_scan(&L.pos, text, len) == 0 && L.pos.values > MATRIX_VALUES_MAX)
		return error_set(err, 0,
				 "%s:%d:%d: more than %u values in the file (a matrix and its "
				 "cells hold at most %u)",
				 path, L.pos.over.line, L.pos.over.col, MATRIX_VALUES_MAX,
				 MATRIX_VALUES_MAX);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		/* jansson says "duplicate object key near '"bs"'": say it as we say the rest */
		if (json_error_code(&jerr) == json_error_duplicate_key) {
			const char *q = strchr(jerr.text, '\'');
			size_t n = q ? strlen(q) : 0;

			char msg[sizeof(jerr.text)];

			if (n >= 4 && q[1] == '"' && q[n - 1] == '\'' && q[n - 2] == '"') {
				bprintf(msg, sizeof(msg), "duplicate key %.*s", (int)(n - 2),
					q + 1);
				memcpy(jerr.text, msg, sizeof(msg));
			}
		}
		if (jerr.line > 0)
			return error_set(err, 0, "%s:%d:%d: %s", path, jerr.line, jerr.column,
					 jerr.text);
		return error_set(err, 0, "%s: %s", path, jerr.text);
	}

	if (schema_validate(&schema_matrix, NULL, root, "", &se) < 0) {
		report(&L, &top, 1, &se, NULL);
		goto out;
	}
	base = json_object_get(root, "base");
	L.models = json_object_get(root, "disk_models");
	bprintf(base_origin.file, sizeof(base_origin.file), "base");
	/* base must be valid on its own: axes and cases vary it (a copy: a model is resolved per
	 * cell, after an axis may have changed it) */
	{
		json_t *copy = json_deep_copy(base);
		int bad = config_validate(&L, copy, &se);

		json_decref(copy);
		if (bad < 0) {
			report(&L, &base_origin, 1, &se, NULL);
			goto out;
		}
	}
	if (check_axes_cases(&L, json_object_get(root, "axes"), json_object_get(root, "cases")) < 0)
		goto out;
	if (check_claims(&L, root) < 0)
		goto out;

	m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->name = xstrdup(json_string_value(json_object_get(root, "name")));
	m->description = xstrdup(json_object_get(root, "description")
				     ? json_string_value(json_object_get(root, "description"))
				     : "");
	sha256_hex(text, len, m->sha256);
	m->repeats = json_object_get(root, "repeats")
			 ? (int)json_integer_value(json_object_get(root, "repeats"))
			 : 1;
	if (expand(&L, m, base, json_object_get(root, "axes"), json_object_get(root, "cases")) < 0)
		goto out;
	m->json = root;
	root = NULL;
	*out = m;
	m = NULL;
	rc = 0;
out:
	matrix_free(m);
	json_decref(root);
	json_pos_release(&L.pos);
	return rc;
}

int matrix_load(const char *path, struct matrix **out, struct zb_error *err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	if (read_file(path, MATRIX_FILE_MAX, &text, &len, err) < 0)
		return -1;
	rc = matrix_load_buffer(path, text, len, out, err);
	free(text);
	return rc;
}
