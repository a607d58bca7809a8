/* Passthrough of host block devices: the safety checks before zbench writes to one.
 *
 * A benchmark destroys what is on its disks, and the device comes from a matrix, which is data
 * (docs/security.md): a host device is used only when all of these hold (docs/disks.md), checked
 * in this order, the refusal naming the first that failed:
 *   1. the path, symlinks resolved, is a block device node of the real /dev (the file system
 *      mounted there: not a file or a planted node in /dev/shm);
 *   2. nothing of it is mounted or used as swap (the device or one of its partitions);
 *   3. it has no holders (device-mapper, md, bcache, ... stacked on it or its partitions), and
 *      no loop device is backed by it;
 *   4. it can be opened exclusively (O_EXCL: nobody else, the kernel included, claims it);
 *   5. no process has it (or a partition) open, exclusively or not: every /proc/PID/fd is looked
 *      at, as fuser does (a reader that goes away within a second, such as udev probing after
 *      our own last write, is waited for);
 *   6. it is not a member of a ZFS pool imported on this host (the pool named by its ZFS label,
 *      on it or on a partition, is not in /proc/spl/kstat/zfs; the host's `zpool list -vHP`, if
 *      there is one, does not list it);
 *   7. the user named this device with `zbench run --allow-device PATH` (any name of the same
 *      device). Without that, the refusal names the pool whose ZFS label it carries, else the
 *      file system or partition table signature (libblkid), if any. Naming the device is the
 *      user's statement that what is on it may be destroyed, so a signature alone does not refuse
 *      an allowed device: zbench wipes the labels of every device it uses before and after each
 *      cell (a device it used carries a ZFS label).
 * Checks 1-6 cannot be overridden: writing to a device in use corrupts a live system.
 *
 * The exclusive descriptor of check 4 is what a cell keeps (passthrough_open()): every later
 * check, the wipes and QEMU itself use that very device, never the path again, and no one else
 * can claim it until the cell is over.
 */
#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "disk.h"

#define ALLOW_MAX 64
/* ZFS keeps two labels in the first and two in the last 512K of a vdev. On a whole-disk vdev the
 * vdev is partition 1, which starts at 1 MiB and ends before the 8 MiB partition 9 (plus
 * alignment): 16 MiB from each end covers both pairs, and the partition tables. */
#define WIPE_SPAN (16u << 20)

static const char *allowed[ALLOW_MAX];
static int n_allowed;

void passthrough_allow(const char *path)
{
	if (n_allowed < ALLOW_MAX)
		allowed[n_allowed++] = path;
}

/* Whether the user named device `rdev` with --allow-device, by any of its names. */
static int is_allowed(dev_t rdev)
{
	struct stat st;

	for (int i = 0; i < n_allowed; i++) {
		if (stat(allowed[i], &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == rdev)
			return 1;
	}
	return 0;
}

/* Whether block device `dev` is `disk` or one of its partitions (sysfs: a partition's parent
 * directory is its disk). */
static int dev_on_disk(dev_t dev, dev_t disk)
{
	char link[64], buf[32];
	FILE *f;
	unsigned ma, mi;
	int found = 0;

	if (dev == disk)
		return 1;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u/../dev", major(dev), minor(dev));
	f = fopen(link, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%u:%u", &ma, &mi) == 2)
		found = makedev(ma, mi) == disk;
	fclose(f);
	return found;
}

/* The mount point of the first mount of `disk` or a partition of it, into buf; 0 if none. */
static int find_mount(dev_t disk, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned ma, mi;
		char mnt[1024];

		/* id parent major:minor root mountpoint ... */
		if (sscanf(line, "%*d %*d %u:%u %*s %1023s", &ma, &mi, mnt) == 3 &&
		    dev_on_disk(makedev(ma, mi), disk)) {
			snprintf(buf, len, "%s", mnt);
			fclose(f);
			return 1;
		}
	}
	fclose(f);
	f = fopen("/proc/swaps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char dev[1024];
		struct stat st;

		if (sscanf(line, "%1023s", dev) == 1 && stat(dev, &st) == 0 &&
		    S_ISBLK(st.st_mode) && dev_on_disk(st.st_rdev, disk)) {
			snprintf(buf, len, "swap");
			fclose(f);
			return 1;
		}
	}
	if (f)
		fclose(f);
	return 0;
}

/* The first entry of directory `dir` (a holders/ directory: one symlink per holder), into buf. */
static int first_entry(const char *dir, char *buf, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] != '.') {
			snprintf(buf, len, "%s", de->d_name);
			found = 1;
			break;
		}
	}
	if (d)
		closedir(d);
	return found;
}

