#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "units.h"
#include "util.h"

/* virtio-blk serials are at most 20 bytes; "zb-" plus a disk name of up to 17 characters. */
#define SERIAL_MAX 20

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
		struct vm_disk *vd = &ds->disks[ds->n];
		uint64_t bytes;
		int fd;

		if (!name || !size || units_parse_size(size, &bytes) < 0)
			return error_set(err, EINVAL, "disks[%zu]: no valid name or size", i);
		if (strlen(name) + 3 > SERIAL_MAX)
			return error_set(err, EINVAL, "disk '%s': name longer than %d characters",
					 name, SERIAL_MAX - 3);
		vd->name = xstrdup(name);
		vd->bus = xstrdup(bus ? bus : "virtio-blk");
		vd->serial = xasprintf("zb-%s", name);
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
	for (int i = 0; i < ds->n; i++)
		unlink(ds->disks[i].path);
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
	return xasprintf("/dev/disk/by-id/virtio-%s", d->serial);
}
