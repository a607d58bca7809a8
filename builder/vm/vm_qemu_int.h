/* What builder/vm/vm_qemu.c (the process) and vm_qemu_args.c (its command line) share: a QEMU
 * process in the making. Private to the qemu backend. */
#ifndef ZB_VM_QEMU_INT_H
#define ZB_VM_QEMU_INT_H

#include "core/error.h"
#include "vm.h"
#include "vm_snapshot.h"

#define QEMU_BINARY	  "qemu-system-x86_64"
#define QEMU_MAX_ARGS	  1024
#define QEMU_MAX_FDS	  160 /* every disk, its chain, the console, the sockets */
#define QEMU_CHAIN_MAX	  16  /* files in the cloud root's backing chain */
#define QEMU_START_WAIT_S 30
#define QEMU_QMP_WAIT_S	  30 /* one QMP command in the running VM */

struct args {
	char *v[QEMU_MAX_ARGS];
	int n;
};

/* A QEMU process in the making: its arguments and the descriptors it inherits (opened here,
 * closed in zbench once QEMU has them). */
struct launch {
	struct args a;
	int keep[QEMU_MAX_FDS];
	int nkeep;
	int nsets;     /* -add-fd sets so far */
	int chan, qmp; /* our ends of the socketpairs */
	const struct vm_qemu_user *user;
	struct vm_warm *warm; /* a warm machine (vm_snapshot.h), or NULL */
};

/* Open every file, make the sockets and fill l->a with the command line for `s` (its console
 * log at `console`): 0, or -1 with err. launch_release() closes what is still ours. */
int launch_build(struct launch *l, const struct vm_spec *s, const char *console,
		 struct zb_error *err);
void launch_release(struct launch *l);

/* A disk's limits as a throttle-group's "limits" object (new): the ones it sets; NULL: every
 * limit a disk can set, zero (no limit). The group of disk i is "tg<i>" (vm_qemu_args.c),
 * which qom-set changes in the running VM (vm_qemu.c); a qom-set leaves what it does not name
 * as it was. */
json_t *vm_qemu_throttle_limits(const struct vm_throttle *t);

#endif
