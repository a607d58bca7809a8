/* The qemu backend's command line (builder/vm/vm_qemu_int.h): every argument and every
 * descriptor QEMU inherits, for a cell or a warm machine. vm_qemu.c starts the process; the
 * rules it follows (nothing opened by name, every value quoted) are at the top of vm_qemu.c. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/disk_bus.h"
#include "core/util.h"
#include "vm.h"
#include "vm_machine.h"
#include "vm_qemu_int.h"
#include "vm_snapshot.h"

const char vm_qemu_sandbox[] = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,"
			       "resourcecontrol=deny";

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
	a->n = 0; /* launch_release() may run twice: after the fork, then on a failed start */
	a->v[0] = NULL;
}

char *vm_qemu_opt_quote(const char *value)
{
	size_t n = 0;
	char *out, *o;

	for (const char *c = value; *c; c++)
		n += *c == ',' ? 2 : 1;
	out = o = xmalloc(n + 1);
	for (const char *c = value; *c; c++) {
		*o++ = *c;
		if (*c == ',')
			*o++ = ',';
	}
	*o = '\0';
	return out;
}

/* Whether the user QEMU runs as may read a file with these attributes (by its mode: QEMU opens
 * it again through /proc/self/fd, where the directories above it do not matter). */
static int user_can_read(const struct vm_qemu_user *u, const struct stat *st)
{
	if (!u->drop || st->st_mode & S_IROTH)
		return 1;
	if (st->st_uid == u->uid)
		return (st->st_mode & S_IRUSR) != 0;
	for (int i = 0; i < u->ngroups; i++) {
		if (u->groups[i] == st->st_gid)
			return (st->st_mode & S_IRGRP) != 0;
	}
	return 0;
}

/* ---- descriptors QEMU inherits ------------------------------------------------------------- */

/* Keep `fd` (close-on-exec, owned by the launch) for QEMU; returns it, or -1 (closed) when
 * there are too many. */
static int launch_keep(struct launch *l, int fd)
{
	if (fd >= 0 && fd < 3) { /* never one of QEMU's stdio */
		int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		fd = moved;
	}
	if (fd < 0 || l->nkeep == QEMU_MAX_FDS) {
		if (fd >= 0)
			close(fd);
		errno = EMFILE;
		return -1;
	}
	l->keep[l->nkeep++] = fd;
	return fd;
}

void launch_release(struct launch *l)
{
	for (int i = 0; i < l->nkeep; i++)
		close(l->keep[i]);
	l->nkeep = 0;
	args_free(&l->a);
}

/* Hand `fd` to QEMU as a one-descriptor fd set, `what` (a path) recorded as its opaque string;
 * returns the set's number (the file is /dev/fdset/N to QEMU), or -1. */
static int pass_fd(struct launch *l, int fd, const char *what, struct zb_error *err)
{
	char *q = vm_qemu_opt_quote(what);

	if (launch_keep(l, fd) < 0) {
		free(q);
		return error_sys(err, errno, "passing '%s' to qemu", what);
	}
	args_add(&l->a, "-add-fd");
	args_add(&l->a, "fd=%d,set=%d,opaque=%s", l->keep[l->nkeep - 1], ++l->nsets, q);
	free(q);
	return l->nsets;
}

/* Open `path` here with `flags` and hand it over (pass_fd()). */
static int pass_path(struct launch *l, const char *path, int flags, struct zb_error *err)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return error_sys(err, errno, "opening '%s' for qemu", path);
	return pass_fd(l, fd, path, err);
}

/* A file QEMU reads by name (-kernel, -initrd): "/proc/self/fd/N" into arg, N our descriptor of
 * it, or of a copy in memory when its mode does not let QEMU's user read it. */
static int pass_readable(struct launch *l, const char *path, char *arg, size_t len,
			 struct zb_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), copy;
	struct stat st;
	off_t off = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		error_sys(err, errno, "opening '%s' for qemu", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!user_can_read(l->user, &st)) {
		copy = memfd_create("zbench-qemu-file", MFD_CLOEXEC);
		while (copy >= 0 && off < st.st_size) {
			if (sendfile(copy, fd, &off, (size_t)(st.st_size - off)) <= 0) {
				close(copy);
				copy = -1;
			}
		}
		close(fd);
		if (copy < 0)
			return error_sys(err, errno, "copying '%s' for qemu", path);
		fd = copy;
	}
	if (launch_keep(l, fd) < 0)
		return error_sys(err, errno, "passing '%s' to qemu", path);
	snprintf(arg, len, "/proc/self/fd/%d", fd);
	return 0;
}

