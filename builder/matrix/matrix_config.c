/* One cell configuration's cross-references: what the schema cannot say (names unique, every
 * disk named exists and is used once, vdev widths, what each disk's bus can show, the workload's
 * target), after the disks' models are resolved and the schema has passed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "guest/fio_job.h"
#include "guest/units.h"
#include "matrix_int.h"
#include "phases.h"
#include "schema.h"
#include "txg_window.h"
#include "vm/disk.h"

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
			  json_int_t code, struct zb_error *err)
{
	json_t *prev;
	char list[512], path[JSON_POS_PATH_MAX], first[JSON_POS_PATH_MAX];

	if (!json_object_get(names, name)) {
		list_names(disks, "name", list, sizeof(list));
		ref_path(code, path, sizeof(path));
		return error_path(err, path, JSON_POS_VALUE, "no disk named \"%s\"; disks: %s",
				  name, list);
	}
	prev = json_object_get(used, name);
	if (prev) {
		ref_path(code, path, sizeof(path));
		ref_path(json_integer_value(prev), first, sizeof(first));
		return error_path(err, path, JSON_POS_VALUE, "disk \"%s\" is already used at %s",
				  name, first);
	}
	json_object_set_new(used, name, json_integer(code));
	return 0;
}

static int check_vdevs(json_t *cfg, json_t *names, json_t *used, size_t group, struct zb_error *err)
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
			return error_path(err, path, JSON_POS_VALUE,
					  "%s needs at least %d disk%s, got %zu", type, min,
					  min == 1 ? "" : "s", json_array_size(refs));
		}
		json_array_foreach (refs, j, d) {
			if (check_disk_ref(disks, names, used, json_string_value(d),
					   ref_code(group, i, j), err) < 0)
				return -1;
		}
	}
	return 0;
}

/* The names of the items of name_arrays[array] are unique, also with the names already in
 * `seen` (name -> (index << 2 | array)). */
static int check_unique(json_t *arr, const char *what, size_t array, json_t *seen,
			struct zb_error *err)
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
			return error_path(err, path, JSON_POS_VALUE,
					  "duplicate %s name \"%s\" (also at %s)", what, name,
					  first);
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
		      struct zb_error *err)
{
	const char *busname = json_string_value(json_object_get(d, "bus"));
	const struct disk_bus *bus = disk_bus_find(busname ? busname : "virtio-blk");
	json_t *rot = json_object_get(d, "rotational"), *rate = json_object_get(d, "rotation_rate");
	int has_size = json_object_get(d, "size") != NULL;
	int has_dev = json_object_get(d, "device") != NULL;
	char path[64];

	if (has_size == has_dev) {
		bprintf(path, sizeof(path), "disks[%zu]", i);
		return error_path(err, path, JSON_POS_VALUE,
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
			return error_path(
			    err, path, JSON_POS_VALUE,
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
			return error_path(
			    err, path, JSON_POS_VALUE,
			    "bus \"%s\" takes at most %d disks (its controller's ports)", bus->name,
			    bus->max_disks);
		}
	}
	if (bus->logical_512_only &&
	    json_integer_value(json_object_get(d, "logical_block_size")) == 4096) {
		bprintf(path, sizeof(path), "disks[%zu].logical_block_size", i);
		return error_path(
		    err, path, JSON_POS_VALUE,
		    "bus \"%s\" carries only 512-byte logical sectors (QEMU's IDE); use "
		    "physical_block_size 4096 (a 512e disk) or virtio-scsi",
		    bus->name);
	}
	if (rate && !bus->rotation_rate) {
		bprintf(path, sizeof(path), "disks[%zu].rotation_rate", i);
		return error_path(
		    err, path, JSON_POS_KEY,
		    "bus \"%s\" cannot report a rotation rate (the guest always sees it "
		    "%s); use virtio-scsi",
		    bus->name, bus->rotational ? "rotational" : "non-rotational");
	}
	if (rot && !bus->rotation_rate && json_is_true(rot) != bus->rotational) {
		bprintf(path, sizeof(path), "disks[%zu].rotational", i);
		return error_path(
		    err, path, JSON_POS_VALUE,
		    "bus \"%s\" cannot show a %s disk (the guest always sees it %s); use "
		    "virtio-scsi",
		    bus->name, json_is_true(rot) ? "rotational" : "non-rotational",
		    bus->rotational ? "rotational" : "non-rotational");
	}
	if (rot && rate && json_is_true(rot) != (json_integer_value(rate) > 1)) {
		bprintf(path, sizeof(path), "disks[%zu].rotational", i);
		return error_path(
		    err, path, JSON_POS_VALUE, "rotational %s contradicts rotation_rate %lld",
		    json_is_true(rot) ? "true" : "false", (long long)json_integer_value(rate));
	}
	return 0;
}

/* With "engine": "fio", every workload option must be one fio can run as our engine would
 * (guest/fio_job.c's table: iozone mode's options cannot). */
static int check_fio_options(const json_t *cfg, struct zb_error *err)
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
		return error_path(err, path, JSON_POS_VALUE, "%s (with \"engine\": \"fio\")", msg);
	}
	return 0;
}

