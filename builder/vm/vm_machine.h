/* The machine both VM backends describe (vm_qemu.c as a command line, vm_libvirt_xml.c as domain
 * XML), resolved in one place so that they cannot drift apart: the accelerator's CPU, the
 * firmware, and how each disk is cached on the host. */
#ifndef ZB_VM_MACHINE_H
#define ZB_VM_MACHINE_H

#include "vm.h"

/* qboot: boots an ELF (PVH) kernel seconds faster than SeaBIOS (docs/libvirt.md). */
#define VM_QBOOT_ROM "/usr/share/qemu/qboot.rom"

struct vm_machine {
	int kvm;	      /* spec->accel is "kvm": the host's CPU, else TCG's "max" */
	const char *firmware; /* VM_QBOOT_ROM for an ELF kernel when it is installed, else NULL
			       * (the machine's default firmware) */
};

void vm_machine_resolve(const struct vm_spec *s, struct vm_machine *m);

/* The disk reopened for the VM with `flags` (O_RDWR, O_RDONLY) through its descriptor (a
 * description of its own, the very file or device; by d->path with O_NOFOLLOW when it has none),
 * with O_DIRECT where its file system allows it: the host page cache would let a disk's speed
 * depend on the host's free memory. A passthrough device is always direct (no fallback).
 * *direct says which; returns the descriptor, or -1 with errno. */
int vm_disk_open(const struct vm_disk *d, int flags, int *direct);
/* Whether the VM's disk bypasses the host page cache: a passthrough device always, an image
 * when vm_disk_open() can open it O_DIRECT. For backends that give QEMU a path, not a file. */
int vm_disk_direct(const struct vm_disk *d);
/* libvirt's cache mode for a disk: libvirt ties the guest-visible write cache to it
 * (none/writeback: on; directsync/writethrough: off), so write_cache picks the mode. */
const char *vm_disk_cache_mode(const struct vm_disk *d, int direct);

#endif