/* A socketpair: one end kept for QEMU (its number into *theirs), the other ours. */
static int pass_socket(struct launch *l, int *ours, int *theirs, struct zb_error *err)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return error_sys(err, errno, "socketpair for qemu");
	*ours = sv[0];
	*theirs = launch_keep(l, sv[1]);
	if (*theirs < 0)
		return error_sys(err, errno, "passing a socket to qemu");
	return 0;
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

/* A -device of a disk; in a restored warm machine it is hot-plugged instead (kept in
 * warm->hot), a PCI device (`pci`: it names no bus of its own) on the next free root port. */
static void device_line(struct launch *l, int pci, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void device_line(struct launch *l, int pci, const char *fmt, ...)
{
	struct vm_warm *w = l->warm;
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	if (!w || w->mode != VM_WARM_RESTORE) {
		args_add(&l->a, "-device");
		args_add(&l->a, "%s", s);
		free(s);
		return;
	}
	if (w->nhot == VM_WARM_MAX_DEVICES)
		abort(); /* vm_snapshot_cold_reason() counted them */
	if (pci) {
		char *t = xasprintf("%s,bus=zbrp%d", s, w->nports++);

		free(s);
		s = t;
	}
	w->hot[w->nhot++] = s;
}

/* The disk's controller (a -device before the bus's first disk: disk_bus.h's qemu.controller)
 * and its bus= into port. The q35 machine's built-in AHCI (ide.0..ide.5) needs no controller. */
static void disk_port(struct launch *l, const struct disk_bus *b, int i, char *port, size_t len)
{
	static int used[DISK_BUS_COUNT]; /* disks so far per bus, reset at disk 0 */
	size_t k = (size_t)(b - disk_buses);

	if (i == 0)
		memset(used, 0, sizeof(used));
	if (b->qemu.controller && used[k] == 0)
		device_line(l, 1, "%s", b->qemu.controller);
	port[0] = '\0';
	if (b->qemu.port && b->qemu.per_port)
		snprintf(port, len, "%s%d", b->qemu.port, used[k]);
	else if (b->qemu.port)
		snprintf(port, len, "%s", b->qemu.port);
	used[k]++;
}

json_t *vm_qemu_throttle_limits(const struct vm_throttle *t)
{
	json_t *lim = json_object();

	if (!t) { /* every limit the disks use, zero: a qom-set changes only what it names */
		static const char *const keys[] = { "iops-total", "iops-total-max", "bps-total",
						    "bps-total-max" };

		for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
			json_object_set_new(lim, keys[k], json_integer(0));
		json_object_set_new(lim, "iops-total-max-length", json_integer(1));
		json_object_set_new(lim, "bps-total-max-length", json_integer(1));
		return lim;
	}
	if (t->iops)
		json_object_set_new(lim, "iops-total", json_integer((json_int_t)t->iops));
	if (t->iops_burst)
		json_object_set_new(lim, "iops-total-max", json_integer((json_int_t)t->iops_burst));
	if (t->iops_burst && t->burst_length)
		json_object_set_new(lim, "iops-total-max-length",
				    json_integer((json_int_t)t->burst_length));
	if (t->bps)
		json_object_set_new(lim, "bps-total", json_integer((json_int_t)t->bps));
	if (t->bps_burst)
		json_object_set_new(lim, "bps-total-max", json_integer((json_int_t)t->bps_burst));
	if (t->bps_burst && t->burst_length)
		json_object_set_new(lim, "bps-total-max-length",
				    json_integer((json_int_t)t->burst_length));
	return lim;
}

/* A throttle-group tg<i> with the disk's limits and a throttle node t<i> on node `below`, which
 * becomes t<i>. */
static void throttle_args(struct args *a, const struct vm_throttle *t, int i, char *below,
			  size_t len)
{
	json_t *lim = vm_qemu_throttle_limits(t);
	char id[32], tnode[32];

	snprintf(id, sizeof(id), "tg%d", i);
	snprintf(tnode, sizeof(tnode), "t%d", i);
	args_add_json(
	    a, "-object",
	    json_pack("{s:s, s:s, s:o}", "qom-type", "throttle-group", "id", id, "limits", lim));
	args_add_json(a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:s}", "driver", "throttle", "node-name", tnode,
				"throttle-group", id, "file", below));
	snprintf(below, len, "%s", tnode);
}

/* The disk's geometry, rotation rate (where the bus carries one) and write cache as -device
 * properties (",k=v..."). */
