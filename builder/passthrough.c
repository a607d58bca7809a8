/* Passthrough of host block devices: the safety checks before zbench writes to one.
 *
 * A benchmark destroys what is on its disks, so a host device is used only when all of these
 * hold (docs/disks.md), checked in this order, the refusal naming the first that failed:
 *   1. it is a block device;
 *   2. nothing of it is mounted or used as swap (the device or one of its partitions);
 *   3. it has no holders (device-mapper, md, bcache, ... stacked on it or its partitions);
 *   4. it can be opened exclusively (O_EXCL: nobody else, the kernel included, claims it);
 *   5. it is not a member of a ZFS pool imported on this host (the pool named by its ZFS label,
 *      on it or on a partition, is not in /proc/spl/kstat/zfs; the host's `zpool list -vHP`, if
 *      there is one, does not list it);
 *   6. the user named this exact path with `zbench run --allow-device PATH`. Without that, the
 *      refusal names the pool whose ZFS label it carries, else the file system or partition
 *      table signature (libblkid), if any. Naming the device is the user's statement that what is
 * on it may be destroyed, so a signature alone does not refuse an allowed device: zbench wipes the
 * labels of every device it uses before and after each cell (a device it used carries a ZFS label).
 * Checks 2-5 cannot be overridden: writing to a device in use corrupts a live system.
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
#include <unistd.h>

#include "disk.h"
#include "util.h"

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

static int is_allowed(const char *path)
{
	for (int i = 0; i < n_allowed; i++) {
		if (!strcmp(allowed[i], path))
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
static int probe_signature(const char *path, char *desc, size_t len, char *zpool, size_t zlen,
			   int *zpart)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *type = NULL, *label = NULL, *pttype = NULL;
	blkid_partlist parts;
	int rc;

	zpool[0] = '\0';
	*zpart = 0;
	if (!pr)
		return -1;
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

int passthrough_check(const char *path, struct zb_error *err)
{
	struct stat st;
	char what[1200], zpool[256], owner[256], sysdir[64], where[32];
	int fd, sig, zpart;

	if (stat(path, &st) < 0)
		return error_sys(err, errno, "passthrough device '%s'", path);
	if (!S_ISBLK(st.st_mode))
		return error_set(err, ENOTBLK, "refusing '%s': not a block device", path);
	if (find_mount(st.st_rdev, what, sizeof(what)))
		return error_set(err, EBUSY, "refusing '%s': it is mounted (on %s)", path, what);
	snprintf(sysdir, sizeof(sysdir), "/sys/dev/block/%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	if (passthrough_find_holder(sysdir, what, sizeof(what)))
		return error_set(err, EBUSY, "refusing '%s': it has holders (%s uses it)", path,
				 what);
	fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, errno,
				 "refusing '%s': it cannot be opened exclusively "
				 "(someone else has it open)",
				 path);
	close(fd);
	sig = probe_signature(path, what, sizeof(what), zpool, sizeof(zpool), &zpart);
	if (sig < 0)
		return error_set(err, EIO, "refusing '%s': libblkid could not probe it", path);
	if (zpool[0] && host_pool_imported(zpool))
		return error_set(err, EBUSY,
				 "refusing '%s': it belongs to the pool '%s' imported on this host",
				 path, zpool);
	if (zpool_list_owner(st.st_rdev, owner, sizeof(owner)))
		return error_set(err, EBUSY,
				 "refusing '%s': it belongs to the pool '%s' imported on this host "
				 "(zpool list)",
				 path, owner);
	if (!is_allowed(path)) {
		if (zpool[0]) {
			snprintf(where, sizeof(where), ", partition %d", zpart);
			return error_set(
			    err, EPERM,
			    "refusing '%s': ZFS pool label found (pool '%s'%s, possibly imported "
			    "on "
			    "this host or another); name it with --allow-device '%s' if it may be "
			    "destroyed",
			    path, zpool, zpart ? where : "", path);
		}
		if (sig)
			return error_set(
			    err, EPERM,
			    "refusing '%s': it carries %s; name it with --allow-device "
			    "'%s' if it may be destroyed",
			    path, what, path);
		return error_set(err, EPERM,
				 "refusing '%s': passthrough devices must be named with "
				 "--allow-device '%s' (everything on it is destroyed)",
				 path, path);
	}
	return 0;
}

int passthrough_wipe(const char *path, struct zb_error *err)
{
	static const char zeros[64 * 1024];
	uint64_t size = 0;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return error_sys(err, errno, "opening '%s' to wipe it", path);
	if (ioctl(fd, BLKGETSIZE64, &size) < 0) {
		close(fd);
		return error_sys(err, errno, "size of '%s'", path);
	}
	for (int end = 0; end < 2; end++) {
		uint64_t span = size < 2 * WIPE_SPAN ? size : WIPE_SPAN;
		uint64_t start = end ? size - span : 0;

		for (uint64_t off = 0; off < span; off += sizeof(zeros)) {
			size_t n = span - off < sizeof(zeros) ? span - off : sizeof(zeros);

			if (pwrite(fd, zeros, n, (off_t)(start + off)) != (ssize_t)n) {
				close(fd);
				return error_sys(err, errno, "wiping '%s'", path);
			}
		}
	}
	if (fsync(fd) < 0 || ioctl(fd, BLKFLSBUF, 0) < 0) {
		/* the data is written; a failed cache flush only matters to readers on the host */
	}
	close(fd);
	return 0;
}
