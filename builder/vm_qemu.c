/* The direct QEMU backend: one qemu-system-x86_64 process per cell.
 *
 * q35 with qboot and direct kernel boot (the appliance's uncompressed vmlinux boots through PVH,
 * which skips the 5-13 s of kernel decompression TCG would spend), no network device, no
 * default devices, the serial console into the cell's console.log, the virtio-serial port
 * org.zbench.0 on a unix socket in the cell directory, QMP beside it for a polite quit, and
 * -sandbox on. The exact command line is kept in the cell directory (qemu.cmdline).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "vm.h"

#define QEMU_BINARY   "qemu-system-x86_64"
#define QBOOT_ROM     "/usr/share/qemu/qboot.rom"
#define QEMU_MAX_ARGS 1024

struct vm {
	pid_t pid;
	int pidfd;
	int chan;
	int exited;
	int status;
	char *dir;
	char *console_path;
	char *qmp_path;
};

struct args {
	char *v[QEMU_MAX_ARGS];
	int n;
};

static void args_add(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void args_add(struct args *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (a->n >= QEMU_MAX_ARGS - 1)
		abort(); /* the disk count is bounded by the matrix schema */
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void args_free(struct args *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
}

static int is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == 4 && !memcmp(magic, "\177ELF", 4);
}

/* The host page cache would let a disk's speed depend on the host's free memory; bypass it
 * (cache=none) where the file system allows O_DIRECT, else say so in the command line. */
static const char *disk_cache_mode(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

	if (fd < 0)
		return "writeback";
	close(fd);
	return "none";
}

/* Add a JSON argument (-object, -blockdev); steals `o`. JSON rather than key=value because
 * QEMU 7.2 rejects a throttle-group's limits.* in key=value form (DESIGN.md field notes), and
 * because a file name in JSON needs no comma escaping. */
static void args_add_json(struct args *a, const char *opt, json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(o);
	if (!text)
		abort();
	args_add(a, "%s", opt);
	args_add(a, "%s", text);
	free(text);
}

/* The controller a bus's disks hang on, added before its first disk: the q35 machine's built-in
 * AHCI (buses ide.0..ide.5) needs none. */
static const struct qemu_bus {
	const char *name;	/* disk.c's bus name */
	const char *controller; /* -device for the first disk on this bus, or NULL */
	const char *device;	/* the disk's -device, before its properties */
	int per_port;		/* the controller takes one disk per port (bus=<port>) */
	const char *port;	/* the disk's bus=; with per_port, followed by the port number */
	int rotation_rate;	/* has a rotation_rate property */
} qemu_buses[] = {
	{ "virtio-blk", NULL, "virtio-blk-pci", 0, NULL, 0 },
	{ "virtio-scsi", "virtio-scsi-pci,id=zbscsi", "scsi-hd", 0, "zbscsi.0", 1 },
	{ "nvme", NULL, "nvme", 0, NULL, 0 },
	{ "sata", NULL, "ide-hd", 1, "ide.", 1 },
	{ "usb2", "usb-ehci,id=zbehci", "usb-storage", 0, "zbehci.0", 0 },
	{ "usb3", "qemu-xhci,id=zbxhci", "usb-storage", 0, "zbxhci.0", 0 },
};

/* One disk: a file (or host_device) node, raw on it, a throttle filter when it has limits, and
 * the guest-visible device. */
