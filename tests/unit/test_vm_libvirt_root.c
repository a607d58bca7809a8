/* The libvirt backend's embedded root lives in the run directory (RUNDIR/libvirt/PID), which
 * someone else may have made: a symlink planted at RUNDIR/libvirt must not send the root (its
 * qemu.conf, its logs) anywhere else. The connection is refused before libvirt is touched, and
 * nothing appears where the symlink points. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "vm/vm.h"

static int dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n == 0;
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-test-lvroot-XXXXXX";
	char *t = mkdtemp(tmpl), *run, *elsewhere, *link;
	const struct vm_ops *ops = vm_backend("libvirt");
	struct zb_error err = { 0 };
	struct vm_host host = { 0 };
	struct zb_error e;

	CHECK(t != NULL);
	CHECK(ops != NULL && ops->connect != NULL);
	run = xasprintf("%s/run", t);
	elsewhere = xasprintf("%s/elsewhere", t);
	link = xasprintf("%s/libvirt", run);
	CHECK(mkdir(run, 0700) == 0 && mkdir(elsewhere, 0700) == 0);
	CHECK(symlink(elsewhere, link) == 0);

	CHECK(ops->connect(NULL, run, &host, &err) < 0);
	CHECK(err.errnum == ELOOP);
	CHECK(strstr(err.msg, "libvirt") != NULL);
	CHECK(dir_is_empty(elsewhere));

	remove_tree(t, &e);
	free(run);
	free(elsewhere);
	free(link);
	return check_summary("vm_libvirt_root");
}
