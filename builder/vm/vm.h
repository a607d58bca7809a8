/* VM backends: how a cell's machine is started, watched and stopped.
 *
 * A backend is a `const struct vm_ops` registered in vm_backends[] (vm.c). The runner only sees
 * this interface: it describes the machine in a struct vm_spec, starts it, polls the channel and
 * console, and stops it. The backend owns every process, socket and file it creates for the VM
 * except the disk images (disk.c) and the cell directory.
 */
#ifndef ZB_VM_H
#define ZB_VM_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "core/qemu_user.h"

/* The virtio-serial port of the guest channel (docs/protocol.md). */
#define VM_CHANNEL_NAME "org.zbench.0"

struct vm_disk {
	const char *name;   /* the matrix's disk name */
	const char *path;   /* host image file, or block device node (/dev/NAME) */
	const char *bus;    /* a bus of disk_bus.h's table: "virtio-blk", "virtio-scsi", "nvme" */
	const char *serial; /* what the guest sees as the serial, e.g. "zb-d0" */
	int passthrough;    /* path is a host block device (checked by passthrough.c) */
	/* The disk, open read-write (a passthrough device with O_EXCL, held until the disk set is
	 * released), or -1. A backend that runs QEMU here gives it this very file (reopened
	 * through /proc/self/fd), never the path, which could name something else by then. */
	int fd;
	/* A modelled disk (disk_server.h): a connected socket to the nbdkit that serves it
	 * through its service-time model, which QEMU's block node uses instead of `fd` (an NBD
	 * client on an inherited descriptor); -1 (or 0 in a zeroed struct): the disk is the file. */
	int nbd_fd;
	int logical_block_size, physical_block_size; /* bytes; 0: QEMU's default (512) */
	int rotation_rate; /* SCSI rotation rate: 0 not reported, 1 solid state, else rpm */
	int write_cache;   /* volatile write cache the guest sees: -1 default (on), 0, 1 */
	int discard;	   /* pass discards through to the image */
	struct vm_throttle {
		uint64_t iops, bps, iops_burst, bps_burst; /* 0: no limit */
		uint64_t burst_length;			   /* seconds; 0: QEMU's default (1) */
	} throttle;
};

/* The accelerators a matrix's vm.accel and the commands' --accel take: auto probes KVM and falls
 * back to TCG (run/kvm_probe.h). */
#define VM_ACCEL_CHOICES "auto|kvm|tcg"

struct vm_spec {
	const char *kernel, *initramfs, *cmdline;
	uint64_t memory; /* bytes */
	int cpus;
	const char *accel; /* "kvm" or "tcg" (auto is resolved by the runner) */
	const char *dir;   /* cell directory: sockets, console.log, the command line */
	struct vm_disk *disks;
	int ndisks;
	/* Host CPUs the vCPUs may run on, as a cpuset ("0-1,4"), for backends that start QEMU
	 * somewhere else (a libvirt host); NULL: the caller's own CPU affinity, which a QEMU
	 * started here inherits. */
	const char *cpuset;
	/* The cloud flavor (docs/images.md): the root disk, a qcow2 overlay the cell throws away,
	 * and its NoCloud seed volume, both virtio-blk (serials zb-root, zb-seed). NULL for the
	 * appliance, which has no root disk. */
	const char *root_disk, *seed;
	/* Warm snapshots (vm_snapshot.h, docs/performance.md), for backends that have them:
	 * where they are cached (NULL: every cell boots cold), the image's hash (part of the
	 * snapshot's key), the kernel command line the snapshot boots with, and why the runner
	 * already knows this cell must boot cold (NULL: it may be restored). */
	const char *snapshot_dir, *image_id, *warm_cmdline, *cold_reason;
	/* The cell's config.module_params: a restored cell sets them in the running guest, so each
	 * must be one the loaded module lets be written (else the cell boots cold). */
	const json_t *module_params;
};

/* How a VM came up, for the cell's record (vm_ops.boot). */
struct vm_boot {
	const char *path; /* "restored" (from a warm snapshot) or "cold" */
	char reason[256]; /* why cold, or "" */
	double build_s;	  /* > 0: the warm snapshot was made during this start (seconds) */
	double wait_s;	  /* making the snapshot or waiting for another process's making of it
			   * under its lock: not the cell's boot, kept out of its deadlines */
	double restore_s; /* restored: QEMU started and the memory loaded */
	double hotplug_s; /* restored: the disks hot-plugged and the guest woken */
};

