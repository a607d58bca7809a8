/* Disk models: named bundles of bus, geometry and QEMU I/O throttling that stand in for a kind
 * of drive. A matrix names one with disks[].model; its own top-level disk_models shadow the
 * built-in table below. The model's attributes fill only what the disk leaves out, and the
 * resolved configuration (what the cell id hashes) carries them all, so a cell's record says
 * exactly which limits its disks had.
 *
 * Under TCG an unthrottled disk's speed is the emulator's (and varies by about 20%); a throttled
 * one is repeatable to the I/O (DESIGN.md field notes). The figures are round numbers for the
 * class of drive, not any product's datasheet. The models' buses are ones every image has
 * (virtio-scsi carries a rotation rate and write cache), so a USB stick is virtio-scsi throttled
 * to USB speed; a disk that sets its own bus (e.g. "usb2", on an image whose kernel has USB)
 * keeps the model's limits and drops what that bus cannot show.
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "disk.h"

struct disk_model {
	const char *name, *description;
	const char *bus;
	int logical_block_size, physical_block_size; /* 0: not set */
	int rotation_rate;			     /* 0: not set */
	unsigned iops, iops_burst;		     /* 0: no limit */
	const char *bps, *bps_burst;		     /* sizes, or NULL */
};

static const struct disk_model disk_models[] = {
	{ .name = "hdd-5400",
	  .description = "5400 rpm SATA disk: about 60 random IOPS, 80 MB/s, 4K sectors",
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .physical_block_size = 4096,
	  .rotation_rate = 5400,
	  .iops = 60,
	  .bps = "80M" },
	{ .name = "hdd-7200",
	  .description = "7200 rpm SATA disk: about 100 random IOPS, 150 MB/s, 4K sectors",
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .physical_block_size = 4096,
	  .rotation_rate = 7200,
	  .iops = 100,
	  .bps = "150M" },
	{ .name = "sata-ssd",
	  .description = "SATA SSD: 50k IOPS, 500 MB/s (above what TCG reaches: unthrottled there)",
	  .bus = "virtio-scsi",
	  .logical_block_size = 512,
	  .physical_block_size = 4096,
	  .rotation_rate = 1,
	  .iops = 50000,
	  .bps = "500M" },
	{ .name = "nvme",
	  .description = "NVMe SSD: 200k IOPS, 2 GB/s",
	  .bus = "nvme",
	  .iops = 200000,
	  .bps = "2G" },
	{ .name = "usb2-stick",
	  .description = "USB 2.0 flash stick: about 150 IOPS, 30 MB/s (bursts to 60 MB/s)",
	  .bus = "virtio-scsi",
	  .rotation_rate = 1,
	  .iops = 150,
	  .bps = "30M",
	  .bps_burst = "60M" },
	{ .name = "usb3-stick",
	  .description = "USB 3.0 flash stick: about 1000 IOPS, 100 MB/s",
	  .bus = "virtio-scsi",
	  .rotation_rate = 1,
	  .iops = 1000,
	  .bps = "100M" },
};

static json_t *model_json(const struct disk_model *m)
{
	json_t *o = json_object(), *t = json_object();

	json_object_set_new(o, "bus", json_string(m->bus));
	if (m->logical_block_size)
		json_object_set_new(o, "logical_block_size", json_integer(m->logical_block_size));
	if (m->physical_block_size)
		json_object_set_new(o, "physical_block_size", json_integer(m->physical_block_size));
	if (m->rotation_rate)
		json_object_set_new(o, "rotation_rate", json_integer(m->rotation_rate));
	if (m->iops)
		json_object_set_new(t, "iops", json_integer(m->iops));
	if (m->iops_burst)
		json_object_set_new(t, "iops_burst", json_integer(m->iops_burst));
	if (m->bps)
		json_object_set_new(t, "bps", json_string(m->bps));
	if (m->bps_burst)
		json_object_set_new(t, "bps_burst", json_string(m->bps_burst));
	if (json_object_size(t))
		json_object_set_new(o, "throttle", t);
	else
		json_decref(t);
	return o;
}

/* The model named `name` as JSON (a new reference), or NULL. */
static json_t *model_find(const json_t *own, const char *name)
{
	const json_t *m = json_object_get(own, name);

	if (m)
		return json_deep_copy(m);
	for (size_t i = 0; i < ARRAY_SIZE(disk_models); i++) {
		if (!strcmp(disk_models[i].name, name))
			return model_json(&disk_models[i]);
	}
	return NULL;
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

/* Append " NAME" for each of the matrix's own models to err's message, at *o. */
static void list_own(const json_t *own, struct zb_error *err, size_t *o)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)own, k, v) {
		if (*o < sizeof(err->msg))
			*o += (size_t)snprintf(err->msg + *o, sizeof(err->msg) - *o, " %s", k);
	}
}

int disk_models_resolve(json_t *cfg, const json_t *own, struct zb_error *err)
{
	json_t *disks = json_object_get(cfg, "disks"), *d;
	size_t i;

	json_array_foreach (disks, i, d) {
		const char *name = json_string_value(json_object_get(d, "model"));
		json_t *m;

		if (!name)
			continue;
		m = model_find(own, name);
		if (!m) {
			char path[64], *msg = err->msg;
			size_t o, mlen = sizeof(err->msg);

			snprintf(path, sizeof(path), "disks[%zu].model", i);
			error_path(err, path, JSON_POS_VALUE,
				   "no disk model named \"%s\"; models:", name);
			o = strlen(msg);
			list_own(own, err, &o);
			for (size_t j = 0; j < ARRAY_SIZE(disk_models) && o < mlen; j++)
				o +=
				    (size_t)snprintf(msg + o, mlen - o, " %s", disk_models[j].name);
			return -1;
		}
		{
			/* A model describes the drive; the disk's own bus decides what of it the
			 * guest can see: a usb2-stick on usb2 has no rotation rate to report. */
			const char *own_bus = json_string_value(json_object_get(d, "bus"));
			const struct disk_bus *b = disk_bus_find(own_bus);

			if (b && !b->rotation_rate) {
				json_object_del(m, "rotation_rate");
				json_object_del(m, "rotational");
			}
		}
		merge_absent(d, m);
		json_decref(m);
	}
	return 0;
}

void disk_models_print_markdown(FILE *f)
{
	fprintf(f, "| model | bus | sectors (logical/physical) | rotation | throttle | what it "
		   "stands for |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < ARRAY_SIZE(disk_models); i++) {
		const struct disk_model *m = &disk_models[i];
		char thr[128] = "", rot[32] = "-";

		if (m->rotation_rate == 1)
			snprintf(rot, sizeof(rot), "solid state");
		else if (m->rotation_rate)
			snprintf(rot, sizeof(rot), "%d rpm", m->rotation_rate);
		if (m->iops)
			snprintf(thr, sizeof(thr), "%u IOPS", m->iops);
		if (m->bps)
			snprintf(thr + strlen(thr), sizeof(thr) - strlen(thr), "%s%s/s",
				 thr[0] ? ", " : "", m->bps);
		if (m->bps_burst)
			snprintf(thr + strlen(thr), sizeof(thr) - strlen(thr), " (burst %s/s)",
				 m->bps_burst);
		fprintf(f, "| `%s` | %s | %d/%d | %s | %s | %s |\n", m->name, m->bus,
			m->logical_block_size ? m->logical_block_size : 512,
			m->physical_block_size ? m->physical_block_size : 512, rot, thr,
			m->description);
	}
}
