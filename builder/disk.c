#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "units.h"
#include "util.h"

/* Which of these buses a guest can use depends on its kernel: Debian's cloud kernel has no AHCI
 * and no USB, its generic kernel has both. The image records the buses its kernel drives
 * (manifest.json "buses", image_appliance.c) and the runner refuses a disk on any other before
 * anything boots (disk_check_image()). */
static const struct disk_bus disk_buses[] = {
	{ .name = "virtio-blk", .by_id = "virtio-", .serial_max = 20, .rotational = 1 },
	{ .name = "virtio-scsi",
	  .by_id = "scsi-0QEMU_QEMU_HARDDISK_",
	  .serial_max = 36,
	  .rotation_rate = 1,
	  .rotational = 1 },
	{ .name = "nvme", .by_id = "nvme-QEMU_NVMe_Ctrl_", .serial_max = 20, .rotational = 0 },
	{ .name = "sata",
	  .by_id = "ata-QEMU_HARDDISK_",
	  .serial_max = 20,
	  .rotation_rate = 1,
	  .rotational = 1,
	  .logical_512_only = 1,
	  .max_disks = 6 }, /* q35's ICH9 AHCI: ide.0 .. ide.5 */
	/* usb-storage: the kernel skips SCSI VPD pages on USB (no rotation rate, always
	 * rotational). */
	{ .name = "usb2",
	  .by_id = "usb-QEMU_QEMU_HARDDISK_",
	  .by_id_end = "-0:0",
	  .serial_max = 20,
	  .rotational = 1,
	  .max_disks = 6 }, /* usb-ehci's root hub */
	{ .name = "usb3",
	  .by_id = "usb-QEMU_QEMU_HARDDISK_",
	  .by_id_end = "-0:0",
	  .serial_max = 20,
	  .rotational = 1 },
};

const struct disk_bus *disk_bus_find(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(disk_buses); i++) {
		if (!strcmp(disk_buses[i].name, name))
			return &disk_buses[i];
	}
	return NULL;
}

static int json_bool_or(const json_t *v, int def)
{
	return json_is_boolean(v) ? json_is_true(v) : def;
}

static uint64_t json_size_or_int(const json_t *v)
{
	uint64_t n = 0;

	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v) && units_parse_size(json_string_value(v), &n) == 0)
		return n;
	return 0;
}

/* A duration in whole seconds, at least 1 when given. */
static uint64_t json_seconds(const json_t *v)
{
	uint64_t us = 0;

	if (!json_is_string(v) || units_parse_duration(json_string_value(v), &us) < 0)
		return 0;
	return us < 1000000 ? 1 : (us + 999999) / 1000000;
}

/* The geometry, cache and throttle attributes of one resolved disk. */
static void disk_attrs(struct vm_disk *vd, const json_t *d, const struct disk_bus *bus)
{
	const json_t *t = json_object_get(d, "throttle");
	const json_t *rot = json_object_get(d, "rotational");

	vd->logical_block_size = (int)json_integer_value(json_object_get(d, "logical_block_size"));
	vd->physical_block_size =
	    (int)json_integer_value(json_object_get(d, "physical_block_size"));
	vd->rotation_rate = (int)json_integer_value(json_object_get(d, "rotation_rate"));
	/* rotational: false on a SCSI disk is rotation rate 1; true is the default there. */
	if (!vd->rotation_rate && bus->rotation_rate && json_is_false(rot))
		vd->rotation_rate = 1;
	vd->write_cache = json_bool_or(json_object_get(d, "write_cache"), -1);
	vd->discard = json_bool_or(json_object_get(d, "discard"), 1);
	vd->throttle.iops = json_size_or_int(json_object_get(t, "iops"));
	vd->throttle.bps = json_size_or_int(json_object_get(t, "bps"));
	vd->throttle.iops_burst = json_size_or_int(json_object_get(t, "iops_burst"));
	vd->throttle.bps_burst = json_size_or_int(json_object_get(t, "bps_burst"));
	vd->throttle.burst_length = json_seconds(json_object_get(t, "burst_length"));
}

static int disk_create_all(struct disk_set *ds, const json_t *config, const char *dir,
			   struct zb_error *err)
{
	const json_t *disks = json_object_get(config, "disks");
	size_t i;
	json_t *d;