/* Where a backend's VMs run, as connect() found it. */
struct vm_host {
	char uri[1024]; /* the connection, as opened (the default filled in) */
	int cpus;	/* that machine's logical CPUs; 0 if unknown */
};

struct vm; /* backend-private state */

/* What a backend can do beyond the mandatory hooks, as the runner asks it (vm_ops.caps). */
enum vm_cap {
	/* Runs VMs where a libvirt URI says, maybe another machine: connect() takes the URI, and
	 * --libvirt-uri, --hosts and the matrix's libvirt_uri apply. Needs connect(). */
	VM_CAP_HOSTS = 1u << 0,
	/* Boots the cloud flavor: vm_spec.root_disk (a qcow2 chain) and its seed. */
	VM_CAP_CLOUD_DISK = 1u << 1,
	/* Attaches modelled disks (vm_disk.nbd_fd: an NBD connection to the disk's model). */
	VM_CAP_DISK_MODELS = 1u << 2,
};
#define VM_CAPS_ALL (VM_CAP_HOSTS | VM_CAP_CLOUD_DISK | VM_CAP_DISK_MODELS)

struct vm_ops {
	const char *name;
	unsigned caps; /* enum vm_cap flags */
	/* Optional: connect to where the VMs run before the first start(), so that a host that
	 * cannot be reached fails before any cell runs. `uri` is the user's (NULL: the backend's
	 * default, kept under run_dir); *host says what was opened. Once per process (the
	 * connection lives as long as the process); start() without it connects by default. */
	int (*connect)(const char *uri, const char *run_dir, struct vm_host *host,
		       struct zb_error *err);
	/* Start the machine. On success *out is the running VM, its channel connected. */
	int (*start)(const struct vm_spec *spec, struct vm **out, struct zb_error *err);
	/* The stream socket of the virtio-serial port org.zbench.0 (non-blocking). */
	int (*channel_fd)(struct vm *vm);
	/* A pollable fd that becomes readable when the VM process exits, or -1. */
	int (*exit_fd)(struct vm *vm);
	/* Bytes the guest has written to its console so far (first-output detection). */
	uint64_t (*console_bytes)(struct vm *vm);
	/* Non-blocking: 1 and *status (a wait status) if the VM has exited, else 0. */
	int (*exited)(struct vm *vm, int *status);
	/* Stop the machine: polite (QMP quit) then forceful, waiting at most `grace` seconds. */
	void (*stop)(struct vm *vm, double grace);
	/* Optional: the host process to SIGKILL when zbench must die at once (a second Ctrl-C);
	 * -1 if there is none. */
	pid_t (*pid)(struct vm *vm);
	/* Release everything; the VM must have exited or been stopped. */
	void (*free)(struct vm *vm);
	/* Optional: how the VM came up (NULL: every start is a cold boot). */
	const struct vm_boot *(*boot)(struct vm *vm);
	/* Optional: in the running VM, take the I/O limits off the disks (`on` 0) or give them
	 * their vm_disk.throttle back (`on` 1); `disks` are the spec's, in its order. The runner
	 * takes them off while the guest sets up (pool, datasets, prefills) and gives them back
	 * before the guest's first phase that is not an unmeasured prefill (docs/disks.md).
	 * NULL: the disks keep their limits from the start. */
	int (*disk_limits)(struct vm *vm, const struct vm_disk *disks, int ndisks, int on,
			   struct zb_error *err);
	/* Before a resumed run starts its cells: stop what a killed zbench left of this backend's
	 * VMs for the run directory `run_dir` (processes that outlived it, each naming a file under
	 * RUN_DIR/cells/). Returns how many it stopped. Mandatory: leftovers a resume cannot find
	 * would run beside the resumed cells, on their disks. */
	int (*reap)(const char *run_dir);
};

/* ---- the qemu backend's QEMU process (vm_qemu.c, docs/security.md) ---- */

