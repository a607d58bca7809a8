/* A resumed run's backend (vm_ops.reap) finds the QEMU processes a killed zbench left behind by
 * the cell directory in their command line (vm_cmdline_is_leftover): as written, or as
 * vm_qemu_opt_quote() puts a path into an option's value (every file reaches QEMU as a descriptor
 * whose `opaque=` label is the quoted path: a ',' doubled). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vm/vm.h"

#define CMD(s) s, sizeof(s) - 1 /* a /proc/PID/cmdline: NUL-separated, NULs kept */

static const struct {
	const char *cmdline;
	size_t len;
	const char *cells;
	int want;
} cases[] = {
	{ CMD("qemu-system-x86_64\0-add-fd\0fd=3,set=1,opaque=/r/run-1/cells/001-ab-r0/"
	      "disk0.img\0"),
	  "/r/run-1/cells/", 1 },
	/* a ',' in the run directory: only the quoted form is on the command line */
	{ CMD("qemu-system-x86_64\0-add-fd\0fd=3,set=1,opaque=/r/a,,b/cells/001-ab-r0/"
	      "disk0.img\0"),
	  "/r/a,b/cells/", 1 },
	{ CMD("qemu-system-x86_64\0-add-fd\0fd=4,set=2,opaque=/r/x,,,,y,,/cells/002-cd-r1/"
	      "console.log\0"),
	  "/r/x,,y,/cells/", 1 },
	/* as written, where a path is not an option's value */
	{ CMD("qemu-system-x86_64\0-name\0zbench\0/r/a,b/cells/001-ab-r0/vm.sock\0"),
	  "/r/a,b/cells/", 1 },
	/* not QEMU, or another run directory */
	{ CMD("vi\0/r/run-1/cells/001-ab-r0/console.log\0"), "/r/run-1/cells/", 0 },
	{ CMD("qemu-system-x86_64\0-add-fd\0fd=3,set=1,opaque=/r/run-10/cells/001-ab-r0/d\0"),
	  "/r/run-1/cells/", 0 },
	{ CMD("qemu-system-x86_64\0-add-fd\0fd=3,set=1,opaque=/r/ab/cells/001-ab-r0/d\0"),
	  "/r/a,b/cells/", 0 },
	{ CMD("qemu-system-x86_64\0-add-fd\0fd=3,set=1,opaque=/r/a,b/cells/001\0"),
	  "/r/a,,b/cells/", 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(vm_cmdline_is_leftover(cases[i].cmdline, cases[i].len, "qemu-system",
					     cases[i].cells) == cases[i].want);
	/* the quoted form is the one the QEMU backend writes */
	{
		const char *cells = "/tmp/z,bench/cells/";
		char *q = vm_qemu_opt_quote("/tmp/z,bench/cells/001-ab-r0/disk0.img");
		char cmd[256];
		int n = snprintf(cmd, sizeof(cmd),
				 "qemu-system-x86_64%c-add-fd%cfd=3,set=1,opaque=%s", 0, 0, q);

		CHECK(vm_cmdline_is_leftover(cmd, (size_t)n, "qemu-system", cells) == 1);
		free(q);
	}
	/* a modelled disk's nbdkit names its image and counters there (disk_servers_reap()) */
	{
		static const char srv[] = "nbdkit\0--single\0--exit-with-parent\0--filter=/z/build/"
					  "zbench-diskmodel.so\0file\0file=/r/run-1/cells/001-ab-r0/"
					  "d0.img\0dm_model=hdd-7200\0";
		static const char other[] = "nbdkit\0file\0file=/r/run-10/cells/001-ab-r0/d0.img\0";

		CHECK(vm_cmdline_is_leftover(srv, sizeof(srv) - 1, "nbdkit", "/r/run-1/cells/") == 1);
		CHECK(vm_cmdline_is_leftover(other, sizeof(other) - 1, "nbdkit", "/r/run-1/cells/") ==
		      0);
		CHECK(vm_cmdline_is_leftover(srv, sizeof(srv) - 1, "qemu-system", "/r/run-1/cells/") ==
		      0);
	}
	return check_summary("rundir");
}