static void device_props(const struct vm_disk *d, const struct disk_bus *b, char *props, size_t len)
{
	size_t n = 0;

	props[0] = '\0';
	if (d->logical_block_size)
		n += (size_t)snprintf(props + n, len - n, ",logical_block_size=%d",
				      d->logical_block_size);
	if (d->physical_block_size && n < len)
		n += (size_t)snprintf(props + n, len - n, ",physical_block_size=%d",
				      d->physical_block_size);
	if (d->rotation_rate && b->rotation_rate && n < len)
		n += (size_t)snprintf(props + n, len - n, ",rotation_rate=%d", d->rotation_rate);
	if (d->write_cache >= 0 && n < len)
		snprintf(props + n, len - n, ",write-cache=%s", d->write_cache ? "on" : "off");
}

/* The protocol node f<i> of a modelled disk: an NBD client on the connection to its model's
 * server (disk_server.h), inherited by QEMU as a plain descriptor (a socket address of type
 * fd: QEMU reads the number while it parses its command line, before any monitor exists). */
static int disk_nbd_node(struct launch *l, const struct vm_disk *d, const char *fnode,
			 struct zb_error *err)
{
	int fd = launch_keep(l, fcntl(d->nbd_fd, F_DUPFD_CLOEXEC, 3));
	char num[16];

	if (fd < 0)
		return error_sys(err, errno, "disk '%s': passing its model's connection to qemu",
				 d->name);
	snprintf(num, sizeof(num), "%d", fd);
	args_add_json(&l->a, "-blockdev",
		      json_pack("{s:s, s:s, s:{s:s, s:s}, s:s}", "driver", "nbd", "node-name", fnode,
				"server", "type", "fd", "str", num, "discard",
				d->discard ? "unmap" : "ignore"));
	return 0;
}

/* The protocol node f<i> of a disk that is its file (or host device), handed over open. */
static int disk_file_node(struct launch *l, const struct vm_disk *d, const char *fnode,
			  struct zb_error *err)
{
	char dev[32];
	int direct, fd, set;

	fd = vm_disk_open(d, O_RDWR, &direct);
	if (fd < 0)
		return error_sys(err, errno, "disk '%s': opening '%s' for qemu", d->name, d->path);
	set = pass_fd(l, fd, d->path, err);
	if (set < 0)
		return -1;
	snprintf(dev, sizeof(dev), "/dev/fdset/%d", set);
	args_add_json(&l->a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:{s:b}, s:s}", "driver",
				d->passthrough ? "host_device" : "file", "filename", dev,
				"node-name", fnode, "cache", "direct", direct, "discard",
				d->discard ? "unmap" : "ignore"));
	return 0;
}

/* One disk: a file (or host_device, or for a modelled disk NBD) node, raw on it, a throttle
 * filter when it has limits (on a modelled disk, a cap on top of its model), and the
 * guest-visible device. Node names: f<i> file, r<i> raw, t<i> throttle. */
static int disk_args(struct launch *l, const struct vm_disk *d, int i, struct zb_error *err)
{
	const struct disk_bus *b = disk_bus_find(d->bus);
	struct args *a = &l->a;
	char node[32], fnode[32], port[32], props[256], *serial;

	if (!b)
		b = &disk_buses[DISK_BUS_VIRTIO_BLK];
	disk_port(l, b, i, port, sizeof(port));
	snprintf(fnode, sizeof(fnode), "f%d", i);
	snprintf(node, sizeof(node), "r%d", i);
	if ((d->nbd_fd > 2 ? disk_nbd_node(l, d, fnode, err) : disk_file_node(l, d, fnode, err)) <
	    0)
		return -1;
	args_add_json(a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:s}", "driver", "raw", "node-name", node, "file",
				fnode, "discard", d->discard ? "unmap" : "ignore"));
	if (d->throttle.iops || d->throttle.bps)
		throttle_args(a, &d->throttle, i, node, sizeof(node));
	device_props(d, b, props, sizeof(props));
	serial = vm_qemu_opt_quote(d->serial);
	device_line(l, !port[0], "%s%s%s,drive=%s,serial=%s%s", b->qemu.device,
		    port[0] ? ",bus=" : "", port, node, serial, props);
	free(serial);
	return 0;
}

/* One file of the cloud root's backing chain, handed to QEMU: a `file` node f<name> and a format
 * node <name> on it, backed by node `backing` (NULL: none). The top (read-write) is the cell's
 * overlay, thrown away after the cell, so its flushes go nowhere (cache.no-flush): the guest's
 * journald and cloud-init writes cost no host fsyncs. */