	ds->n = 0;
	ds->disks = xcalloc(json_array_size(disks) + 1, sizeof(*ds->disks));
	json_array_foreach (disks, i, d) {
		const char *name = json_string_value(json_object_get(d, "name"));
		const char *size = json_string_value(json_object_get(d, "size"));
		const char *bus = json_string_value(json_object_get(d, "bus"));
		const char *device = json_string_value(json_object_get(d, "device"));
		const struct disk_bus *b = disk_bus_find(bus ? bus : "virtio-blk");
		struct vm_disk *vd = &ds->disks[ds->n];
		uint64_t bytes = 0;
		int fd;

		if (!name || (!device && (!size || units_parse_size(size, &bytes) < 0)))
			return error_set(err, EINVAL, "disks[%zu]: no valid name or size", i);
		if (!b)
			return error_set(err, EINVAL, "disk '%s': unknown bus '%s'", name, bus);
		if ((int)strlen(name) + 3 > b->serial_max)
			return error_set(err, EINVAL, "disk '%s': name longer than %d characters",
					 name, b->serial_max - 3);
		vd->name = xstrdup(name);
		vd->bus = xstrdup(b->name);
		vd->serial = xasprintf("zb-%s", name);
		disk_attrs(vd, d, b);
		if (device) {
			/* Checked, then counted (so a refused device is never wiped), then its old
			 * labels wiped: the guest must see it as fresh as an image. */
			if (passthrough_check(device, err) < 0)
				return error_wrap(err, "disk '%s'", name);
			vd->path = xstrdup(device);
			vd->passthrough = 1;
			ds->n++;
			if (passthrough_wipe(device, err) < 0)
				return error_wrap(err, "disk '%s'", name);
			continue;
		}
		vd->path = xasprintf("%s/%s.img", dir, name);
		fd = open(vd->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		/* Counted only once it is ours, so a failure never removes someone else's file. */
		ds->n++;
		if (fd < 0) {
			error_sys(err, errno, "creating disk image '%s'", vd->path);
			free((char *)vd->path);
			vd->path = xstrdup("");
			return -1;
		}
		if (ftruncate(fd, (off_t)bytes) < 0) {
			error_sys(err, errno, "sizing disk image '%s' to %s", vd->path, size);
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

int disk_set_create(struct disk_set *ds, const json_t *config, const char *dir,
		    struct zb_error *err)
{
	if (disk_create_all(ds, config, dir, err) < 0) {
		/* Nothing half-made survives a failure. */
		disk_set_remove(ds);
		disk_set_release(ds);
		return -1;
	}
	return 0;
}

void disk_set_remove(struct disk_set *ds)
{
	for (int i = 0; i < ds->n; i++) {
		struct zb_error e;

		if (ds->disks[i].passthrough)
			passthrough_wipe(ds->disks[i].path, &e);
		else if (ds->disks[i].path[0])
			unlink(ds->disks[i].path);
	}
}

void disk_set_release(struct disk_set *ds)
{
	for (int i = 0; i < ds->n; i++) {
		free((char *)ds->disks[i].name);
		free((char *)ds->disks[i].bus);
		free((char *)ds->disks[i].serial);
		free((char *)ds->disks[i].path);
	}
	free(ds->disks);
	ds->disks = NULL;
	ds->n = 0;
}

char *disk_guest_path(const struct vm_disk *d)
{
	const struct disk_bus *b = disk_bus_find(d->bus);

	if (!b)
		b = &disk_buses[0];
	return xasprintf("/dev/disk/by-id/%s%s%s", b->by_id, d->serial,
			 b->by_id_end ? b->by_id_end : "");
}

int disk_check_image(const json_t *config, const struct image *img, const char *recipe,
		     const char *cache_dir, struct zb_error *err)
{
	const json_t *m = img->manifest;
	const char *image =
	    json_string_value(json_object_get(json_object_get(m, "recipe"), "name"));
	const char *kver = json_string_value(json_object_get(m, "kernel_version"));
	const char *missing[ARRAY_SIZE(disk_buses)], *first_disk = NULL, *first_bus = NULL;
	size_t nmissing = 0, i;
	char *other;
	json_t *d;

	json_array_foreach (json_object_get(config, "disks"), i, d) {
		const char *bus = json_string_value(json_object_get(d, "bus"));
		size_t k;

		if (!bus)
			bus = "virtio-blk";
		if (image_has_bus(img, bus))
			continue;
		if (!first_disk) {
			first_disk = json_string_value(json_object_get(d, "name"));
			first_bus = bus;
		}
		for (k = 0; k < nmissing && strcmp(missing[k], bus); k++)
			;
		if (k == nmissing && nmissing < ARRAY_SIZE(missing))
			missing[nmissing++] = bus;
	}
	if (!first_disk)
		return 0;
	/* A recipe with every bus the configuration lacks, not just the first disk's. */
	other = image_recipe_with_buses(recipe, cache_dir, missing, nmissing);
	if (other)
		error_set(
		    err, EINVAL,
		    "disk '%s' uses bus '%s', which image '%s' (kernel %s) lacks; run with -i "
		    "%s (or set \"image\": \"%s\" in the matrix)",
		    first_disk, first_bus, image ? image : "?", kver ? kver : "?", other, other);
	else
		error_set(err, EINVAL,
			  "disk '%s' uses bus '%s', which image '%s' (kernel %s) lacks, and no "
			  "recipe beside '%s' has it (docs/disks.md)",
			  first_disk, first_bus, image ? image : "?", kver ? kver : "?", recipe);
	free(other);
	return -1;
}
