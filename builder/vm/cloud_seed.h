/* The cloud flavor's per-cell files (docs/images.md): in the cell directory, root.qcow2 (a
 * throw-away overlay whose backing file is the image's disk.qcow2), and seed.iso, a NoCloud
 * "cidata" volume holding user-data and meta-data (kept beside it as plain files, so a test can
 * validate them with `cloud-init schema`). */
#ifndef ZB_CLOUD_SEED_H
#define ZB_CLOUD_SEED_H

#include <jansson.h>

#include "core/error.h"
#include "image/image.h"

struct cloud_cell {
	char *overlay; /* DIR/root.qcow2: the VM's root disk */
	char *seed;    /* DIR/seed.iso: the NoCloud seed, attached read-only */
};

/* The #cloud-config object for a cell (new reference): hostname, /etc/modprobe.d from the
 * config's module_params, no growpart or resize. */
json_t *cloud_seed_user_data(const char *cell_id, json_t *config);

/* Write DIR/user-data and DIR/meta-data (instance-id = the cell id), make the seed with
 * genisoimage and the overlay with qemu-img. Tool output goes to DIR/seed.log. */
int cloud_seed_create(const struct image *img, const char *cell_id, json_t *config, const char *dir,
		      struct cloud_cell *out, struct zb_error *err);
/* Delete the overlay and the seed (user-data and meta-data stay as the cell's evidence). */
void cloud_seed_remove(struct cloud_cell *c);
void cloud_seed_release(struct cloud_cell *c);

#endif