static int chain_node(struct launch *l, const char *file, const char *format, const char *name,
		      const char *backing, int top, struct zb_error *err)
{
	int set = pass_path(l, file, top ? O_RDWR | O_NOFOLLOW : O_RDONLY, err);
	char dev[32], fnode[40];
	json_t *fmt;

	if (set < 0)
		return -1;
	snprintf(dev, sizeof(dev), "/dev/fdset/%d", set);
	snprintf(fnode, sizeof(fnode), "%sf", name);
	if (top)
		args_add_json(&l->a, "-blockdev",
			      json_pack("{s:s, s:s, s:s, s:{s:b, s:b}}", "driver", "file",
					"filename", dev, "node-name", fnode, "cache", "direct", 0,
					"no-flush", 1));
	else
		args_add_json(&l->a, "-blockdev",
			      json_pack("{s:s, s:s, s:s, s:b}", "driver", "file", "filename", dev,
					"node-name", fnode, "read-only", 1));
	fmt = json_pack("{s:s, s:s, s:s, s:b}", "driver", format, "node-name", name, "file", fnode,
			"read-only", !top);
	if (!strcmp(format, "qcow2"))
		json_object_set_new(fmt, "backing", backing ? json_string(backing) : json_null());
	args_add_json(&l->a, "-blockdev", fmt);
	return 0;
}

/* The cloud flavor's root disk: the cell's qcow2 overlay and every file under it (the cached
 * image, itself maybe an overlay of an imported file), as `qemu-img info --backing-chain` finds
 * them, each opened here and named in the graph, so that QEMU opens no backing file by name. */
static int cloud_root_args(struct launch *l, const char *overlay, struct zb_error *err)
{
	char *const argv[] = { "qemu-img", "info", "--backing-chain", "--output=json",
			       "-U",	   "--",   (char *)overlay,   NULL };
	char *out = NULL, name[32], below[32] = "";
	json_t *chain;
	int rc = 0;

	if (run_capture(argv, "/dev/null", 1 << 20, &out, err) < 0)
		return error_wrap(err, "the backing chain of '%s'", overlay);
	chain = json_loads(out, 0, NULL);
	free(out);
	if (!json_is_array(chain) || !json_array_size(chain) ||
	    json_array_size(chain) > QEMU_CHAIN_MAX) {
		json_decref(chain);
		return error_set(err, EINVAL, "'%s': qemu-img info gave no usable backing chain",
				 overlay);
	}
	/* bottom first: a node's backing must exist before it */
	for (size_t k = json_array_size(chain); k-- > 0 && rc == 0;) {
		json_t *e = json_array_get(chain, k);
		const char *file = json_string_value(json_object_get(e, "filename"));
		const char *format = json_string_value(json_object_get(e, "format"));

		if (!file || !format || !strncmp(file, "json:", 5) ||
		    (strcmp(format, "qcow2") && strcmp(format, "raw"))) {
			rc = error_set(err, EINVAL,
				       "'%s': backing chain entry %zu is not a qcow2 or raw file",
				       overlay, k);
			break;
		}
		snprintf(name, sizeof(name), k ? "rootb%zu" : "root", k);
		rc = chain_node(l, file, format, name, below[0] ? below : NULL, k == 0, err);
		snprintf(below, sizeof(below), "%s", name);
	}
	json_decref(chain);
	return rc;
}

/* The cloud flavor's root disk and its NoCloud seed (docs/images.md). */
static int cloud_disk_args(struct launch *l, const struct vm_spec *s, struct zb_error *err)
{
	int set;
	char dev[32];

	if (cloud_root_args(l, s->root_disk, err) < 0)
		return -1;
	args_add(&l->a, "-device");
	args_add(&l->a, "virtio-blk-pci,drive=root,serial=zb-root");
	if (!s->seed)
		return 0;
	set = pass_path(l, s->seed, O_RDONLY | O_NOFOLLOW, err);
	if (set < 0)
		return -1;
	snprintf(dev, sizeof(dev), "/dev/fdset/%d", set);
	args_add_json(&l->a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:b}", "driver", "file", "filename", dev,
				"node-name", "seedf", "read-only", 1));
	args_add_json(&l->a, "-blockdev",
		      json_pack("{s:s, s:s, s:s, s:b}", "driver", "raw", "node-name", "seed",
				"file", "seedf", "read-only", 1));
	args_add(&l->a, "-device");
	args_add(&l->a, "virtio-blk-pci,drive=seed,serial=zb-seed");
	return 0;
}

/* The machine: everything but the disks. */
static int machine_args(struct launch *l, const struct vm_spec *s, const char *console,
			struct zb_error *err)
{
	struct args *a = &l->a;
	struct vm_machine m;
	int con, chan, qmp;
	char kernel[32], initrd[32];

	vm_machine_resolve(s, &m);

