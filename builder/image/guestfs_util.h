/* libguestfs, as the cloud flavor and image import use it: one way to open a handle, report its
 * errors, and do the few things both do on a guest's file system. */
#ifndef ZB_GUESTFS_UTIL_H
#define ZB_GUESTFS_UTIL_H

#include <guestfs.h>
#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

/* "libguestfs: WHAT: the handle's last error". Returns -1. */
int gfs_fail(guestfs_h *g, const char *what, struct zb_error *err);

/* A handle with errors kept for gfs_fail() (not printed): the direct backend (no libvirtd), and
 * TCG where /dev/kvm opens (KVM opens but hangs on some hosts: DESIGN.md field notes), unless the
 * user set LIBGUESTFS_BACKEND or LIBGUESTFS_BACKEND_SETTINGS. NULL with err set. */
guestfs_h *gfs_open(struct zb_error *err);

/* Add the qcow2 `disk` and start the appliance (under TCG: 15-60 s). */
int gfs_launch(guestfs_h *g, const char *disk, struct zb_error *err);

/* Unmount everything and shut the appliance down, so that every write is on the disk. */
int gfs_shutdown(guestfs_h *g, struct zb_error *err);

/* Write `text` to `path` in the guest. */
int gfs_write(guestfs_h *g, const char *path, const char *text, struct zb_error *err);

/* Whether `path` is a regular file in the guest, following symbolic links. */
int gfs_is_file(guestfs_h *g, const char *path);

/* Download `path` (a regular file in the guest, symbolic links followed inside it) to `local`,
 * refused before anything is copied when it is larger than `max` bytes (the image is someone
 * else's: docs/security.md, "Imported images"). */
int gfs_download_capped(guestfs_h *g, const char *path, const char *local, int64_t max,
			struct zb_error *err);

/* Mask each of `units` (a link to /dev/null in /etc/systemd/system), appending its name to the
 * array `record` when it is not NULL. */
int gfs_mask_units(guestfs_h *g, const char *const *units, size_t n, json_t *record,
		   struct zb_error *err);

/* Free a NULL-terminated string list libguestfs returned (NULL-safe). */
void gfs_strings_free(char **v);

static inline void gfs_closep(guestfs_h **g)
{
	if (*g)
		guestfs_close(*g);
}

/* guestfs_close() a handle at the end of its scope (NULL is fine). */
#define cleanup_gfs __attribute__((cleanup(gfs_closep)))

#endif
