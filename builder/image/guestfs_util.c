/* libguestfs helpers shared by the cloud flavor (image_cloud.c) and image import
 * (image_import.c, image_inspect.c). */
#include "guestfs_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

int gfs_fail(guestfs_h *g, const char *what, struct zb_error *err)
{
	const char *e = guestfs_last_error(g);

	return error_set(err, EIO, "libguestfs: %s: %s", what, e ? e : "unknown error");
}

guestfs_h *gfs_open(struct zb_error *err)
{
	guestfs_h *g;

	if (!getenv("LIBGUESTFS_BACKEND"))
		setenv("LIBGUESTFS_BACKEND", "direct", 1);
	g = guestfs_create();
	if (!g) {
		error_sys(err, errno, "guestfs_create");
		return NULL;
	}
	guestfs_set_error_handler(g, NULL, NULL);
	if (!getenv("LIBGUESTFS_BACKEND_SETTINGS") && access("/dev/kvm", R_OK | W_OK) == 0) {
		char *settings[] = { "force_tcg", NULL };

		guestfs_set_backend_settings(g, settings);
	}
	return g;
}

int gfs_launch(guestfs_h *g, const char *disk, struct zb_error *err)
{
	if (guestfs_add_drive_opts(g, disk, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2", -1) < 0)
		return gfs_fail(g, "adding the disk", err);
	if (guestfs_launch(g) < 0)
		return gfs_fail(g, "starting the appliance", err);
	return 0;
}

int gfs_shutdown(guestfs_h *g, struct zb_error *err)
{
	if (guestfs_umount_all(g) < 0 || guestfs_shutdown(g) < 0)
		return gfs_fail(g, "closing the disk", err);
	return 0;
}

int gfs_write(guestfs_h *g, const char *path, const char *text, struct zb_error *err)
{
	if (guestfs_write(g, path, text, strlen(text)) < 0)
		return gfs_fail(g, path, err);
	return 0;
}

int gfs_is_file(guestfs_h *g, const char *path)
{
	return guestfs_is_file_opts(g, path, GUESTFS_IS_FILE_OPTS_FOLLOWSYMLINKS, 1, -1) > 0;
}

int gfs_download_capped(guestfs_h *g, const char *path, const char *local, int64_t max,
			struct zb_error *err)
{
	int64_t size;

	if (!gfs_is_file(g, path))
		return error_set(err, EINVAL, "'%s' in the image is not a regular file", path);
	size = guestfs_filesize(g, path);
	if (size < 0)
		return gfs_fail(g, path, err);
	if (size > max)
		return error_set(err, EFBIG, "'%s' in the image is %lld MiB, more than %lld MiB",
				 path, (long long)(size >> 20), (long long)(max >> 20));
	if (guestfs_download(g, path, local) < 0)
		return gfs_fail(g, path, err);
	return 0;
}

int gfs_mask_units(guestfs_h *g, const char *const *units, size_t n, json_t *record,
		   struct zb_error *err)
{
	for (size_t i = 0; i < n; i++) {
		char *p = xasprintf("/etc/systemd/system/%s", units[i]);
		int bad = guestfs_rm_f(g, p) < 0 || guestfs_ln_sf(g, "/dev/null", p) < 0;

		free(p);
		if (bad)
			return gfs_fail(g, "masking a unit", err);
		if (record)
			json_array_append_new(record, json_string(units[i]));
	}
	return 0;
}

void gfs_strings_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
