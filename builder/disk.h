/* A cell's disks: fresh sparse image files (or checked host block devices, passthrough.c),
 * created before the VM boots and deleted (or wiped) after; and the table of disk buses. */
#ifndef ZB_DISK_H
#define ZB_DISK_H

#include <jansson.h>
#include <stdio.h>

#include "error.h"
#include "vm.h"

/* Smallest disk: ZFS's smallest vdev is 64M (SPA_MINDEVSIZE) and zpool create on a whole disk
 * gives it all but 8M (partition 9) and alignment, so a 64M disk fails with "one or more
 * devices is currently unavailable" (measured). */
#define DISK_SIZE_MIN (80LL << 20)
/* The same with 4096-byte logical sectors: zpool's EFI reserve is counted in sectors. */
#define DISK_SIZE_MIN_4KN (160ULL << 20)

/* One disk bus. The QEMU side of each bus is in vm_qemu.c; this is what the rest needs. */
struct disk_bus {
	const char *name; /* the matrix's disks[].bus */
	const char *by_id,
	    *by_id_end;	      /* the guest's /dev/disk/by-id name: by_id SERIAL by_id_end */
	int serial_max;	      /* longest serial the bus carries */
	int rotation_rate;    /* the guest sees a rotation rate the matrix sets (SCSI VPD) */
	int rotational;	      /* what the guest's queue/rotational says without one: 0, 1 */
	int logical_512_only; /* QEMU's device takes only 512-byte logical sectors (IDE) */
	int max_disks;	      /* ports on its one controller (0: no limit that matters) */
};

/* The bus named `name`, or NULL. */
const struct disk_bus *disk_bus_find(const char *name);

struct disk_set {
	struct vm_disk *disks; /* n entries; the strings are owned by the set */
	int n;
};

/* Create one sparse image per entry of config.disks in `dir` (mode 0600, must not exist), or
 * check a passthrough device (passthrough.c) and wipe its labels. */
int disk_set_create(struct disk_set *ds, const json_t *config, const char *dir,
		    struct zb_error *err);
/* Delete the image files and wipe the passthrough devices' labels (errors are ignored: there
 * is nothing better to do with them). */
void disk_set_remove(struct disk_set *ds);
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
 * table. Returns 0, or -1 with `path` (a config path such as "disks[2].model") and `msg`. */
int disk_models_resolve(json_t *cfg, const json_t *own, char *path, size_t plen, char *msg,
			size_t mlen);
/* The built-in models as a Markdown table (docs/disks.md, `zbench matrix keys`). */
void disk_models_print_markdown(FILE *f);

/* ---- passthrough (passthrough.c) ---- */

/* Name a host block device the user allows zbench to overwrite (zbench run --allow-device). */
void passthrough_allow(const char *path);
/* Every safety check on `path` (docs/disks.md): 0 if it may be used, else -1 with err saying
 * which check failed. */
int passthrough_check(const char *path, struct zb_error *err);
/* The holders check on its own, for tests: `sysdir` is a device's sysfs directory
 * (/sys/dev/block/M:m); the first holder of it or of one of its partitions goes into buf ("dm-0",
 * "md0 (of loop0p1)"). 1 if there is one, else 0. */
int passthrough_find_holder(const char *sysdir, char *buf, size_t len);
/* Zero the ZFS labels and partition tables (first and last 4 MiB) of a device we used. */
int passthrough_wipe(const char *path, struct zb_error *err);

#endif
