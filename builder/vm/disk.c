#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "guest/units.h"
#include "image/image.h"

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

/* The earlier passthrough disk of the set that overlaps the device `path` names, or NULL. */
static const struct vm_disk *device_taken(const struct disk_set *ds, const struct vm_disk *vd,
					  const char *path)
{
	struct zb_error e;
	struct stat st;
	dev_t rdev;

	if (passthrough_device(path, NULL, &rdev, &e) < 0)
		return NULL; /* passthrough_open() says why */
	for (int i = 0; i < ds->n && &ds->disks[i] != vd; i++) {
		if (ds->disks[i].passthrough && fstat(ds->disks[i].fd, &st) == 0 &&
		    passthrough_overlap(st.st_rdev, rdev))
			return &ds->disks[i];
	}
	return NULL;
}

/* Check and hold the device (wiped once every disk of the set is checked). */
static int disk_device(struct disk_set *ds, struct vm_disk *vd, const char *device,
		       struct zb_error *err)
{
	const struct vm_disk *other = device_taken(ds, vd, device);
	char *real = NULL;

	if (other)
		return error_set(err, EBUSY,
				 "refusing '%s': it is the same device as disk '%s' ('%s'), or "
				 "overlaps it",
				 device, other->name, other->path);
	vd->fd = passthrough_open(device, &real, err);
	if (vd->fd < 0)
		return -1;
	free((char *)vd->path);
	vd->path = real;
	vd->passthrough = 1;
	return 0;
}

static int disk_create_all(struct disk_set *ds, const json_t *config, const char *dir,
			   struct zb_error *err)
{
	const json_t *disks = json_object_get(config, "disks");
	size_t i;
	json_t *d;

	ds->n = 0;
	ds->wiped = 0;
	ds->disks = xcalloc(json_array_size(disks) + 1, sizeof(*ds->disks));
	json_array_foreach (disks, i, d) {
		const char *name = json_string_value(json_object_get(d, "name"));
		const char *size = json_string_value(json_object_get(d, "size"));
		const char *bus = json_string_value(json_object_get(d, "bus"));
		const char *device = json_string_value(json_object_get(d, "device"));
		const struct disk_bus *b = disk_bus_find(bus ? bus : "virtio-blk");
		struct vm_disk *vd = &ds->disks[ds->n];
		uint64_t bytes = 0;
		char *image;

		vd->fd = -1;
		vd->nbd_fd = -1;
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
		/* Counted now, but with no path (nothing to remove or wipe) until the image or
		 * the device is ours: a failure never removes someone else's file or wipes a
		 * device that was refused. */
		vd->path = xstrdup("");
		ds->n++;
		if (device) {
			if (disk_device(ds, vd, device, err) < 0)
				return error_wrap(err, "disk '%s'", name);
			continue;
		}
		image = xasprintf("%s/%s.img", dir, name);
		vd->fd = open(image, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (vd->fd < 0) {
			error_sys(err, errno, "creating disk image '%s'", image);
			free(image);
			return -1;
		}
		free((char *)vd->path);
		vd->path = image;
		if (ftruncate(vd->fd, (off_t)bytes) < 0)
			return error_sys(err, errno, "sizing disk image '%s' to %s", vd->path,
					 size);
	}
	/* Every device checked and held: only now are their old labels wiped (the guest must see
	 * them as fresh as images), so a refusal of one leaves the others untouched. */
	ds->wiped = 1;
	for (int k = 0; k < ds->n; k++) {
		if (ds->disks[k].passthrough &&
		    passthrough_wipe(ds->disks[k].fd, ds->disks[k].path, err) < 0)
			return error_wrap(err, "disk '%s'", ds->disks[k].name);
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

		if (ds->disks[i].passthrough) {
			/* a device is never removed: wiped, if it was written to */
			if (ds->wiped)
				passthrough_wipe(ds->disks[i].fd, ds->disks[i].path, &e);
		} else if (ds->disks[i].path[0]) {
			unlink(ds->disks[i].path);
		}
	}
}

void disk_set_release(struct disk_set *ds)
{
	for (int i = 0; i < ds->n; i++) {
		if (ds->disks[i].fd >= 0)
			close(ds->disks[i].fd);
		if (ds->disks[i].nbd_fd >= 0)
			close(ds->disks[i].nbd_fd);
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
	const char *missing[DISK_BUS_COUNT], *first_disk = NULL, *first_bus = NULL;
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
