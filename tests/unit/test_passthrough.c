/* The passthrough holders check (builder/vm/passthrough.c) against sysfs-shaped trees: this host
 * has no device-mapper or md driver, so a real holder cannot be made (docs/disks.md). The trees
 * are laid out like /sys/dev/block/7:0 -> /sys/class/block/loop0: holders/ with one symlink per
 * holder, and partitions as subdirectories with their own holders/. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "vm/disk.h"

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

/* ---- real loop devices (root only) ------------------------------------------------------- */

static char loop_file[64], loop_dev[64];
static unsigned char pattern[4096];

/* A 64 MiB loop device whose first 4 KiB hold `pattern`; 0 if none could be made. */
static int loop_make(void)
{
	char cmd[256];
	FILE *p;
	int fd;

	snprintf(loop_file, sizeof(loop_file), "/tmp/zbench-pt-loop.%d", (int)getpid());
	fd = open(loop_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 0;
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)(i * 7 + 1);
	if (write(fd, pattern, sizeof(pattern)) != (ssize_t)sizeof(pattern) ||
	    ftruncate(fd, 64 << 20) < 0) {
		close(fd);
		return 0;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", loop_file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (!fgets(loop_dev, sizeof(loop_dev), p))
		loop_dev[0] = '\0';
	pclose(p);
	loop_dev[strcspn(loop_dev, "\n")] = '\0';
	return loop_dev[0] == '/';
}

static void loop_remove(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "losetup -d %s", loop_dev);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot detach %s\n", loop_dev);
	unlink(loop_file);
}

/* Whether the device still starts with `pattern` (nothing wrote to it). */
static int loop_unchanged(void)
{
	unsigned char buf[sizeof(pattern)];
	int fd = open(loop_dev, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(buf) && !memcmp(buf, pattern, sizeof(buf));
}

/* A child that holds the device open with `flags` (not O_EXCL) until killed. */
static pid_t hold_open(int flags)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(loop_dev, flags);

		close(p[0]);
		if (fd < 0 || write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

static void unhold(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void loop_cases(void)
{
	struct zb_error err = { 0 };
	char node[64], cfg_text[512];
	struct disk_set ds = { 0 };
	struct stat st;
	json_t *cfg;
	pid_t h;

	passthrough_allow(loop_dev);
	/* the free, allowed device passes: the control for the refusals below */
	CHECK(passthrough_check(loop_dev, &err) == 0);

	h = hold_open(O_RDWR);
	CHECK(h > 0);
	err.msg[0] = '\0';
	CHECK(passthrough_check(loop_dev, &err) < 0);
	CHECK(strstr(err.msg, "is open in process") != NULL);
	unhold(h);
	h = hold_open(O_RDONLY);
	CHECK(passthrough_check(loop_dev, &err) < 0);
	CHECK(strstr(err.msg, "is open in process") != NULL);
	unhold(h);

	/* a node of the same device outside the real /dev */
	CHECK(stat(loop_dev, &st) == 0);
	snprintf(node, sizeof(node), "/dev/shm/zbench-pt-node.%d", (int)getpid());
	if (mknod(node, S_IFBLK | 0600, st.st_rdev) == 0) {
		passthrough_allow(node);
		CHECK(passthrough_check(node, &err) < 0);
		CHECK(strstr(err.msg, "not a block device node of /dev") != NULL);
		unlink(node);
	}

	/* the same device twice in a cell: refused before either is wiped */
	snprintf(cfg_text, sizeof(cfg_text),
		 "{\"disks\": [{\"name\": \"p0\", \"device\": \"%s\"},"
		 " {\"name\": \"p1\", \"device\": \"%s\"}]}",
		 loop_dev, loop_dev);
	cfg = json_loads(cfg_text, 0, NULL);
	CHECK(cfg != NULL);
	err.msg[0] = '\0';
	CHECK(disk_set_create(&ds, cfg, "/tmp", &err) < 0);
	CHECK(strstr(err.msg, "is the same device as disk 'p0'") != NULL);
	CHECK(loop_unchanged());
	CHECK(access(loop_dev, F_OK) == 0); /* a refused set removes image files, never a device */
	json_decref(cfg);
}

/* A kept device: the descriptor is the device checked, held exclusively, and the wipe goes
 * through it. Another name of the device (a symlink in /dev) is allowed by the device. */
static void loop_open_cases(void)
{
	struct zb_error err = { 0 };
	char alias[64], *real = NULL;
	unsigned char buf[512], zero[512] = { 0 };
	int fd, other;

	snprintf(alias, sizeof(alias), "/dev/zbench-pt-alias.%d", (int)getpid());
	CHECK(symlink(loop_dev, alias) == 0);
	fd = passthrough_open(alias, &real, &err);
	CHECK(fd >= 0);
	if (fd < 0) {
		fprintf(stderr, "passthrough_open: %s\n", err.msg);
		unlink(alias);
		return;
	}
	CHECK_STR(real, loop_dev);
	other = open(loop_dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	CHECK(other < 0 && errno == EBUSY);
	if (other >= 0)
		close(other);
	CHECK(passthrough_check(loop_dev, &err) < 0);
	CHECK(strstr(err.msg, "cannot be opened exclusively") != NULL);
	CHECK(loop_unchanged()); /* checking writes nothing */
	CHECK(passthrough_wipe(fd, real, &err) == 0);
	CHECK(pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf) && !memcmp(buf, zero, 512));
	close(fd);
	free(real);
	unlink(alias);
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
	if (geteuid() == 0 && loop_make()) {
		loop_cases();
		loop_open_cases();
		loop_remove();
	} else {
		printf("passthrough: loop device cases skipped (need root and losetup)\n");
	}
	return check_summary("passthrough");
}
