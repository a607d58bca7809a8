/* A cell's disks: fresh sparse image files (or checked host block devices, passthrough.c),
 * created before the VM boots and deleted (or wiped) after. The buses are disk_bus.h's table. */
#ifndef ZB_DISK_H
#define ZB_DISK_H

#include <jansson.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/disk_bus.h"
#include "core/error.h"
#include "vm.h"

/* Smallest disk: ZFS's smallest vdev is 64M (SPA_MINDEVSIZE) and zpool create on a whole disk
 * gives it all but 8M (partition 9) and alignment, so a 64M disk fails with "one or more
 * devices is currently unavailable" (measured). */
#define DISK_SIZE_MIN (80LL << 20)
/* The same with 4096-byte logical sectors: zpool's EFI reserve is counted in sectors. */
#define DISK_SIZE_MIN_4KN (160ULL << 20)

struct disk_set {
	struct vm_disk *disks; /* n entries; the strings are owned by the set */
	int n;
	int wiped; /* the passthrough devices have been written to: wipe them on removal */
};

/* Create one sparse image per entry of config.disks in `dir` (mode 0600, must not exist), or
 * check and hold a passthrough device (passthrough_open()) and wipe its labels; a device named
 * twice is refused. Every disk's descriptor stays open in its vm_disk until the set is released. */
int disk_set_create(struct disk_set *ds, const json_t *config, const char *dir,
		    struct zb_error *err);
/* Delete the image files and wipe the passthrough devices' labels (errors are ignored: there
 * is nothing better to do with them). */
void disk_set_remove(struct disk_set *ds);
/* Close every disk's descriptor (a passthrough device is let go here) and free the set. */
void disk_set_release(struct disk_set *ds);

struct image;
/* Whether an image's kernel can drive a bus is the image's business, not the matrix's: refuse
 * a configuration (a cell's) with a disk on a bus `img` lacks, naming the disk, the bus, the
 * image and, when one is found beside `recipe`, a recipe that has the bus. Called by the
 * runner for every cell before anything boots. */
int disk_check_image(const json_t *config, const struct image *img, const char *recipe,
		     const char *cache_dir, struct zb_error *err);

/* The stable path under which the guest finds a disk, e.g. /dev/disk/by-id/virtio-zb-d0.
 * Returns a malloc'd string. */
char *disk_guest_path(const struct vm_disk *d);

/* ---- disk models (disk_models.c) ---- */

/* Fill each disk of `cfg` that names a "model" with that model's attributes where the disk
 * leaves them out: from `own` (the matrix's disk_models object, may be NULL), else the built-in
 * service-time table (its geometry, and on an image file every figure of the model in
 * model_params, the disk's overrides applied and checked). Returns 0, or -1 with err's message
 * and err->pos.path (a config path such as "disks[2].model_params.rpm"; error_path()). */
int disk_models_resolve(json_t *cfg, const json_t *own, struct zb_error *err);
/* Whether a resolved disk is modelled: a built-in service-time model on an image file (its
 * model_params filled in by disk_models_resolve()), served by a disk server (disk_server.h). */
int disk_model_is_modelled(const json_t *disk);
/* The built-in models as a Markdown table (docs/disks.md, `zbench matrix keys`). */
void disk_models_print_markdown(FILE *f);

/* ---- passthrough (passthrough.c) ---- */

/* Name a host block device the user allows zbench to overwrite (zbench run --allow-device); the
 * device, not the name: any other name of the same device is allowed too. */
void passthrough_allow(const char *path);
/* Every safety check on the device `path` names (docs/disks.md), without keeping it: the
 * runner's check of every cell before anything is created (builder/run/devices.c). 0 if it may
 * be used, else -1 with err saying which check failed. */
int passthrough_check(const char *path, struct zb_error *err);
/* The same checks, keeping the device: returns a descriptor of it opened O_RDWR | O_EXCL |
 * O_CLOEXEC, or -1 with err set. The caller holds it until the cell's VM is gone: no one else
 * can claim the device exclusively meanwhile, and the wipes and the backend use this descriptor
 * (the very device checked), not the path. *real (malloc'd) is the device's node, /dev/NAME. */
int passthrough_open(const char *path, char **real, struct zb_error *err);
/* The block device `path` names, symlinks resolved: 0 and *rdev (and *real, malloc'd, unless
 * real is NULL) if it is a block device node of the file system mounted at /dev; else -1 with
 * err saying why ("not a block device node of /dev": a file, a node planted in /dev/shm). */
int passthrough_device(const char *path, char **real, dev_t *rdev, struct zb_error *err);
/* Whether block devices a and b overlap: the same device, or one is a partition of the other. */
int passthrough_overlap(dev_t a, dev_t b);
/* The holders check on its own, for tests: `sysdir` is a device's sysfs directory
 * (/sys/dev/block/M:m); the first holder of it or of one of its partitions goes into buf ("dm-0",
 * "md0 (of loop0p1)"). 1 if there is one, else 0. */
int passthrough_find_holder(const char *sysdir, char *buf, size_t len);
/* Zero the ZFS labels and partition tables (first and last 16 MiB) of the device `fd` is (from
 * passthrough_open(); `path` names it in errors). */
int passthrough_wipe(int fd, const char *path, struct zb_error *err);

#endif
