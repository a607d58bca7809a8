/* A run's passthrough devices across its cells (devices.c): what one cell's disks cannot see
 * alone (a device two cells or two repeats would share, a device on another machine's VM). The
 * device's own checks are builder/vm/passthrough.c's. */
#ifndef ZB_DEVICES_H
#define ZB_DEVICES_H

#include <stddef.h>

#include "core/error.h"

/* Where and how a run's cells run, as far as their passthrough devices care. */
struct disk_run_plan {
	/* A libvirt URI of the run that names another machine, or NULL: every cell runs here. */
	const char *remote_uri;
	/* Why cells run at once ("-j 2", "--hosts"), or NULL: one at a time. */
	const char *parallel;
	int repeats; /* of each cell */
};
struct cell;
/* The runner's check of every cell's passthrough devices, before anything is created or
 * written, in this order: none at all when cells run on another machine (the checks and the
 * wipes would run here, on this machine's device of that name); none named twice in a cell (any
 * two names of overlapping devices); with plan->parallel, none that two tasks of the run (two
 * cells, or two repeats of one) would use; then every device's own checks (passthrough_check()).
 * 0, or -1 with err naming the cell, the disk and the device. */
int disk_check_devices(const struct cell *cells, size_t n, const struct disk_run_plan *plan,
		       struct zb_error *err);

#endif
