/* The passthrough holders check (builder/passthrough.c) against sysfs-shaped trees: this host
 * has no device-mapper or md driver, so a real holder cannot be made (docs/disks.md). The trees
 * are laid out like /sys/dev/block/7:0 -> /sys/class/block/loop0: holders/ with one symlink per
 * holder, and partitions as subdirectories with their own holders/. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "disk.h"

static const struct {
	const char *name;
	const char *dirs[4];  /* made under the device's directory */
	const char *links[2]; /* holders: symlinks, like sysfs's "../../dm-0" */
	int found;
	const char *holder;
} cases[] = {
	{ "no holders", { "holders", "queue", "power", "loop0p1/holders" }, { NULL }, 0, "" },
	{ "device-mapper on the device", { "holders", "queue" }, { "holders/dm-0" }, 1, "dm-0" },
	{ "md on a partition",
	  { "holders", "queue", "loop0p1/holders", "loop0p2/holders" },
	  { "loop0p2/holders/md127" },
	  1,
	  "md127 (of loop0p2)" },
	{ "no holders directory at all", { "queue" }, { NULL }, 0, "" },
};

/* rm -r of what a case made (small, known trees) */
static void remove_case(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
}

int main(void)
{
	char tmpl[] = "/tmp/zbench-holders.XXXXXX", *base = mkdtemp(tmpl), buf[256];

	if (!base) {
		perror("mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char dev[512], path[1024];

		snprintf(dev, sizeof(dev), "%s/case%zu", base, i);
		CHECK(mkdir(dev, 0755) == 0);
		for (size_t d = 0; d < 4 && cases[i].dirs[d]; d++) {
			const char *slash = strchr(cases[i].dirs[d], '/');

			if (slash) { /* the partition's own directory first */
				snprintf(path, sizeof(path), "%s/%.*s", dev,
					 (int)(slash - cases[i].dirs[d]), cases[i].dirs[d]);
				CHECK(mkdir(path, 0755) == 0 || errno == EEXIST);
			}
			snprintf(path, sizeof(path), "%s/%s", dev, cases[i].dirs[d]);
			CHECK(mkdir(path, 0755) == 0);
		}
		for (size_t l = 0; l < 2 && cases[i].links[l]; l++) {
			snprintf(path, sizeof(path), "%s/%s", dev, cases[i].links[l]);
			CHECK(symlink("../../dm-0", path) == 0);
		}
		buf[0] = '\0';
		if (passthrough_find_holder(dev, buf, sizeof(buf)) != cases[i].found)
			fprintf(stderr, "case '%s': wrong answer\n", cases[i].name);
		CHECK(passthrough_find_holder(dev, buf, sizeof(buf)) == cases[i].found);
		if (cases[i].found)
			CHECK_STR(buf, cases[i].holder);
	}
	CHECK(passthrough_find_holder("/nonexistent/sys/dev/block/7:99", buf, sizeof(buf)) == 0);
	/* the real sysfs of a loop device, which has no holders here */
	if (access("/sys/dev/block/7:0/holders", F_OK) == 0)
		CHECK(passthrough_find_holder("/sys/dev/block/7:0", buf, sizeof(buf)) == 0);
	remove_case(base);
	return check_summary("passthrough");
}
