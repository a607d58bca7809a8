#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "units.h"
#include "util.h"

/* The appliance runs Debian's cloud kernel (images/debian12-zfs.json): it has virtio_blk,
 * virtio_scsi + sd_mod and NVMe (built in), but CONFIG_SATA_AHCI and CONFIG_USB_SUPPORT are not
 * set, so an AHCI or USB disk would simply not appear in the guest. Those buses are refused
 * when the matrix loads, with this reason, rather than failing a cell after a boot
 * (docs/disks.md says how to lift it). */
#define NO_AHCI                                                                                    \
	"the appliance's Debian cloud kernel has no AHCI driver (CONFIG_SATA_AHCI is not set); "   \
	"use virtio-scsi (a SCSI disk with rotation rate and write cache) or a disk model"
#define NO_USB                                                                                     \
	"the appliance's Debian cloud kernel has no USB support (CONFIG_USB_SUPPORT is not set); " \
	"use the usb2-stick/usb3-stick models (virtio-scsi throttled to USB speeds)"

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
	  .unsupported = NO_AHCI },
	{ .name = "usb2",
	  .by_id = "usb-QEMU_QEMU_HARDDISK_",
	  .by_id_end = "-0:0",
	  .serial_max = 20,
	  .rotational = 1,
	  .unsupported = NO_USB },
	{ .name = "usb3",
	  .by_id = "usb-QEMU_QEMU_HARDDISK_",
	  .by_id_end = "-0:0",
	  .serial_max = 20,
	  .rotational = 1,
	  .unsupported = NO_USB },
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
		if (!b || b->unsupported)
			return error_set(err, EINVAL, "disk '%s': bus '%s' cannot be used%s%s",
					 name, bus, b ? ": " : "", b ? b->unsupported : "");
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
