/* A cell's disks: fresh sparse image files, created before the VM boots and deleted after.
 * (Passthrough of host block devices and the other buses come with the disk-model issue.) */
#ifndef ZB_DISK_H
#define ZB_DISK_H

#include <jansson.h>

#include "error.h"
#include "vm.h"

struct disk_set {
	struct vm_disk *disks; /* n entries; the strings are owned by the set */
	int n;
};

/* Create one sparse image per entry of config.disks in `dir` (mode 0600, must not exist). */
int disk_set_create(struct disk_set *ds, const json_t *config, const char *dir,
		    struct zb_error *err);
/* Delete the image files (errors are ignored: there is nothing better to do with them). */
void disk_set_remove(struct disk_set *ds);
void disk_set_release(struct disk_set *ds);

/* The stable path under which the guest finds a disk, e.g. /dev/disk/by-id/virtio-zb-d0.
 * Returns a malloc'd string. */
char *disk_guest_path(const struct vm_disk *d);

#endif
