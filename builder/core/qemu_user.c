/* Who QEMU runs as (core/qemu_user.h). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/qemu_user.h"

int vm_qemu_user(struct vm_qemu_user *u, struct zb_error *err)
{
	const char *name = getenv("ZBENCH_QEMU_USER");
	struct passwd *pw;
	int n = (int)(sizeof(u->groups) / sizeof(u->groups[0]));

	memset(u, 0, sizeof(*u));
	u->uid = geteuid();
	u->gid = getegid();
	if (u->uid != 0) {
		pw = getpwuid(u->uid);
		snprintf(u->name, sizeof(u->name), "%s", pw ? pw->pw_name : "?");
		return 0; /* QEMU runs as zbench's own user, as before */
	}
	if (!name || !*name)
		name = QEMU_USER_DEFAULT;
	pw = getpwnam(name);
	if (!pw)
		return error_set(
		    err, ENOENT,
		    "user '%s' does not exist: zbench runs as root but QEMU never does; "
		    "create it with 'useradd --system --user-group --no-create-home "
		    "--shell /usr/sbin/nologin %s' (builder/install-deps.sh does), or "
		    "name another with ZBENCH_QEMU_USER",
		    name, name);
	if (pw->pw_uid == 0 || pw->pw_gid == 0)
		return error_set(err, EPERM, "user '%s' is root or in group root: QEMU must not be",
				 name);
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &n) < 0)
		return error_set(err, E2BIG, "user '%s' is in too many groups", name);
	for (int i = 0; i < n; i++) {
		if (u->groups[i] == 0)
			return error_set(err, EPERM, "user '%s' is in group root: QEMU must not be",
					 name);
	}
	u->ngroups = n;
	u->drop = 1;
	return 0;
}
