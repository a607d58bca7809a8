#ifndef ZBENCH_CORE_QEMU_USER_H
#define ZBENCH_CORE_QEMU_USER_H
/* Who QEMU, and anything else zbench runs on someone else's files, runs as: zbench's own user,
 * or a system user without privileges when zbench is root (docs/security.md). On this floor
 * because the qemu backend (vm/) and the image import's sandbox (image/) both need it. */
#include <sys/types.h>

#include "core/error.h"

#define QEMU_USER_DEFAULT "zbench-qemu"

struct vm_qemu_user {
	char name[64];
	uid_t uid;
	gid_t gid;
	gid_t groups[64]; /* supplementary groups (kvm, for /dev/kvm) */
	int ngroups;
	int drop; /* zbench is root: QEMU runs as this user instead (never root) */
};
/* The user QEMU runs as: zbench's own unless zbench is root; then the system user named by
 * $ZBENCH_QEMU_USER, default zbench-qemu (builder/install-deps.sh creates it). -1 with err if
 * that user does not exist or is root (uid or a group 0): QEMU never runs as root. */
int vm_qemu_user(struct vm_qemu_user *u, struct zb_error *err);

#endif