static void disk_args(struct args *a, const struct vm_disk *d, int i)
{
	static int used[ARRAY_SIZE(qemu_buses)]; /* disks so far per bus, reset at disk 0 */
	const struct qemu_bus *qb = &qemu_buses[0];
	const struct vm_throttle *t = &d->throttle;
	char node[32], fnode[32], port[32] = "", props[256] = "";
	size_t b;
	int direct;

	if (i == 0)
		memset(used, 0, sizeof(used));
	for (b = 0; b < ARRAY_SIZE(qemu_buses); b++) {
		if (!strcmp(qemu_buses[b].name, d->bus)) {
			qb = &qemu_buses[b];
			break;
		}
	}
	if (b == ARRAY_SIZE(qemu_buses))
		b = 0;
	if (qb->controller && used[b] == 0) {
		args_add(a, "-device");
		args_add(a, "%s", qb->controller);
	}
	if (qb->port && qb->per_port)
		snprintf(port, sizeof(port), "%s%d", qb->port, used[b]);
	else if (qb->port)
		snprintf(port, sizeof(port), "%s", qb->port);
	used[b]++;

	/* Passthrough devices always bypass the host cache; images where the file system
	 * allows O_DIRECT (see disk_cache_mode). Node names: f<i> file, r<i> raw, t<i> throttle. */
	direct = d->passthrough || !strcmp(disk_cache_mode(d->path), "none");
	snprintf(fnode, sizeof(fnode), "f%d", i);
	snprintf(node, sizeof(node), "r%d", i);
	args_add_json(a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:{s:b}, s:s}", "driver",
				d->passthrough ? "host_device" : "file", "filename", d->path,
				"node-name", fnode, "cache", "direct", direct, "discard",
				d->discard ? "unmap" : "ignore"));
	args_add_json(a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:s}", "driver", "raw", "node-name", node, "file",
				fnode, "discard", d->discard ? "unmap" : "ignore"));
	if (t->iops || t->bps) {
		json_t *lim = json_object();
		char id[32];

		if (t->iops)
			json_object_set_new(lim, "iops-total", json_integer((json_int_t)t->iops));
		if (t->iops_burst)
			json_object_set_new(lim, "iops-total-max",
					    json_integer((json_int_t)t->iops_burst));
		if (t->iops_burst && t->burst_length)
			json_object_set_new(lim, "iops-total-max-length",
					    json_integer((json_int_t)t->burst_length));
		if (t->bps)
			json_object_set_new(lim, "bps-total", json_integer((json_int_t)t->bps));
		if (t->bps_burst)
			json_object_set_new(lim, "bps-total-max",
					    json_integer((json_int_t)t->bps_burst));
		if (t->bps_burst && t->burst_length)
			json_object_set_new(lim, "bps-total-max-length",
					    json_integer((json_int_t)t->burst_length));
		snprintf(id, sizeof(id), "tg%d", i);
		args_add_json(a, "-object",
			      json_pack("{s:s, s:s, s:o}", "qom-type", "throttle-group", "id", id,
					"limits", lim));
		snprintf(fnode, sizeof(fnode), "t%d", i);
		args_add_json(a, "-blockdev",
			      json_pack("{s:s, s:s, s:s, s:s}", "driver", "throttle", "node-name",
					fnode, "throttle-group", id, "file", node));
		snprintf(node, sizeof(node), "%s", fnode);
	}
	if (d->logical_block_size)
		snprintf(props + strlen(props), sizeof(props) - strlen(props),
			 ",logical_block_size=%d", d->logical_block_size);
	if (d->physical_block_size)
		snprintf(props + strlen(props), sizeof(props) - strlen(props),
			 ",physical_block_size=%d", d->physical_block_size);
	if (d->rotation_rate && qb->rotation_rate)
		snprintf(props + strlen(props), sizeof(props) - strlen(props), ",rotation_rate=%d",
			 d->rotation_rate);
	if (d->write_cache >= 0)
		snprintf(props + strlen(props), sizeof(props) - strlen(props), ",write-cache=%s",
			 d->write_cache ? "on" : "off");
	args_add(a, "-device");
	args_add(a, "%s%s%s,drive=%s,serial=%s%s", qb->device, port[0] ? ",bus=" : "", port, node,
		 d->serial, props);
}

/* The cloud flavor's root disk and seed. The overlay is thrown away after the cell, so its
 * flushes go nowhere (cache.no-flush): the guest's journald and cloud-init writes cost no host
 * fsyncs. QEMU opens the overlay's backing file (the cached image, read-only) from its header. */
