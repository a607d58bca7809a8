/* Disk models (disk.h): what disks[].model fills in of a disk.
 *
 * A built-in model is a row of the disk service-time table (builder/diskmodel/, docs/disks.md):
 * a drive whose every request takes the time such a drive would take, served by an nbdkit with
 * our filter between QEMU and the image file (disk_server.c). The row gives the VM's side of
 * the drive (bus, sector sizes, rotation rate) where the disk leaves them out, and its figures
 * (rpm, seeks, caches, ...): the resolved disk carries all of them in model_params, the
 * matrix's overrides applied and checked, so the cell id hashes them and the record says what
 * the disk was. A throttle the disk sets stays, as a cap on top of the model.
 *
 * A matrix's own disk_models shadow the built-in ones by name and are bundles of attributes
 * (bus, geometry, throttle): they fill what the disk leaves out and are not modelled. A
 * passthrough disk (disks[].device) is a real drive: a model gives it its geometry only.
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "disk.h"
#include "diskmodel/diskmodel.h"
#include "guest/units.h"

/* The VM's side of a built-in model, as disk attributes (a new object). */
static json_t *model_geometry(const struct dm_model *m)
{
	json_t *o = json_object();

	json_object_set_new(o, "bus", json_string(m->bus));
	if (m->logical_block_size)
		json_object_set_new(o, "logical_block_size", json_integer(m->logical_block_size));
	json_object_set_new(o, "physical_block_size", json_integer(dm_model_physical_block(m)));
	json_object_set_new(o, "rotation_rate", json_integer(dm_model_rotation_rate(m)));
	return o;
}

/* What the disk sets wins; objects (throttle) merge one level down. */
static void merge_absent(json_t *disk, const json_t *model)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)model, k, v) {
		json_t *have = json_object_get(disk, k);

		if (!strcmp(k, "description"))
			continue;
		if (!have)
			json_object_set_new(disk, k, json_deep_copy(v));
		else if (json_is_object(have) && json_is_object(v))
			merge_absent(have, v);
	}
}

/* "no disk model named X; models: own... built-in..." at disks[i].model. */
static int unknown_model(const json_t *own, size_t i, const char *name, struct zb_error *err)
{
	char path[64], *msg = err->msg;
	size_t o, mlen = sizeof(err->msg);
	const char *k;
	json_t *v;

	snprintf(path, sizeof(path), "disks[%zu].model", i);
	error_path(err, path, JSON_POS_VALUE, "no disk model named \"%s\"; models:", name);
	o = strlen(msg);
	json_object_foreach ((json_t *)own, k, v) {
		if (o < mlen)
			o += (size_t)snprintf(msg + o, mlen - o, " %s", k);
	}
	for (size_t j = 0; j < dm_model_count && o < mlen; j++)
		o += (size_t)snprintf(msg + o, mlen - o, " %s", dm_models[j].name);
	return -1;
}

/* One figure as the matrix's JSON value: whole numbers as integers. */
static json_t *param_json(enum dm_param_id id, double v)
{
	if (dm_param_descs[id].integer || (v == (double)(long long)v && v < 1e15 && v > -1e15))
		return json_integer((json_int_t)v);
	return json_real(v);
}

/* The figures of built-in model `m` for disk `d` (the i-th): the row's, then the disk's own
 * model_params (each checked by the table's ranges and classes), then checked together for a
 * disk of its size. The resolved model_params hold every figure of the model's class. */
static int model_params_resolve(json_t *d, size_t i, const struct dm_model *m, struct zb_error *err)
{
	json_t *over = json_object_get(d, "model_params"), *v, *all;
	const char *size = json_string_value(json_object_get(d, "size"));
	uint64_t bytes = 0;
	struct dm_params p;
	char path[128], why[256];
	const char *k;

	dm_params_from_model(&p, m);
	if (over && !json_is_object(over))
		return 0; /* the schema says what it should be */
	/* The drive the guest is shown is the drive modelled: its physical sector (a 512e disk
	 * pays a read-modify-write for a partial one) and its write cache (write_cache false:
	 * the guest sends no flushes, QEMU writes through, and the drive caches nothing).
	 * model_params may still say otherwise, figure by figure. */
	if (json_is_integer(json_object_get(d, "physical_block_size")))
		p.v[DM_P_PHYSICAL_BLOCK] =
		    (double)json_integer_value(json_object_get(d, "physical_block_size"));
	if (json_is_boolean(json_object_get(d, "write_cache")) &&
	    (dm_param_descs[DM_P_WRITE_CACHE].classes & (1u << p.cls)))
		p.v[DM_P_WRITE_CACHE] = json_is_true(json_object_get(d, "write_cache"));
	json_object_foreach (over, k, v) {
		char text[64];

		snprintf(path, sizeof(path), "disks[%zu].model_params.%s", i, k);
		if (!json_is_number(v))
			return error_path(err, path, JSON_POS_VALUE,
					  "model figure '%s': expected a number", k);
		snprintf(text, sizeof(text), "%.17g", json_number_value(v));
		if (dm_params_set(&p, k, text, why, sizeof(why)) < 0)
			return error_path(err, path,
					  dm_param_find(k, NULL) ? JSON_POS_VALUE : JSON_POS_KEY,
					  "disk model '%s': %s", m->name, why);
	}
	if (size)
		units_parse_size(size, &bytes);
	/* A CI disk is small (256M) and a drive's cache is not (an SSD's 512 MiB): the row's
	 * cache, where the matrix left it alone, shrinks to a quarter of the disk, so that the
	 * drive still has media behind it. A cache the matrix sets is checked as set. */
	if (bytes && !json_object_get(over, "cache_mb") &&
	    p.v[DM_P_CACHE_MB] * 1048576.0 > (double)bytes / 4)
		p.v[DM_P_CACHE_MB] = (double)(bytes / 4 / 1048576);
	if (dm_params_check(&p, bytes, why, sizeof(why)) < 0) {
		/* at the figure the reason names ("\"cache_mb\": ..."), if the matrix set it */
		char fig[64] = "";

		if (why[0] == '"' && strchr(why + 1, '"') &&
		    (size_t)(strchr(why + 1, '"') - why) < sizeof(fig))
			snprintf(fig, sizeof(fig), "%.*s", (int)(strchr(why + 1, '"') - why - 1),
				 why + 1);
		if (fig[0] && json_object_get(over, fig))
			snprintf(path, sizeof(path), "disks[%zu].model_params.%s", i, fig);
		else
			snprintf(path, sizeof(path),
				 over ? "disks[%zu].model_params" : "disks[%zu].model", i);
		return error_path(err, path, JSON_POS_VALUE, "disk model '%s': %s", m->name, why);
	}
	all = json_object();
	for (int id = 0; id < DM_P_COUNT; id++) {
		if (dm_param_descs[id].classes & (1u << p.cls))
			json_object_set_new(all, dm_param_descs[id].name,
					    param_json((enum dm_param_id)id, p.v[id]));
	}
	json_object_set_new(d, "model_params", all);
	return 0;
}

