/* Warm snapshots for the qemu backend (docs/performance.md, "Warm snapshots").
 *
 * A warm snapshot is a guest saved where every cell of an image and VM shape is the same: booted,
 * the virtio modules and zfs.ko loaded, udevd running and settled, no disk attached, the agent
 * parked on the port (guest/agent_warm.c). It is QEMU's migration stream with mapped-ram, saved
 * to <snapshot_dir>/<key>.snap, where the key hashes everything that shapes that state
 * (vm_snapshot_key()); it is made on first use, under <key>.lock, so concurrent runs make it
 * once. A cell restores it (-incoming defer, migrate-incoming from the file as a descriptor),
 * gets its disks hot-plugged on PCIe root ports, and wakes the agent with fresh randomness; a
 * cell that cannot be (vm_snapshot_cold_reason()) boots cold as before, and its record says why.
 */
#ifndef ZB_VM_SNAPSHOT_H
#define ZB_VM_SNAPSHOT_H

#include "vm.h"

#define VM_WARM_ROOT_PORTS  8 /* PCIe root ports in a warm machine: one per hot-plugged device */
#define VM_WARM_MAX_DEVICES 64

enum vm_warm_mode {
	VM_WARM_SAVE,	 /* boot with root ports, to be parked and saved */
	VM_WARM_RESTORE, /* start with root ports and -incoming defer; disks for hot-plug */
};

/* What the qemu backend adds to a launch for a warm machine (vm_qemu.c). */
struct vm_warm {
	enum vm_warm_mode mode;
	int snap_fd; /* the snapshot: O_WRONLY for SAVE, O_RDONLY for RESTORE; the launch owns it */
	int snap_set; /* filled by the launch: its fd set (/dev/fdset/N) */
	/* RESTORE, filled by the launch: each disk's devices, as -device would say them, in the
	 * order to device_add them (a bus's controller first), each malloc'd */
	char *hot[VM_WARM_MAX_DEVICES];
	int nhot;
	int nports; /* root ports the hot-plugged devices use */
};

/* NULL if the cell `s` can be restored from a warm snapshot, else why it boots cold (static
 * text, or `buf`): no snapshot directory, the runner's reason, a cloud root disk, a disk on a bus
 * that cannot be hot-plugged, more devices than root ports, a serial HMP cannot carry. */
const char *vm_snapshot_cold_reason(const struct vm_spec *s, char *buf, size_t len);
#define WARM_PARAMS_MAX 4096 /* parameter names a guest may list */

/* The guest's {module: [parameter, ...]} (untrusted: the parked guest sends it): a new
 * reference if it is an object of arrays of names of [A-Za-z0-9_] (modules lowercase), each at
 * most 64 bytes, at most WARM_PARAMS_MAX names in all; else NULL. */
json_t *vm_snapshot_writable_check(json_t *w);
/* NULL if every parameter of `params` ({module: {param: value}}, a cell's module_params) is in
 * `writable` ({module: [param, ...]}, what the warm guest can set at run time), else why the
 * cell boots cold (in `buf`). */
const char *vm_snapshot_params_reason(const json_t *writable, const json_t *params, char *buf,
				      size_t len);
/* The snapshot's key for `s` (hex SHA-256) and the text it hashes (*material, malloc'd; may be
 * NULL): the key format's version, the image's hash, the kernel's and the initramfs' identity
 * (device, inode, size, mtime: a rebuilt image is a new file), QEMU's --version, the machine
 * (q35, its firmware, accelerator, CPU model), memory, vCPUs, the command line, the root ports. */
int vm_snapshot_key(const struct vm_spec *s, char key[65], char **material, struct zb_error *err);

/* vm_qemu.c's start for a spec with snapshot_dir: restore the cell from the warm snapshot
 * (making it first if need be), or boot it cold when it cannot be; *out's boot info says which
 * and why. A snapshot that cannot be made or restored is an error, not a silent cold boot. */
int vm_snapshot_start(const struct vm_spec *s, struct vm **out, struct zb_error *err);

/* ---- what vm_qemu.c gives vm_snapshot.c ---- */

/* Start QEMU for `s` (warm: NULL for a cold boot) and wait until its monitor answers. */
int vm_qemu_launch(const struct vm_spec *s, struct vm_warm *warm, struct vm **out,
		   struct zb_error *err);
/* The VM's monitor socket (capabilities negotiated) and channel socket (non-blocking). */
int vm_qemu_qmp_fd(struct vm *vm);
/* The VM's boot info, for vm_snapshot.c to fill. */
struct vm_boot *vm_qemu_boot(struct vm *vm);
/* For tests: the argument vector of a warm launch (vm_qemu_cmdline() with `warm`). */
int vm_qemu_cmdline_warm(const struct vm_spec *s, const struct vm_qemu_user *user,
			 struct vm_warm *warm, char ***argv, struct zb_error *err);
/* Release what a launch filled into `warm` (hot device strings). */
void vm_warm_release(struct vm_warm *warm);

#endif