static void cloud_disk_args(struct args *a, const struct vm_spec *s)
{
	args_add_json(a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:{s:b, s:b}}", "driver", "file", "filename",
				s->root_disk, "node-name", "rootf", "cache", "direct", 0,
				"no-flush", 1));
	args_add_json(
	    a, "-blockdev",
	    json_pack("{s:s, s:s, s:s}", "driver", "qcow2", "node-name", "root", "file", "rootf"));
	args_add(a, "-device");
	args_add(a, "virtio-blk-pci,drive=root,serial=zb-root");
	if (!s->seed)
		return;
	args_add_json(a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:b}", "driver", "file", "filename", s->seed,
				"node-name", "seedf", "read-only", 1));
	args_add_json(a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:b}", "driver", "raw", "node-name", "seed",
				"file", "seedf", "read-only", 1));
	args_add(a, "-device");
	args_add(a, "virtio-blk-pci,drive=seed,serial=zb-seed");
}

static void build_args(const struct vm_spec *s, struct vm *vm, struct args *a)
{
	int kvm = !strcmp(s->accel, "kvm");

	args_add(a, QEMU_BINARY);
	args_add(a, "-name");
	args_add(a, "zbench");
	args_add(a, "-machine");
	args_add(a, "q35,accel=%s", kvm ? "kvm" : "tcg");
	args_add(a, "-cpu");
	args_add(a, kvm ? "host" : "max");
	args_add(a, "-smp");
	args_add(a, "%d", s->cpus);
	args_add(a, "-m");
	args_add(a, "%llu", (unsigned long long)(s->memory >> 20));
	args_add(a, "-nodefaults");
	args_add(a, "-no-user-config");
	args_add(a, "-display");
	args_add(a, "none");
	args_add(a, "-no-reboot");
	args_add(a, "-sandbox");
	args_add(a, "on");
	if (is_elf(s->kernel) && access(QBOOT_ROM, R_OK) == 0) {
		args_add(a, "-bios");
		args_add(a, QBOOT_ROM);
	}
	args_add(a, "-kernel");
	args_add(a, "%s", s->kernel);
	args_add(a, "-initrd");
	args_add(a, "%s", s->initramfs);
	args_add(a, "-append");
	args_add(a, "%s", s->cmdline);
	args_add(a, "-chardev");
	args_add(a, "file,id=con,path=%s", vm->console_path);
	args_add(a, "-serial");
	args_add(a, "chardev:con");
	args_add(a, "-device");
	args_add(a, "pvpanic");
	args_add(a, "-device");
	args_add(a, "virtio-serial-pci,id=vser");
	args_add(a, "-chardev");
	args_add(a, "socket,id=zb,path=%s/channel.sock,server=on,wait=off", vm->dir);
	args_add(a, "-device");
	args_add(a, "virtserialport,bus=vser.0,chardev=zb,name=org.zbench.0");
	args_add(a, "-qmp");
	args_add(a, "unix:%s,server=on,wait=off", vm->qmp_path);
	if (s->root_disk)
		cloud_disk_args(a, s);
	for (int i = 0; i < s->ndisks; i++)
		disk_args(a, &s->disks[i], i);
}

static int qemu_exited(struct vm *vm, int *status)
{
	if (!vm->exited) {
		pid_t r = waitpid(vm->pid, &vm->status, WNOHANG);

		if (r == vm->pid)
			vm->exited = 1;
	}
	if (vm->exited && status)
		*status = vm->status;
	return vm->exited;
}

static char *log_tail(const char *path, size_t max)
{
	char *buf = NULL;
	size_t len = 0;
	struct zb_error e;

	if (read_file(path, 1 << 20, &buf, &len, &e) < 0)
		return xstrdup("");
	if (len > max) {
		memmove(buf, buf + len - max, max);
		buf[max] = '\0';
	}
	return buf;
}

static void qemu_free(struct vm *vm)
{
	if (!vm)
		return;
	if (vm->chan >= 0)
		close(vm->chan);
	if (vm->pidfd >= 0)
		close(vm->pidfd);
	free(vm->dir);
	free(vm->console_path);
	free(vm->qmp_path);
	free(vm);
}

static void qemu_stop(struct vm *vm, double grace)
{
	double deadline = now_monotonic() + grace;
	int fd;

	if (qemu_exited(vm, NULL))
		return;
	fd = unix_connect(vm->qmp_path);
	if (fd >= 0) {
		static const char cmds[] = "{\"execute\":\"qmp_capabilities\"}\n"
					   "{\"execute\":\"quit\"}\n";

		if (write(fd, cmds, sizeof(cmds) - 1) < 0) {
			/* fall through to signals */
		}
	}
	while (!qemu_exited(vm, NULL) && now_monotonic() < deadline)
		usleep(20 * 1000);
	if (fd >= 0)
		close(fd);
	if (!qemu_exited(vm, NULL)) {
		kill(vm->pid, SIGKILL);
		while (waitpid(vm->pid, &vm->status, 0) < 0 && errno == EINTR)
			;
		vm->exited = 1;
	}
}

