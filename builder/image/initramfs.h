/* Writing an initramfs: a "newc" cpio archive (the format the kernel unpacks into its rootfs,
 * see the kernel's Documentation/driver-api/early-userspace/buffer-format.rst) made from a
 * staging directory.
 *
 * The archive is deterministic: entries sorted by path (a directory before its contents), inode
 * numbers assigned in that order, every mtime INITRAMFS_MTIME, uid and gid 0, hard links
 * written as separate files. Only the permission bits and the type of each staged file matter.
 */
#ifndef ZB_INITRAMFS_H
#define ZB_INITRAMFS_H

#include <stddef.h>

#include "core/error.h"

#define INITRAMFS_MTIME 0

struct initramfs_stats {
	size_t entries; /* directories, files, symlinks and device nodes written */
	size_t bytes;	/* archive size */
};

/* Write every entry under `staging` (not `staging` itself) to `out_path`: directories, regular
 * files, symlinks, character and block devices; anything else is an error. */
int initramfs_write_dir(const char *staging, const char *out_path, struct initramfs_stats *stats,
			struct zb_error *err);

#endif