/* What the schema cannot say: names unique, every disk named exists and is used once, vdev
 * widths, the workload's target exists. `cfg` has passed schema_validate(). */
static int config_check_refs(json_t *cfg, struct zb_error *err)
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
	if (check_unique(disks, "disk", 0, seen, err) < 0)
		goto out;
	json_array_foreach (disks, i, d) {
		json_t *lbs = json_object_get(d, "logical_block_size");
		json_t *pbs = json_object_get(d, "physical_block_size");
		char path[64];

		if (lbs && pbs && json_integer_value(lbs) > json_integer_value(pbs)) {
			bprintf(path, sizeof(path), "disks[%zu].physical_block_size", i);
			error_path(
			    err, path, JSON_POS_VALUE,
			    "physical_block_size %lld is smaller than logical_block_size %lld",
			    (long long)json_integer_value(pbs), (long long)json_integer_value(lbs));
			goto out;
		}
		if (check_disk(counts, &ncounts, d, i, err) < 0)
			goto out;
	}
	if (check_vdevs(cfg, seen, used, 0, err) < 0 || check_vdevs(cfg, seen, used, 1, err) < 0 ||
	    check_vdevs(cfg, seen, used, 2, err) < 0)
		goto out;
	json_array_foreach (json_object_get(pool, "cache"), i, d) {
		if (check_disk_ref(disks, seen, used, json_string_value(d), ref_code(3, 0, i),
				   err) < 0)
			goto out;
	}
	json_object_clear(seen);
	if (check_unique(json_object_get(cfg, "datasets"), "dataset", 1, seen, err) < 0 ||
	    check_unique(json_object_get(cfg, "zvols"), "dataset or zvol", 2, seen, err) < 0)
		goto out;
	target = json_string_value(json_object_get(json_object_get(cfg, "workload"), "target"));
	if (target && !json_object_get(seen, target)) {
		char ds[512], zv[512];

		list_names(json_object_get(cfg, "datasets"), "name", ds, sizeof(ds));
		list_names(json_object_get(cfg, "zvols"), "name", zv, sizeof(zv));
		error_path(err, "workload.target", JSON_POS_VALUE,
			   "no dataset or zvol named \"%s\" (datasets: %s; zvols: %s)", target, ds,
			   zv);
		goto out;
	}
	if (check_fio_options(cfg, err) < 0)
		goto out;
	rc = phases_check(cfg, err);
out:
	json_decref(seen);
	json_decref(used);
	return rc;
}

int matrix_config_validate(json_t *cfg, const json_t *models, struct zb_error *err)
{
	if (disk_models_resolve(cfg, models, err) < 0)
		return -1;
	if (schema_validate(&schema_config, NULL, cfg, "", err) < 0)
		return -1;
	if (txg_window_resolve(cfg, err) < 0)
		return -1;
	return config_check_refs(cfg, err);
}