/* One disk naming a built-in model: its geometry where the disk leaves it out (what the disk's
 * own bus can show of it), and its figures unless it is a passthrough device. */
static int builtin_resolve(json_t *d, size_t i, const struct dm_model *m, struct zb_error *err)
{
	/* A model describes the drive; the disk's bus (its own, else the model's) decides what of
	 * it the guest can see: a usb2-stick on usb2, or any nvme, has no rotation rate to report.
	 */
	const char *own_bus = json_string_value(json_object_get(d, "bus"));
	const struct disk_bus *b = disk_bus_find(own_bus ? own_bus : m->bus);
	json_t *g = model_geometry(m);
	char path[64];

	if (b && !b->rotation_rate)
		json_object_del(g, "rotation_rate");
	merge_absent(d, g);
	json_decref(g);
	if (!json_object_get(d, "device"))
		return model_params_resolve(d, i, m, err);
	if (json_object_get(d, "model_params")) {
		snprintf(path, sizeof(path), "disks[%zu].model_params", i);
		return error_path(err, path, JSON_POS_KEY,
				  "disk %zu is a passthrough device, a real drive: it is not "
				  "modelled (its model gives it only its geometry)",
				  i);
	}
	return 0;
}

int disk_models_resolve(json_t *cfg, const json_t *own, struct zb_error *err)
{
	json_t *disks = json_object_get(cfg, "disks"), *d;
	size_t i;

	json_array_foreach (disks, i, d) {
		const char *name = json_string_value(json_object_get(d, "model"));
		const json_t *mine = name ? json_object_get(own, name) : NULL;
		const struct dm_model *m = name && !mine ? dm_model_find(name) : NULL;
		char path[64];

		if (!name) {
			if (!json_object_get(d, "model_params"))
				continue;
			snprintf(path, sizeof(path), "disks[%zu].model_params", i);
			return error_path(err, path, JSON_POS_KEY,
					  "model_params without a model: name a built-in disk "
					  "model (docs/disks.md)");
		}
		if (mine) {
			if (json_object_get(d, "model_params")) {
				snprintf(path, sizeof(path), "disks[%zu].model_params", i);
				return error_path(
				    err, path, JSON_POS_KEY,
				    "model '%s' is the matrix's own (attributes only, not a "
				    "service-time model): it has no figures to override",
				    name);
			}
			merge_absent(d, mine);
			continue;
		}
		if (!m)
			return unknown_model(own, i, name, err);
		if (builtin_resolve(d, i, m, err) < 0)
			return -1;
	}
	return 0;
}

int disk_model_is_modelled(const json_t *disk)
{
	return json_is_object(json_object_get(disk, "model_params")) &&
	       !json_object_get(disk, "device") &&
	       dm_model_find(json_string_value(json_object_get(disk, "model")));
}

void disk_models_print_markdown(FILE *f)
{
	fprintf(f, "| model | class | bus | sectors (logical/physical) | rotation | what it "
		   "stands for |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < dm_model_count; i++) {
		const struct dm_model *m = &dm_models[i];
		char rot[32];

		if (dm_model_rotation_rate(m) == 1)
			snprintf(rot, sizeof(rot), "solid state");
		else
			snprintf(rot, sizeof(rot), "%d rpm", dm_model_rotation_rate(m));
		fprintf(f, "| `%s` | %s | %s | %d/%d | %s | %s |\n", m->name, dm_class_name(m->cls),
			m->bus, m->logical_block_size ? m->logical_block_size : 512,
			dm_model_physical_block(m), rot, m->description);
	}
}
