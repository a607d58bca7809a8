#include "disk_bus.h"

#include <string.h>

/* Which of these buses a guest can use depends on its kernel: Debian's cloud kernel has no AHCI
 * and no USB, its generic kernel has both. The image records the buses its kernel drives
 * (manifest.json "buses", image_modules.c) and the runner refuses a disk on any other before
 * anything boots (disk_check_image()). libvirt ties the guest-visible write cache to the cache
 * mode, so write_cache needs no flag here (vm_disk_cache_mode()). */
const struct disk_bus disk_buses[DISK_BUS_COUNT] = {
	[DISK_BUS_VIRTIO_BLK] = {
	    .name = "virtio-blk",
	    .by_id = "virtio-",
	    .serial_max = 20,
	    .rotational = 1,
	    .qemu = { .device = "virtio-blk-pci" },
	    .libvirt = { .bus = "virtio", .dev_prefix = "vd" },
	    .needs = { { "CONFIG_VIRTIO_PCI", "virtio_pci" }, { "CONFIG_VIRTIO_BLK", "virtio_blk" } },
	    .listed = { "virtio_blk" },
	    .legacy = 1,
	},
	[DISK_BUS_VIRTIO_SCSI] = {
	    .name = "virtio-scsi",
	    .by_id = "scsi-0QEMU_QEMU_HARDDISK_",
	    .serial_max = 36,
	    .rotation_rate = 1,
	    .rotational = 1,
	    .qemu = { .controller = "virtio-scsi-pci,id=zbscsi",
		      .device = "scsi-hd",
		      .port = "zbscsi.0" },
	    .libvirt = { .bus = "scsi",
			 .dev_prefix = "sd",
			 .controller = "<controller type='scsi' model='virtio-scsi'/>" },
	    .needs = { { "CONFIG_VIRTIO_PCI", "virtio_pci" },
		       { "CONFIG_SCSI_VIRTIO", "virtio_scsi" },
		       { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	    .listed = { "virtio_scsi" },
	    .legacy = 1,
	},
	[DISK_BUS_NVME] = {
	    .name = "nvme",
	    .by_id = "nvme-QEMU_NVMe_Ctrl_",
	    .serial_max = 20,
	    .rotational = 0,
	    .qemu = { .device = "nvme" },
	    /* libvirt 9.0 (Debian 12) has no NVMe disk bus. */
	    .needs = { { "CONFIG_BLK_DEV_NVME", "nvme" } },
	    .listed = { "nvme" },
	    .legacy = 1,
	},
	[DISK_BUS_SATA] = {
	    .name = "sata",
	    .by_id = "ata-QEMU_HARDDISK_",
	    .serial_max = 20,
	    .rotation_rate = 1,
	    .rotational = 1,
	    .logical_512_only = 1,
	    .max_disks = 6, /* q35's ICH9 AHCI: ide.0 .. ide.5, built in (no controller) */
	    .qemu = { .device = "ide-hd", .port = "ide.", .per_port = 1 },
	    .libvirt = { .bus = "sata", .dev_prefix = "sd" },
	    .needs = { { "CONFIG_SATA_AHCI", "ahci" }, { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	    .listed = { "ahci" },
	},
	/* usb-storage: the kernel skips SCSI VPD pages on USB (no rotation rate, always
	 * rotational). */
	[DISK_BUS_USB2] = {
	    .name = "usb2",
	    .by_id = "usb-QEMU_QEMU_HARDDISK_",
	    .by_id_end = "-0:0",
	    .serial_max = 20,
	    .rotational = 1,
	    .max_disks = 6, /* usb-ehci's root hub */
	    .qemu = { .controller = "usb-ehci,id=zbehci",
		      .device = "usb-storage",
		      .port = "zbehci.0" },
	    .libvirt = { .bus = "usb",
			 .dev_prefix = "sd",
			 .controller = "<controller type='usb' model='ehci'/>" },
	    .needs = { { "CONFIG_USB_EHCI_HCD", "ehci_hcd" },
		       { "CONFIG_USB_EHCI_PCI", "ehci_pci" },
		       { "CONFIG_USB_STORAGE", "usb_storage" },
		       { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	    .listed = { "ehci_pci", "usb_storage" },
	},
	[DISK_BUS_USB3] = {
	    .name = "usb3",
	    .by_id = "usb-QEMU_QEMU_HARDDISK_",
	    .by_id_end = "-0:0",
	    .serial_max = 20,
	    .rotational = 1,
	    .qemu = { .controller = "qemu-xhci,id=zbxhci",
		      .device = "usb-storage",
		      .port = "zbxhci.0" },
	    .libvirt = { .bus = "usb",
			 .dev_prefix = "sd",
			 .controller = "<controller type='usb' model='qemu-xhci'/>" },
	    .needs = { { "CONFIG_USB_XHCI_HCD", "xhci_hcd" },
		       { "CONFIG_USB_XHCI_PCI", "xhci_pci" },
		       { "CONFIG_USB_STORAGE", "usb_storage" },
		       { "CONFIG_BLK_DEV_SD", "sd_mod" } },
	    .listed = { "xhci_pci", "usb_storage" },
	},
};

const struct disk_bus *disk_bus_find(const char *name)
{
	for (size_t i = 0; name && i < DISK_BUS_COUNT; i++) {
		if (!strcmp(disk_buses[i].name, name))
			return &disk_buses[i];
	}
	return NULL;
}

int disk_bus_check(struct zb_error *err)
{
#define DISK_BUS_NAME_(id, name) name,
	static const char *const names[] = { DISK_BUS_LIST(DISK_BUS_NAME_) };
#undef DISK_BUS_NAME_

	for (size_t i = 0; i < DISK_BUS_COUNT; i++) {
		const struct disk_bus *b = &disk_buses[i];

		if (!b->name || strcmp(b->name, names[i]))
			return error_set(err, 0, "disk bus %zu: '%s' is '%s' in DISK_BUS_LIST", i,
					 b->name ? b->name : "?", names[i]);
		if (!b->by_id || b->serial_max <= 3 || !b->qemu.device || !b->needs[0].config ||
		    !b->listed[0] || (b->libvirt.bus && !b->libvirt.dev_prefix) ||
		    (b->qemu.per_port && !b->qemu.port))
			return error_set(err, 0, "disk bus '%s': incomplete table entry", b->name);
	}
	return 0;
}