/* Who QEMU runs as: struct vm_qemu_user and vm_qemu_user() (core/qemu_user.h). */
/* QEMU's -sandbox argument: the seccomp filter with every deny. */
extern const char vm_qemu_sandbox[];
/* A value for QEMU's key=value option syntax: every ',' doubled, so that it stays one value (a
 * ',' in a path would start an option of its own: "-o DIR,path=..."). Returns a malloc'd
 * string. Every path or name that reaches such an option goes through here. */
char *vm_qemu_opt_quote(const char *value);
/* For tests: the argument vector (malloc'd, NULL-terminated, each string malloc'd) the qemu
 * backend would run for `s` with QEMU as `user`. The files it names are opened and closed again
 * (console.log is created); -1 with err if one cannot be. */
int vm_qemu_cmdline(const struct vm_spec *s, const struct vm_qemu_user *user, char ***argv,
		    struct zb_error *err);

/* The domain XML (*xml, malloc'd) the libvirt backend creates for `s` (s->dir absolute): the
 * domain named `name` with `uuid`, its disks at the absolute `paths`; `remote`: the connection
 * names another machine. -1 with err for a disk libvirt cannot attach (vm_libvirt_xml.c; the
 * golden suite tests/golden/vm prints it). */
int vm_libvirt_domain_xml(const struct vm_spec *s, const char *name, const unsigned char uuid[16],
			  char **paths, int remote, char **xml, struct zb_error *err);

/* Every backend, in one list: X(ops table, "name", "what it does"), its table's name and a line
 * for the schema's help. vm_backends[] (vm.c), the schema's choices and help for "backend" and
 * --backend's choices come from it; the first row is the default. A new backend is its ops table
 * and one row here. */
#define VM_BACKEND_LIST(X)                                                                         \
	X(vm_qemu_ops, "qemu", "starts QEMU itself")                                               \
	X(vm_libvirt_ops, "libvirt", "goes through libvirt (docs/libvirt.md)")

#define VM_BACKEND_DECL_(ops, name, what) extern const struct vm_ops ops;
VM_BACKEND_LIST(VM_BACKEND_DECL_)
#undef VM_BACKEND_DECL_

/* The default: the list's first row (the schema's default for "backend"). */
#define VM_BACKEND_DEFAULT "qemu"

/* "qemu|libvirt": the schema's choices for "backend" (a constant expression). */
#define VM_BACKEND_CHOICE_(ops, name, what) "|" name
#define VM_BACKEND_CHOICES		    (VM_BACKEND_LIST(VM_BACKEND_CHOICE_) + 1)
/* "HEAD; qemu: starts QEMU itself; libvirt: ...": the schema's help, a string literal. */
#define VM_BACKEND_HELP_(ops, name, what) "; " name ": " what
#define VM_BACKEND_HELP(head)		  head VM_BACKEND_LIST(VM_BACKEND_HELP_)

/* The backend named `name`, or NULL. Only tables that pass vm_ops_check() and carry their row's
 * name are returned (each is checked once, on first use). */
const struct vm_ops *vm_backend(const char *name);
/* The default backend (the list's first), or the first with every flag of `caps` (the backend
 * --hosts means); NULL if none has them. */
const struct vm_ops *vm_backend_with(unsigned caps);
/* Whether the backend named `name` exists and has every flag of `caps` (enum vm_cap). */
int vm_backend_has(const char *name, unsigned caps);
/* 0 if an ops table is whole: a name, every mandatory hook, only known capability flags, and
 * the hooks its flags need; else -1 with err naming the backend and what is wrong. */
int vm_ops_check(const struct vm_ops *ops, struct zb_error *err);

/* The first line of `qemu-system-x86_64 --version`, or "unknown"; malloc'd. */
char *vm_qemu_version(void);

/* For reap(): whether a /proc/PID/cmdline (`len` bytes, NUL-separated) is `program`'s and names
 * a file under `cells` (RUN_DIR/cells/), as written or as vm_qemu_opt_quote() writes it into an
 * option's value. */
int vm_cmdline_is_leftover(const char *cmdline, size_t len, const char *program, const char *cells);
/* SIGKILL every process of `program` (other than this one) whose command line names a file under
 * RUN_DIR/cells/ (its path as given, or absolute); returns how many. */
int vm_reap_processes(const char *run_dir, const char *program);

#endif
