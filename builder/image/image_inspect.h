/* What a user's cloud image holds, found with libguestfs for `zbench image import`
 * (image_inspect.c): its OS, its kernels, the ZFS module of the one that boots and its version,
 * zpool/zfs, systemd; and whether it can run a cell. */
#ifndef ZB_IMAGE_INSPECT_H
#define ZB_IMAGE_INSPECT_H

#include <guestfs.h>
#include <jansson.h>

#include "core/error.h"

/* What inspection found. Strings are malloc'd; import_facts_release() frees them. */
struct import_facts {
	char *root;				 /* the root file system's device, e.g. /dev/sda1 */
	char *type, *distro, *product, *version; /* from guestfs_inspect_* */
	char *root_uuid, *root_label;
	json_t *kernels;      /* every /boot/vmlinuz-VER, newest first */
	char *kver;	      /* the kernel that boots: the newest with a ZFS module */
	char *vmlinuz;	      /* /boot/vmlinuz-KVER */
	char *initrd;	      /* /boot/initrd.img-KVER or /boot/initramfs-KVER.img */
	char *module;	      /* /lib/modules/KVER/.../zfs.ko[.xz|.zst|.gz] */
	char *zfs_version;    /* the module's modinfo "version", e.g. 2.1.11-1+deb12u1 */
	char *openzfs;	      /* its upstream part, e.g. 2.1.11 */
	char *vermagic;	      /* the module's modinfo "vermagic" */
	char *zpool, *zfs;    /* the userland programs */
	char *zfs_userland;   /* the package that holds them (dpkg/rpm), "name version", or NULL */
	char *systemd;	      /* the systemd binary */
	int cloud_init;	      /* /etc/cloud exists */
	json_t *applications; /* the ZFS packages the image has: {name: version} */
};

void import_facts_release(struct import_facts *f);

/* Inspect the launched guest `g`, mount its file systems (as its fstab says) and fill `f`. A
 * refusal returns -1 with one line naming what is missing (the caller prefixes the file). The
 * ZFS module is read in `tmpdir`; decompressor output goes to `log`. */
int import_inspect(guestfs_h *g, struct import_facts *f, const char *tmpdir, const char *log,
		   struct zb_error *err);

/* The facts as JSON, for the sandbox's report (a new reference). */
json_t *import_facts_json(const struct import_facts *f);

/* The facts from the sandbox's report `o`, which is as untrusted as the image: known keys only,
 * every string printable and at most 1 KiB, the kernel's version, the root's UUID and label one
 * token each ([A-Za-z0-9._+~:-]: they reach the kernel command line), the required ones present,
 * a Linux root with a UUID or a label, a module built for the kernel, at most 256 kernels and
 * packages. 0, or -1 with err (f is then partly filled: import_facts_release() it). */
int import_facts_from_json(struct import_facts *f, json_t *o, struct zb_error *err);

#endif