int passthrough_find_holder(const char *sysdir, char *buf, size_t len)
{
	DIR *d;
	struct dirent *de;
	char sub[1024], name[256];
	int found = 0;

	snprintf(sub, sizeof(sub), "%s/holders", sysdir);
	if (first_entry(sub, buf, len))
		return 1;
	/* partitions are subdirectories with their own holders/ (as are a few that never have
	 * one, like queue/ and power/) */
	d = opendir(sysdir);
	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s/holders", sysdir, de->d_name);
		if (first_entry(sub, name, sizeof(name))) {
			snprintf(buf, len, "%s (of %s)", name, de->d_name);
			found = 1;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* The name of the pool whose ZFS label libblkid finds in [off, off + size) of fd, into zpool;
 * 1 if there is one. */
static int probe_zfs_range(int fd, blkid_loff_t off, blkid_loff_t size, char *zpool, size_t zlen)
{
	blkid_probe pr = blkid_new_probe();
	const char *type = NULL, *label = NULL;
	int found = 0;

	if (!pr)
		return 0;
	if (blkid_probe_set_device(pr, fd, off, size) == 0) {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
		if (blkid_do_safeprobe(pr) == 0 &&
		    blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0 &&
		    !strcmp(type, "zfs_member")) {
			blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
			snprintf(zpool, zlen, "%s", label ? label : "?");
			found = 1;
		}
	}
	blkid_free_probe(pr);
	return found;
}

/* libblkid's view: TYPE (file system, zfs_member, swap...), LABEL, PTTYPE. Returns 1 if it found
 * a signature (desc says which), 0 if none, -1 if it could not probe. A ZFS label of the device
 * or of one of its partitions (zpool puts a whole-disk vdev in partition 1) also sets zpool to
 * the pool's name (libblkid reports it as the LABEL of a zfs_member) and *zpart to the partition
 * number (0: the whole device). */
static int probe_signature(int fd, char *desc, size_t len, char *zpool, size_t zlen, int *zpart)
{
	blkid_probe pr = blkid_new_probe();
	const char *type = NULL, *label = NULL, *pttype = NULL;
	blkid_partlist parts;
	int rc;

	zpool[0] = '\0';
	*zpart = 0;
	if (!pr)
		return -1;
	if (blkid_probe_set_device(pr, fd, 0, 0) < 0) {
		blkid_free_probe(pr);
		return -1;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == -2) {
		snprintf(desc, len, "more than one signature");
		blkid_free_probe(pr);
		return 1;
	}
	if (rc < 0) {
		blkid_free_probe(pr);
		return -1;
	}
	if (rc == 0) {
		blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
		blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
		blkid_probe_lookup_value(pr, "PTTYPE", &pttype, NULL);
	}
	if (type) {
		snprintf(desc, len, "a signature of type %s%s%s%s", type, label ? " (label \"" : "",
			 label ? label : "", label ? "\")" : "");
		if (!strcmp(type, "zfs_member"))
			snprintf(zpool, zlen, "%s", label ? label : "?");
	} else if (pttype) {
		snprintf(desc, len, "a partition table (%s)", pttype);
		parts = blkid_probe_get_partitions(pr);
		for (int i = 0; parts && !zpool[0] && i < blkid_partlist_numof_partitions(parts);
		     i++) {
			blkid_partition p = blkid_partlist_get_partition(parts, i);

			if (p && probe_zfs_range(blkid_probe_get_fd(pr),
						 blkid_partition_get_start(p) * 512,
						 blkid_partition_get_size(p) * 512, zpool, zlen))
				*zpart = blkid_partition_get_partno(p);
		}
	}
	blkid_free_probe(pr);
	return type || pttype;
}

/* Whether pool `name` is imported on this host (the zfs module lists imported pools). */
static int host_pool_imported(const char *name)
{
	char path[512];

	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	snprintf(path, sizeof(path), "/proc/spl/kstat/zfs/%s", name);
	return access(path, F_OK) == 0;
}

/* The imported pool that holds `disk` or one of its partitions according to the host's own
 * `zpool list -vHP` (which names every vdev by its path), into pool; 0 if none, or if the host has
 * no zpool command. It catches a pool imported under another name than its label says. */
static int zpool_list_owner(dev_t disk, char *pool, size_t len)
{
	char *const argv[] = { "zpool", "list", "-vHP", NULL };
	char *out = NULL, *save = NULL;
	struct zb_error e = { 0 };
	char cur[256] = "";
	int found = 0;

	if (run_capture(argv, "/dev/null", 1 << 20, &out, &e) != 0) {
		free(out);
		return 0;
	}
	for (char *line = strtok_r(out, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		char *fsave = NULL, *f = strtok_r(line, "\t", &fsave);
		struct stat st;

		if (!f)
			continue;
		if (line[0] != '\t') { /* a pool's own line starts with its name */
			snprintf(cur, sizeof(cur), "%s", f);
			continue;
		}
		if (f[0] == '/' && stat(f, &st) == 0 && S_ISBLK(st.st_mode) &&
		    dev_on_disk(st.st_rdev, disk)) {
			snprintf(pool, len, "%s", cur);
			found = 1;
		}
	}
	free(out);
	return found;
}

int passthrough_overlap(dev_t a, dev_t b)
{
	return dev_on_disk(a, b) || dev_on_disk(b, a);
}

int passthrough_device(const char *path, char **real, dev_t *rdev, struct zb_error *err)
{
	struct stat st, dev;
	char *r = realpath(path, NULL);
	const char *why = NULL;

	if (!r)
		return error_sys(err, errno, "passthrough device '%s'", path);
	if (strncmp(r, "/dev/", 5))
		why = "outside /dev";
	else if (lstat(r, &st) < 0 || stat("/dev", &dev) < 0)
		why = strerror(errno);
	else if (!S_ISBLK(st.st_mode))
		why = S_ISREG(st.st_mode) ? "a regular file" : "not a block device";
	else if (st.st_dev != dev.st_dev)
		why = "on another file system than /dev's";
	if (why) {
		error_set(err, ENOTBLK, "refusing '%s'%s%s%s: not a block device node of /dev (%s)",
			  path, strcmp(r, path) ? " (= '" : "", strcmp(r, path) ? r : "",
			  strcmp(r, path) ? "')" : "", why);
		free(r);
		return -1;
	}
	*rdev = st.st_rdev;
	if (real)
		*real = r;
	else
		free(r);
	return 0;
}

/* The loop device backed by `disk` or a partition of it, into buf ("loop3"); 0 if none. A loop
 * device's backing file is held by the kernel, so no process shows it open. */
static int find_loop_backed(dev_t disk, char *buf, size_t len)
{
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	int found = 0;

	while (d && !found && (de = readdir(d))) {
		char path[300], *back = NULL;
		size_t n;
		struct stat st;
		struct zb_error e;

		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", de->d_name);
		if (read_file(path, 4096, &back, &n, &e) < 0)
			continue;
		back[strcspn(back, "\n")] = '\0';
		if (stat(back, &st) == 0 && S_ISBLK(st.st_mode) && dev_on_disk(st.st_rdev, disk)) {
			snprintf(buf, len, "%s", de->d_name);
			found = 1;
		}
		free(back);
	}
	if (d)
		closedir(d);
	return found;
}

/* The name of process `pid` (/proc/PID/comm, which it sets itself: printable characters only),
 * into buf. */
static void process_name(pid_t pid, char *buf, size_t len)
{
	char path[64], *name = NULL;
	size_t n = 0;
	struct zb_error e;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	buf[0] = '\0';
	if (read_file(path, 64, &name, &n, &e) < 0)
		return;
	name[strcspn(name, "\n")] = '\0';
	for (char *c = name; *c; c++) {
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
	}
	snprintf(buf, len, "%s", name);
	free(name);
}

/* Whether one descriptor of process `pid` (its /proc/PID/fd directory open as `fds`) is `disk`
 * or a partition of it; `skip` is a descriptor number not to count (-1: none). The target is
 * stat'ed without syncing with a network file system's server (a dead server would hang). */
static int fds_on_disk(DIR *fds, dev_t disk, int skip)
{
	struct dirent *de;

	while ((de = readdir(fds))) {
		struct statx sx;

		if (de->d_name[0] == '.' || atoi(de->d_name) == skip)
			continue;
		if (statx(dirfd(fds), de->d_name, AT_STATX_DONT_SYNC, STATX_TYPE, &sx) == 0 &&
		    S_ISBLK(sx.stx_mode) &&
		    dev_on_disk(makedev(sx.stx_rdev_major, sx.stx_rdev_minor), disk))
			return 1;
	}
	return 0;
}

/* The first process with a descriptor on `disk` or a partition of it, as fuser finds them
 * (/proc/PID/fd), our own `own_fd` excepted: "PID (NAME)" into buf and 1; 0 if none; -1 if some
 * process's descriptors cannot be read (not root), so that nobody can be said to hold it. */
static int find_opener(dev_t disk, int own_fd, char *buf, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	int found = 0;

	if (!proc)
		return -1;
	while (!found && (de = readdir(proc))) {
		char path[300], name[64];
		DIR *fds;
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		fds = opendir(path);
		if (!fds) {
			if (errno == ENOENT || errno == ESRCH)
				continue; /* it exited meanwhile */
			closedir(proc);
			snprintf(buf, len, "%d", (int)pid);
			return -1;
		}
		if (fds_on_disk(fds, disk, pid == self ? own_fd : -1)) {
			process_name(pid, name, sizeof(name));
			snprintf(buf, len, "%d (%s)", (int)pid, name);
			found = 1;
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

/* Checks 2 and 3, which need only the device number. */
static int check_unused(const char *path, dev_t rdev, struct zb_error *err)
{
	char what[1200], sysdir[64];

	if (find_mount(rdev, what, sizeof(what)))
		return error_set(err, EBUSY, "refusing '%s': it is mounted (on %s)", path, what);
	snprintf(sysdir, sizeof(sysdir), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	if (passthrough_find_holder(sysdir, what, sizeof(what)))
		return error_set(err, EBUSY, "refusing '%s': it has holders (%s uses it)", path,
				 what);
	if (find_loop_backed(rdev, what, sizeof(what)))
		return error_set(err, EBUSY, "refusing '%s': loop device '%s' is backed by it",
				 path, what);
	return 0;
}

/* Check 5 on the device `fd` (ours) is: a process that still has it open after a second
 * refuses it. */
static int check_no_openers(const char *path, int fd, dev_t rdev, struct zb_error *err)
{
	char who[128];
	int rc;

	for (int tries = 0;; tries++) {
		rc = find_opener(rdev, fd, who, sizeof(who));
		if (rc == 0)
			return 0;
		if (rc < 0)
			return error_set(err, EPERM,
					 "refusing '%s': the open files of process %s cannot be "
					 "read, so whether it has the device open is unknown "
					 "(passthrough needs root)",
					 path, who);
		if (tries == 10)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
	return error_set(err, EBUSY,
			 "refusing '%s': it is open in process %s; close it there first "
			 "(everything on the device would be destroyed under it)",
			 path, who);
}

/* Checks 6 and 7 on the device `fd` is. */
static int check_contents(const char *path, int fd, dev_t rdev, struct zb_error *err)
{
	char what[1200], zpool[256], owner[256], where[32];
	int sig, zpart;

	sig = probe_signature(fd, what, sizeof(what), zpool, sizeof(zpool), &zpart);
	if (sig < 0)
		return error_set(err, EIO, "refusing '%s': libblkid could not probe it", path);
	if (zpool[0] && host_pool_imported(zpool))
		return error_set(err, EBUSY,
				 "refusing '%s': it belongs to the pool '%s' imported on this host",
				 path, zpool);
	if (zpool_list_owner(rdev, owner, sizeof(owner)))
		return error_set(err, EBUSY,
				 "refusing '%s': it belongs to the pool '%s' imported on this host "
				 "(zpool list)",
				 path, owner);
	if (is_allowed(rdev))
		return 0;
	if (zpool[0]) {
		snprintf(where, sizeof(where), ", partition %d", zpart);
		return error_set(err, EPERM,
				 "refusing '%s': ZFS pool label found (pool '%s'%s, possibly "
				 "imported on this host or another); name it with --allow-device "
				 "'%s' if it may be destroyed",
				 path, zpool, zpart ? where : "", path);
	}
	if (sig)
		return error_set(
		    err, EPERM,
		    "refusing '%s': it carries %s; name it with --allow-device '%s' if "
		    "it may be destroyed",
		    path, what, path);
	return error_set(err, EPERM,
			 "refusing '%s': passthrough devices must be named with --allow-device "
			 "'%s' (everything on it is destroyed)",
			 path, path);
}

/* Every check, in order, on the device opened with `mode` | O_EXCL; returns that descriptor. */
static int device_open_checked(const char *path, int mode, char **real, struct zb_error *err)
{
	struct stat st;
	char *r = NULL;
	dev_t rdev;
	int fd;

	if (passthrough_device(path, &r, &rdev, err) < 0)
		return -1;
	if (check_unused(path, rdev, err) < 0)
		goto fail;
	fd = open(r, mode | O_EXCL | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		error_sys(
		    err, errno,
		    "refusing '%s': it cannot be opened exclusively (someone else has it open)",
		    path);
		goto fail;
	}
	/* From here on the descriptor is the device: it must be the one the checks above saw. */
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != rdev) {
		error_set(err, EBUSY, "refusing '%s': it changed while being checked", path);
		close(fd);
		goto fail;
	}
	if (check_no_openers(path, fd, rdev, err) < 0 || check_contents(path, fd, rdev, err) < 0) {
		close(fd);
		goto fail;
	}
	if (real)
		*real = r;
	else
		free(r);
	return fd;
fail:
	free(r);
	return -1;
}

int passthrough_check(const char *path, struct zb_error *err)
{
	int fd = device_open_checked(path, O_RDONLY, NULL, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int passthrough_open(const char *path, char **real, struct zb_error *err)
{
	return device_open_checked(path, O_RDWR, real, err);
}

int passthrough_wipe(int fd, const char *path, struct zb_error *err)
{
	static const char zeros[64 * 1024];
	uint64_t size = 0;
	int flags = fcntl(fd, F_GETFL);

	/* buffered writes from an unaligned buffer: never O_DIRECT */
	if (flags < 0 || ((flags & O_DIRECT) && fcntl(fd, F_SETFL, flags & ~O_DIRECT) < 0))
		return error_sys(err, errno, "wiping '%s'", path);
	if (ioctl(fd, BLKGETSIZE64, &size) < 0)
		return error_sys(err, errno, "size of '%s'", path);
	for (int end = 0; end < 2; end++) {
		uint64_t span = size < 2 * WIPE_SPAN ? size : WIPE_SPAN;
		uint64_t start = end ? size - span : 0;

		for (uint64_t off = 0; off < span; off += sizeof(zeros)) {
			size_t n = span - off < sizeof(zeros) ? span - off : sizeof(zeros);

			if (pwrite(fd, zeros, n, (off_t)(start + off)) != (ssize_t)n)
				return error_sys(err, errno, "wiping '%s'", path);
		}
	}
	if (fsync(fd) < 0 || ioctl(fd, BLKFLSBUF, 0) < 0) {
		/* the data is written; a failed cache flush only matters to readers on the host */
	}
	return 0;
}
