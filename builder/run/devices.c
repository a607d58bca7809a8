/* A run's passthrough devices, checked across its cells before anything is created. */
#include "devices.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <sys/types.h>

#include "core/util.h"
#include "matrix/matrix.h"
#include "vm/disk.h"

/* A device of the run as disk_check_devices() sees them: the first disk that names it. */
struct run_device {
	dev_t rdev;
	size_t cell;	  /* index of the last cell that names it */
	const char *disk; /* that cell's disk */
	const char *path; /* as the matrix names it */
};

/* No passthrough at all when a cell runs on another machine. */
static int devices_here(const struct cell *cells, size_t n, const struct disk_run_plan *plan,
			struct zb_error *err)
{
	for (size_t i = 0; i < n && plan->remote_uri; i++) {
		size_t k;
		json_t *d;

		json_array_foreach (json_object_get(cells[i].config, "disks"), k, d) {
			const char *dev = json_string_value(json_object_get(d, "device"));

			if (dev)
				return error_set(
				    err, EINVAL,
				    "cell %s: disk '%s': refusing passthrough device '%s': libvirt "
				    "host '%s' is on another machine, and the device checks and "
				    "wipes would run on this one (pass devices through only to VMs "
				    "on this machine)",
				    cells[i].id, json_string_value(json_object_get(d, "name")), dev,
				    plan->remote_uri);
		}
	}
	return 0;
}

/* One more disk naming a device: refused if its cell names it twice, or if another task of a
 * parallel run uses it too; else recorded in devs (one entry per device). */
static int device_add(struct run_device **devs, size_t *ndevs, const struct cell *cells, size_t i,
		      const char *disk, const char *path, const struct disk_run_plan *plan,
		      struct zb_error *err)
{
	struct run_device *rd = NULL;
	dev_t rdev;

	if (passthrough_device(path, NULL, &rdev, err) < 0)
		return error_wrap(err, "cell %s: disk '%s'", cells[i].id, disk);
	for (size_t j = 0; j < *ndevs && !rd; j++) {
		if (passthrough_overlap((*devs)[j].rdev, rdev))
			rd = &(*devs)[j];
	}
	if (rd && rd->cell == i)
		return error_set(err, EINVAL,
				 "cell %s: disk '%s': refusing '%s': it is the same device as disk "
				 "'%s' ('%s'), or overlaps it",
				 cells[i].id, disk, path, rd->disk, rd->path);
	if (rd && plan->parallel)
		return error_set(
		    err, EINVAL,
		    "refusing '%s': used by more than one cell at a time (cell %s disk "
		    "'%s' and cell %s disk '%s' with %s); run them one at a time",
		    path, cells[rd->cell].id, rd->disk, cells[i].id, disk, plan->parallel);
	if (!rd && plan->parallel && plan->repeats > 1)
		return error_set(err, EINVAL,
				 "refusing '%s': used by more than one cell at a time (the %d "
				 "repeats of cell %s, disk '%s', with %s); run them one at a time",
				 path, plan->repeats, cells[i].id, disk, plan->parallel);
	if (!rd) {
		*devs = xrealloc(*devs, (*ndevs + 1) * sizeof(**devs));
		rd = &(*devs)[(*ndevs)++];
		*rd = (struct run_device){ .rdev = rdev, .disk = disk, .path = path };
	}
	rd->cell = i;
	rd->disk = disk;
	rd->path = path;
	return 0;
}

int disk_check_devices(const struct cell *cells, size_t n, const struct disk_run_plan *plan,
		       struct zb_error *err)
{
	struct run_device *devs = NULL;
	size_t ndevs = 0;
	int rc = 0;

	if (devices_here(cells, n, plan, err) < 0)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t k;
		json_t *d;

		json_array_foreach (json_object_get(cells[i].config, "disks"), k, d) {
			const char *dev = json_string_value(json_object_get(d, "device"));
			const char *name = json_string_value(json_object_get(d, "name"));

			if (dev && (rc = device_add(&devs, &ndevs, cells, i, name ? name : "?", dev,
						    plan, err)) < 0)
				break;
		}
	}
	/* each device's own checks, once */
	for (size_t j = 0; j < ndevs && rc == 0; j++) {
		if ((rc = passthrough_check(devs[j].path, err)) < 0)
			error_wrap(err, "cell %s: disk '%s'", cells[devs[j].cell].id, devs[j].disk);
	}
	free(devs);
	return rc;
}