	if (pass_readable(l, s->kernel, kernel, sizeof(kernel), err) < 0 ||
	    pass_readable(l, s->initramfs, initrd, sizeof(initrd), err) < 0)
		return -1;
	con = pass_path(l, console, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, err);
	if (con < 0 || pass_socket(l, &l->chan, &chan, err) < 0 ||
	    pass_socket(l, &l->qmp, &qmp, err) < 0)
		return -1;
	args_add(a, "-name");
	args_add(a, "zbench");
	args_add(a, "-machine");
	args_add(a, "q35,accel=%s", m.kvm ? "kvm" : "tcg");
	args_add(a, "-cpu");
	args_add(a, m.kvm ? "host" : "max");
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
	args_add(a, "%s", vm_qemu_sandbox);
	if (m.firmware) {
		args_add(a, "-bios");
		args_add(a, "%s", m.firmware);
	}
	args_add(a, "-kernel");
	args_add(a, "%s", kernel);
	args_add(a, "-initrd");
	args_add(a, "%s", initrd);
	args_add(a, "-append");
	args_add(a, "%s", s->cmdline); /* one raw value: QEMU splits nothing in it */
	args_add(a, "-chardev");
	args_add(a, "file,id=con,path=/dev/fdset/%d", con);
	args_add(a, "-serial");
	args_add(a, "chardev:con");
	args_add(a, "-device");
	args_add(a, "pvpanic");
	args_add(a, "-device");
	args_add(a, "virtio-serial-pci,id=vser");
	args_add(a, "-chardev");
	args_add(a, "socket,id=zb,fd=%d", chan);
	args_add(a, "-device");
	args_add(a, "virtserialport,bus=vser.0,chardev=zb,name=" VM_CHANNEL_NAME);
	args_add(a, "-chardev");
	args_add(a, "socket,id=qmp,fd=%d", qmp);
	args_add(a, "-mon");
	args_add(a, "chardev=qmp,mode=control");
	return 0;
}

/* A warm machine's additions: the root ports its disks are hot-plugged on (the same in the
 * saved and the restored machine: migration wants the same devices), the snapshot file as a
 * descriptor, and for a restore, QEMU waiting for its incoming migration. */
static int warm_args(struct launch *l, struct zb_error *err)
{
	struct vm_warm *w = l->warm;
	int fd = w->snap_fd;

	for (int i = 0; i < VM_WARM_ROOT_PORTS; i++) {
		args_add(&l->a, "-device");
		args_add(&l->a, "pcie-root-port,id=zbrp%d,chassis=%d", i, i + 1);
	}
	w->snap_fd = -1; /* the launch owns it now */
	w->snap_set = pass_fd(l, fd, "warm-snapshot", err);
	if (w->snap_set < 0)
		return -1;
	if (w->mode == VM_WARM_RESTORE) {
		args_add(&l->a, "-incoming");
		args_add(&l->a, "defer");
	}
	return 0;
}

/* Open every file, make the sockets and write the command line for `s`. */
int launch_build(struct launch *l, const struct vm_spec *s, const char *console,
		 struct zb_error *err)
{
	args_add(&l->a, QEMU_BINARY);
	if (machine_args(l, s, console, err) < 0)
		return -1;
	if (l->warm && warm_args(l, err) < 0)
		return -1;
	if (s->root_disk && cloud_disk_args(l, s, err) < 0)
		return -1;
	for (int i = 0; i < s->ndisks; i++) {
		if (disk_args(l, &s->disks[i], i, err) < 0)
			return -1;
	}
	return 0;
}

int vm_qemu_cmdline(const struct vm_spec *s, const struct vm_qemu_user *user, char ***argv,
		    struct zb_error *err)
{
	return vm_qemu_cmdline_warm(s, user, NULL, argv, err);
}

int vm_qemu_cmdline_warm(const struct vm_spec *s, const struct vm_qemu_user *user,
			 struct vm_warm *warm, char ***argv, struct zb_error *err)
{
	struct launch l = { .chan = -1, .qmp = -1, .user = user, .warm = warm };
	char *console = xasprintf("%s/console.log", s->dir);
	int rc = launch_build(&l, s, console, err);

	free(console);
	if (l.chan >= 0)
		close(l.chan);
	if (l.qmp >= 0)
		close(l.qmp);
	*argv = NULL;
	if (rc == 0) {
		*argv = xcalloc((size_t)l.a.n + 1, sizeof(**argv));
		for (int i = 0; i < l.a.n; i++)
			(*argv)[i] = xstrdup(l.a.v[i]);
	}
	launch_release(&l);
	return rc;
}
