/* Disk buses: the one table of the controllers a matrix's disk can hang on (disks[].bus).
 *
 * Everything zbench knows about a bus is in its entry of disk_buses[] (disk_bus.c): the name the
 * matrix uses (the schema's allowed values are DISK_BUS_CHOICES, from the same list), what the
 * guest sees (its /dev/disk/by-id name, serial length, rotation and sector limits, ports), the
 * QEMU devices the qemu backend adds (vm_qemu.c), the libvirt target and controller the libvirt
 * backend writes (vm_libvirt_xml.c), and the guest kernel's config symbols and modules the image
 * needs to drive it (image_modules.c). A new bus is one entry here and one name in
 * DISK_BUS_LIST. */
#ifndef ZB_DISK_BUS_H
#define ZB_DISK_BUS_H

#include <stddef.h>

#include "error.h"

/* Every bus, in table order: X(ID, "name"). */
#define DISK_BUS_LIST(X)                                                                           \
	X(VIRTIO_BLK, "virtio-blk")                                                                \
	X(VIRTIO_SCSI, "virtio-scsi")                                                              \
	X(NVME, "nvme")                                                                            \
	X(SATA, "sata")                                                                            \
	X(USB2, "usb2")                                                                            \
	X(USB3, "usb3")

#define DISK_BUS_ENUM_(id, name) DISK_BUS_##id,
enum disk_bus_id { DISK_BUS_LIST(DISK_BUS_ENUM_) DISK_BUS_COUNT };
#undef DISK_BUS_ENUM_

/* "virtio-blk|virtio-scsi|...": the schema's choices for disks[].bus (a constant expression). */
#define DISK_BUS_CHOICE_(id, name) "|" name
#define DISK_BUS_CHOICES	   (DISK_BUS_LIST(DISK_BUS_CHOICE_) + 1)

struct disk_bus {
	const char *name; /* the matrix's disks[].bus */

	/* What the guest sees. */
	const char *by_id, *by_id_end; /* its /dev/disk/by-id name: by_id SERIAL by_id_end */
	int serial_max;		       /* longest serial the bus carries */
	int rotation_rate;	       /* carries a rotation rate the matrix sets (SCSI VPD): QEMU's
					* rotation_rate property, libvirt's <target rotation_rate> */
	int rotational;	      /* what the guest's queue/rotational says without one: 0, 1 */
	int logical_512_only; /* QEMU's device takes only 512-byte logical sectors (IDE) */
	int max_disks;	      /* ports on its one controller (0: no limit that matters) */

	/* The qemu backend (vm_qemu.c). */
	struct {
		const char *controller; /* -device added before the bus's first disk, or NULL */
		const char *device;	/* the disk's -device, before its properties */
		const char *port;	/* the disk's bus=, or NULL; with per_port + port number */
		int per_port;		/* the controller takes one disk per port */
	} qemu;

	/* The libvirt backend (vm_libvirt_xml.c). */
	struct {
		const char *bus; /* <target bus=...>; NULL: not available through libvirt */
		const char
		    *dev_prefix; /* <target dev=...> prefix: "vd", "sd" (counted per prefix) */
		const char *controller; /* element added once before the first disk, or NULL */
	} libvirt;

	/* The guest kernel (image_modules.c): every config symbol built in (=y), or a module (=m)
	 * that is in the initramfs. `listed` are the modules a recipe names for the bus (the rest
	 * follow from modules.dep): without a built image, that is how a recipe is judged. */
	struct {
		const char *config, *module;
	} needs[4];
	const char *listed[2];
	/* Images built before the manifest had "buses" (Debian's cloud kernel) drive it. */
	int legacy;
};

/* The table, indexed by enum disk_bus_id. */
extern const struct disk_bus disk_buses[DISK_BUS_COUNT];

/* The bus named `name`, or NULL. */
const struct disk_bus *disk_bus_find(const char *name);
/* 0 if the table is whole: each entry named as in DISK_BUS_LIST, with a guest name, a serial
 * length, a QEMU device and the kernel's needs; else -1 with err naming the entry. */
int disk_bus_check(struct zb_error *err);

#endif