static int qemu_start(const struct vm_spec *s, struct vm **out, struct zb_error *err)
{
	struct vm *vm = xcalloc(1, sizeof(*vm));
	struct args a = { .n = 0 };
	char *sock, *cmdline_path, *log_path;
	FILE *f;
	double deadline;
	int logfd;

	vm->chan = -1;
	vm->pidfd = -1;
	vm->dir = xstrdup(s->dir);
	vm->console_path = xasprintf("%s/console.log", s->dir);
	vm->qmp_path = xasprintf("%s/qmp.sock", s->dir);
	sock = xasprintf("%s/channel.sock", s->dir);
	cmdline_path = xasprintf("%s/qemu.cmdline", s->dir);
	log_path = xasprintf("%s/qemu.log", s->dir);
	build_args(s, vm, &a);

	f = fopen(cmdline_path, "w");
	if (f) {
		for (int i = 0; i < a.n; i++)
			fprintf(f, "%s%s", a.v[i], i + 1 < a.n ? " \\\n  " : "\n");
		fclose(f);
	}
	logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0) {
		error_sys(err, errno, "creating '%s'", log_path);
		goto fail;
	}
	vm->pid = fork();
	if (vm->pid < 0) {
		error_sys(err, errno, "forking for qemu");
		close(logfd);
		goto fail;
	}
	if (vm->pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		/* Own process group: a Ctrl-C on the terminal reaches zbench, which stops the VM
		 * in order, instead of killing QEMU under it. */
		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		execvp(a.v[0], a.v);
		fprintf(stderr, "cannot run %s: %s\n", a.v[0], strerror(errno));
		_exit(127);
	}
	close(logfd);
	vm->pidfd = (int)syscall(SYS_pidfd_open, vm->pid, 0);

	/* QEMU creates the channel socket during start-up; connect as soon as it is there. */
	deadline = now_monotonic() + 30;
	while ((vm->chan = unix_connect(sock)) < 0) {
		if (qemu_exited(vm, NULL)) {
			char *tail = log_tail(log_path, 800);

			error_set(err, 0, "qemu exited during start-up (status %d): %s",
				  WIFEXITED(vm->status) ? WEXITSTATUS(vm->status) : -1, tail);
			free(tail);
			goto fail;
		}
		if (now_monotonic() > deadline) {
			error_set(err, ETIMEDOUT,
				  "qemu did not open its channel socket '%s' in 30 s", sock);
			qemu_stop(vm, 1);
			goto fail;
		}
		usleep(10 * 1000);
	}
	fcntl(vm->chan, F_SETFL, fcntl(vm->chan, F_GETFL) | O_NONBLOCK);
	args_free(&a);
	free(sock);
	free(cmdline_path);
	free(log_path);
	*out = vm;
	return 0;
fail:
	args_free(&a);
	free(sock);
	free(cmdline_path);
	free(log_path);
	qemu_free(vm);
	return -1;
}

static int qemu_channel_fd(struct vm *vm)
{
	return vm->chan;
}

static int qemu_exit_fd(struct vm *vm)
{
	return vm->pidfd;
}

static uint64_t qemu_console_bytes(struct vm *vm)
{
	struct stat st;

	if (stat(vm->console_path, &st) < 0)
		return 0;
	return (uint64_t)st.st_size;
}

static pid_t qemu_pid(struct vm *vm)
{
	return vm->pid;
}

const struct vm_ops vm_qemu_ops = {
	.name = "qemu",
	.start = qemu_start,
	.channel_fd = qemu_channel_fd,
	.exit_fd = qemu_exit_fd,
	.console_bytes = qemu_console_bytes,
	.exited = qemu_exited,
	.stop = qemu_stop,
	.pid = qemu_pid,
	.free = qemu_free,
};
