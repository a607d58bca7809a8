/* A bare system brought up under the agent: the mounts, the fault flags, the virtio modules and
 * udev. On the appliance the agent is PID 1 and does all of it; under --service systemd has, and
 * only step_udev runs (agent.c's table says which steps are pid1_only). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

static struct bg_cmd udev_trigger; /* udev's coldplug trigger, from boot */

void read_faults(void)
{
	static const struct {
		const char *arg;
		enum fault f;
	} faults[] = {
		{ "zbench.fault=silent", FAULT_SILENT },
		{ "zbench.fault=panic", FAULT_PANIC },
		{ "zbench.fault=stall", FAULT_STALL },
	};
	char *cmdline = read_small("/proc/cmdline");

	for (size_t i = 0; cmdline && i < sizeof(faults) / sizeof(faults[0]); i++) {
		if (strstr(cmdline, faults[i].arg))
			agent.fault = faults[i].f;
	}
	free(cmdline);
	if (agent.fault == FAULT_SILENT) {
		/* Say nothing anywhere, ever. */
		for (;;)
			pause();
	}
}

/* From here on stdout and stderr are the console, which the host logs. */
static void console_open(void)
{
	int console = open("/dev/console", O_RDWR | O_NOCTTY);

	if (console >= 0) {
		dup2(console, 1);
		dup2(console, 2);
		if (console > 2)
			close(console);
	}
}

void step_mounts(void)
{
	static const struct {
		const char *src, *dst, *type;
		unsigned long flags;
	} mounts[] = {
		{ "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC },
		{ "sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC },
		{ "devtmpfs", "/dev", "devtmpfs", MS_NOSUID },
		{ "tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV },
		{ "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV },
	};

	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		mkdir(mounts[i].dst, 0755);
		if (mount(mounts[i].src, mounts[i].dst, mounts[i].type, mounts[i].flags, NULL) <
			0 &&
		    errno != EBUSY)
			fail_step(NULL, "mounting %s on %s: %s", mounts[i].type, mounts[i].dst,
				  strerror(errno));
	}
	mkdir("/dev/pts", 0755);
	mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, NULL);
	mkdir("/dev/shm", 01777);
	mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, NULL);
	mkdir("/run/udev", 0755);
	mkdir("/etc", 0755);
	mkdir("/etc/zfs", 0755); /* zpool.cache */
	symlink("/proc/self/mounts", "/etc/mtab");
	read_faults();
	console_open();
}

void step_base_modules(void)
{
	/* modprobe resolves dependencies (virtio_ring, virtio, virtio_pci_modern_dev, ...) from
	 * modules.dep. A module that is built in or absent for a bus is not an error here: the
	 * disks the job needs are checked when the pool is created. */
	static char *const argv[] = {
		"/sbin/modprobe", "-a",		 "-q",	   "virtio_pci", "virtio_console",
		"virtio_blk",	  "virtio_scsi", "sd_mod", NULL
	};
	char *out = NULL;

	if (run_cmd(argv, &out) != 0)
		logf_console("modprobe of virtio modules reported: %s", out ? out : "");
	zfs_preload_start();
	free(out);
}

/* No inotify watch on block devices (60-block.rules sets one). With it, zpool create's closing of
 * each disk it has just labelled makes udevd re-read the partition table a second time; udevd,
 * seconds behind the kernel under TCG, then removes the disk's by-id "-part1" link after zpool
 * saw it and waited, and the kernel's 1 s open of the vdev fails: "cannot create 'tank': no such
 * pool or dataset" (docs/disks.md, "Partition links and udev's watch"). */
static const char udev_nowatch_rule[] =
    "# zbench agent: no inotify watch on block devices (docs/disks.md)\n"
    "ACTION!=\"remove\", SUBSYSTEM==\"block\", OPTIONS+=\"nowatch\"\n";

static void write_nowatch_rule(void)
{
	const char *rule = "/run/udev/rules.d/99-zbench-nowatch.rules";
	size_t len = strlen(udev_nowatch_rule);
	int fd;

	mkdir("/run/udev", 0755);
	mkdir("/run/udev/rules.d", 0755);
	fd = open(rule, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, udev_nowatch_rule, len) != (ssize_t)len)
		fail_step(NULL, "writing '%s': %s", rule, strerror(errno));
	close(fd);
}

/* udevd starts before the host is even asked for the job, so the coldplug events are processed
 * while the guest waits for the job and loads ZFS (docs/performance.md); the trigger runs in the
 * background too, and step_udev waits for it, then for the queue to drain before the disks are
 * used. */
void step_udevd(void)
{
	static char *const udevd[] = { "/lib/systemd/systemd-udevd", "--daemon", NULL };
	/* Only what the pool needs: block devices (the by-id links the job's guest_path names) and
	 * PCI devices (their modalias loads the drivers the agent does not: nvme, ahci, xhci...;
	 * the disks behind them then appear as live events). The other subsystems (ttys, memory
	 * blocks, input, ...) serve nothing here, and their events cost seconds under TCG
	 * (docs/performance.md). */
	static char *const trigger[] = { "/bin/udevadm",	  "trigger",
					 "--action=add",	  "--subsystem-match=block",
					 "--subsystem-match=pci", NULL };

	write_nowatch_rule();
	free(must_run(udevd));
	bg_start(&udev_trigger, trigger, "/run/zbench-trigger.log");
}

void step_udev(void)
{
	static char *const settle[] = { "/bin/udevadm", "settle", "--timeout=60", NULL };
	/* --service: systemd's udevd processed the disks at boot, with 60-block.rules' watch; the
	 * rule is loaded now and a change event on every block device drops the watches. */
	static char *const reload[] = { "/bin/udevadm", "control", "--reload", NULL };
	static char *const change[] = { "/bin/udevadm", "trigger", "--action=change",
					"--subsystem-match=block", NULL };

	if (agent.service) {
		write_nowatch_rule();
		free(must_run(reload));
		free(must_run(change));
	}
	/* settle waits for the events queued so far: the trigger must have queued them all */
	if (udev_trigger.pid)
		free(bg_wait(&udev_trigger));
	free(must_run(settle));
}
