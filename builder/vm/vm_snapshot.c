/* Warm snapshots for the qemu backend (vm_snapshot.h).
 *
 * Making one: QEMU boots the image with no disk and VM_WARM_ROOT_PORTS empty PCIe root ports;
 * the agent says hello and is answered "park" instead of a job; once it says "parked" (zfs
 * loaded, udev settled, heartbeats off) the machine is stopped and migrated with mapped-ram to
 * <key>.snap.tmp, which QEMU writes through a descriptor zbench opened (it opens no file by
 * name), and renamed into place. Restoring: QEMU starts with the same machine, the cell's disks
 * as block nodes only, and -incoming defer; migrate-incoming reads the snapshot through a
 * descriptor; then `cont`, each disk's device hot-plugged (the same -device text the cold path
 * uses, through HMP's device_add, so both paths give the guest the same properties), and the
 * agent woken with 32 fresh random bytes and the time. */
#include "vm_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/disk_bus.h"
#include "core/util.h"
#include "guest/proto.h"
#include "qmp.h"
#include "vm_machine.h"

#define WARM_KEY_VERSION 1
#define WARM_PARK_WAIT_S 300 /* boot, zfs.ko and udev under a busy TCG host */
#define WARM_SAVE_WAIT_S 300
#define WARM_LOAD_WAIT_S 120
#define WARM_QMP_WAIT_S	 30

/* ---- which cells, and the key -------------------------------------------------------------- */

const char *vm_snapshot_cold_reason(const struct vm_spec *s, char *buf, size_t len)
{
	int pci = 0, controllers[DISK_BUS_COUNT] = { 0 };

	if (s->cold_reason)
		return s->cold_reason;
	if (!s->snapshot_dir || !s->warm_cmdline || !s->image_id)
		return "no warm snapshot was asked for";
	if (s->root_disk)
		return "the cloud flavor boots systemd from its root disk";
	for (int i = 0; i < s->ndisks; i++) {
		const struct disk_bus *b = disk_bus_find(s->disks[i].bus);
		size_t k;

		if (!b)
			b = &disk_buses[DISK_BUS_VIRTIO_BLK];
		k = (size_t)(b - disk_buses);
		/* hot-plugged on a root port: a PCI disk (no bus of its own) or a PCI controller */
		if (b->qemu.port && !b->qemu.controller) {
			snprintf(buf, len, "disk '%s' is on bus '%s', which is not hot-plugged",
				 s->disks[i].name, b->name);
			return buf;
		}
		if (b->qemu.controller && strncmp(b->qemu.controller, "virtio-", 7)) {
			snprintf(buf, len, "disk '%s' is on bus '%s', which is not hot-plugged",
				 s->disks[i].name, b->name);
			return buf;
		}
		if (b->qemu.controller ? !controllers[k]++ : 1)
			pci++;
		if (strpbrk(s->disks[i].serial, " \t\n\"'\\")) {
			snprintf(buf, len, "disk '%s': its serial cannot be hot-plugged",
				 s->disks[i].name);
			return buf;
		}
	}
	if (pci > VM_WARM_ROOT_PORTS) {
		snprintf(buf, len, "%d PCI devices, more than the warm machine's %d root ports",
			 pci, VM_WARM_ROOT_PORTS);
		return buf;
	}
	return NULL;
}

/* QEMU's version line, once. */
static const char *qemu_version(struct zb_error *err)
{
	static char *version;
	char *const argv[] = { "qemu-system-x86_64", "--version", NULL };
	char *out = NULL;

	if (version)
		return version;
	if (run_capture(argv, "/dev/null", 4096, &out, err) < 0)
		return NULL;
	out[strcspn(out, "\n")] = '\0';
	version = out;
	return version;
}

/* A file's identity: a rebuilt image is a new file (written to a temporary name and renamed). */
static char *file_identity(const char *path, struct zb_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		error_sys(err, errno, "'%s'", path);
		return NULL;
	}
	return xasprintf("%llu:%llu:%lld:%lld.%09ld", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

int vm_snapshot_key(const struct vm_spec *s, char key[65], char **material, struct zb_error *err)
{
	const char *qv = qemu_version(err);
	char *kid = NULL, *iid = NULL, *text;
	struct vm_machine m;

	if (!qv || !(kid = file_identity(s->kernel, err)) ||
	    !(iid = file_identity(s->initramfs, err))) {
		free(kid);
		return error_wrap(err, "the warm snapshot's key");
	}
	vm_machine_resolve(s, &m);
	text = xasprintf("zbench-warm %d\nimage %s\nkernel %s\ninitramfs %s\nqemu %s\n"
			 "machine q35 firmware=%s accel=%s cpu=%s\nmemory %llu\ncpus %d\n"
			 "root_ports %d\ncmdline %s\n",
			 WARM_KEY_VERSION, s->image_id, kid, iid, qv,
			 m.firmware ? m.firmware : "default", m.kvm ? "kvm" : "tcg",
			 m.kvm ? "host" : "max", (unsigned long long)s->memory, s->cpus,
			 VM_WARM_ROOT_PORTS, s->warm_cmdline);
	sha256_hex(text, strlen(text), key);
	free(kid);
	free(iid);
	if (material)
		*material = text;
	else
		free(text);
	return 0;
}

void vm_warm_release(struct vm_warm *w)
{
	for (int i = 0; i < w->nhot; i++)
		free(w->hot[i]);
	w->nhot = 0;
	if (w->snap_fd >= 0)
		close(w->snap_fd);
	w->snap_fd = -1;
}

/* ---- the guest's side of making one --------------------------------------------------------- */

struct park {
	int hello, parked;
	json_t *writable; /* the "parked" message's, checked */
	char error[512];
};

json_t *vm_snapshot_writable_check(json_t *w)
{
	const char *mod;
	json_t *names, *n;
	size_t i, total = 0;

	if (!json_is_object(w))
		return NULL;
	json_object_foreach (w, mod, names) {
		if (!json_is_array(names) || strlen(mod) > 64 ||
		    strspn(mod, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(mod))
			return NULL;
		json_array_foreach (names, i, n) {
			const char *s = json_string_value(n);

			if (!s || !*s || strlen(s) > 64 || ++total > WARM_PARAMS_MAX ||
			    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz01234567"
				      "89_") != strlen(s))
				return NULL;
		}
	}
	return json_incref(w);
}

const char *vm_snapshot_params_reason(const json_t *writable, const json_t *params, char *buf,
				      size_t len)
{
	const char *mod, *k;
	json_t *kv, *v;

	json_object_foreach ((json_t *)params, mod, kv) {
		const json_t *names = json_object_get(writable, mod);

		json_object_foreach (kv, k, v) {
			size_t i;
			json_t *n;
			int found = 0;

			json_array_foreach (names, i, n)
				found |= !strcmp(json_string_value(n), k);
			if (!found) {
				snprintf(
				    buf, len,
				    "module parameter %.64s.%.64s is read when the module loads "
				    "(not writable in the warm snapshot)",
				    mod, k);
				return buf;
			}
		}
	}
	return NULL;
}

static int park_frame(void *arg, const char *payload, size_t len)
{
	struct park *p = arg;
	json_t *m = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL);
	const char *type = json_string_value(json_object_get(m, "type"));

	if (type && !strcmp(type, "hello"))
		p->hello = 1;
	else if (type && !strcmp(type, "parked") && !p->parked) {
		p->writable = vm_snapshot_writable_check(json_object_get(m, "writable"));
		p->parked = 1;
	} else if (type && !strcmp(type, "error"))
		snprintf(p->error, sizeof(p->error), "step '%.40s': %.400s",
			 json_string_value(json_object_get(m, "step")) ?: "?",
			 json_string_value(json_object_get(m, "message")) ?: "?");
	json_decref(m);
	return 0;
}

static int send_frame(int fd, json_t *msg, struct zb_error *err)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	int flags = fcntl(fd, F_GETFL), rc;

	json_decref(msg);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	rc = text ? proto_write_frame(fd, text, strlen(text)) : -1;
	fcntl(fd, F_SETFL, flags);
	free(text);
	return rc < 0 ? error_sys(err, errno, "writing to the guest's channel") : 0;
}

/* Answer hello with "park" and wait for "parked" (the guest is untrusted: its frames are
 * bounded and only their type is read). */
static int guest_park(const struct vm_ops *ops, struct vm *vm, json_t **writable,
		      struct zb_error *err)
{
	struct proto_decoder dec;
	struct park p = { 0 };
	double deadline = now_monotonic() + WARM_PARK_WAIT_S;
	int fd = ops->channel_fd(vm), rc = 0;
	char buf[4096];

	proto_decoder_init(&dec, PROTO_MAX_PAYLOAD);
	while (!p.parked && !p.error[0] && rc == 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		if (now_monotonic() > deadline || ops->exited(vm, NULL)) {
			rc = error_set(err, ETIMEDOUT, "the guest did not park within %d s",
				       WARM_PARK_WAIT_S);
			break;
		}
		if (poll(&pfd, 1, 250) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			continue;
		if (proto_decoder_feed(&dec, buf, (size_t)n, park_frame, &p) < 0)
			rc = error_set(err, EPROTO, "the guest's channel: %s", dec.err);
		if (p.hello == 1) {
			p.hello = 2;
			rc = send_frame(fd, json_pack("{s:i, s:s}", "v", 1, "type", "park"), err);
		}
	}
	proto_decoder_release(&dec);
	if (p.error[0])
		rc = error_set(err, EIO, "the guest failed to park: %s", p.error);
	if (rc == 0 && !p.writable)
		rc = error_set(err, EPROTO, "the guest's 'parked' has no usable 'writable' list");
	if (rc == 0)
		*writable = p.writable;
	else
		json_decref(p.writable);
	return rc;
}

/* Wait for the outgoing or incoming migration to be done. */
static int migration_wait(struct qmp *q, double timeout, struct zb_error *err)
{
	double deadline = now_monotonic() + timeout;

	for (;;) {
		json_t *r = NULL;
		const char *st;
		int done;

		if (qmp_call(q, "query-migrate", NULL, &r, WARM_QMP_WAIT_S, err) < 0)
			return -1;
		st = json_string_value(json_object_get(r, "status"));
		done = st && !strcmp(st, "completed");
		if (st && (!strcmp(st, "failed") || !strcmp(st, "cancelled"))) {
			const char *why = json_string_value(json_object_get(r, "error-desc"));

			error_set(err, EIO, "migration %s: %.300s", st, why ? why : "?");
			json_decref(r);
			return -1;
		}
		json_decref(r);
		if (done)
			return 0;
		if (now_monotonic() > deadline)
			return error_set(err, ETIMEDOUT, "migration not done within %.0f s",
					 timeout);
		usleep(10 * 1000);
	}
}

static json_t *mapped_ram(void)
{
	return json_pack("{s:[{s:s, s:b}]}", "capabilities", "capability", "mapped-ram", "state",
			 1);
}

/* Boot the warm machine in `dir`, park the agent and save it to the file `tmp`; *writable is
 * the guest's list of runtime-writable module parameters. */
static int snapshot_make(const struct vm_spec *cell, const char *dir, const char *tmp,
			 json_t **writable, struct zb_error *err)
{
	struct vm_spec s = *cell;
	struct vm_warm w = { .mode = VM_WARM_SAVE };
	struct vm *vm = NULL;
	struct qmp q;
	char uri[64];
	int rc;

	s.disks = NULL;
	s.ndisks = 0;
	s.dir = dir;
	s.cmdline = cell->warm_cmdline;
	/* write-only: QEMU's fd sets match the access mode it asks for (O_WRONLY for a save) */
	w.snap_fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w.snap_fd < 0)
		return error_sys(err, errno, "creating '%s'", tmp);
	rc = vm_qemu_launch(&s, &w, &vm, err);
	vm_warm_release(&w);
	if (rc < 0)
		return -1;
	qmp_init(&q, vm_qemu_qmp_fd(vm));
	snprintf(uri, sizeof(uri), "file:/dev/fdset/%d", w.snap_set);
	rc = guest_park(&vm_qemu_ops, vm, writable, err);
	if (rc == 0)
		rc = qmp_call(&q, "stop", NULL, NULL, WARM_QMP_WAIT_S, err);
	if (rc == 0)
		rc = qmp_call(&q, "migrate-set-capabilities", mapped_ram(), NULL, WARM_QMP_WAIT_S,
			      err);
	if (rc == 0)
		rc = qmp_call(&q, "migrate", json_pack("{s:s}", "uri", uri), NULL, WARM_QMP_WAIT_S,
			      err);
	if (rc == 0)
		rc = migration_wait(&q, WARM_SAVE_WAIT_S, err);
	vm_qemu_ops.stop(vm, 5);
	vm_qemu_ops.free(vm);
	return rc;
}

/* The snapshot at `path`, made under <key>.lock if it is not there yet; *built_s > 0 if this
 * call made it. */
static int snapshot_ensure(const struct vm_spec *s, const char *key, const char *path,
			   double *built_s, double *wait_s, struct zb_error *err)
{
	char *lock = xasprintf("%s/%s.lock", s->snapshot_dir, key);
	char *tmp = xasprintf("%s/%s.snap.tmp", s->snapshot_dir, key);
	char *dir = xasprintf("%s/%s.build", s->snapshot_dir, key);
	char *params = xasprintf("%s/%s.params.json", s->snapshot_dir, key), *text = NULL;
	json_t *writable = NULL;
	double t0 = now_monotonic();
	int fd = -1, rc = -1;

	*built_s = *wait_s = 0;
	if (mkdir_p(s->snapshot_dir, 0700, err) < 0)
		goto out;
	fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		error_sys(err, errno, "locking '%s'", lock);
		goto out;
	}
	if (path_exists(path)) {
		*wait_s = now_monotonic() - t0; /* another process may have been making it */
		rc = 0;
		goto out;
	}
	if (mkdir_p(dir, 0700, err) < 0)
		goto out;
	if (snapshot_make(s, dir, tmp, &writable, err) < 0) {
		error_wrap(err, "making the warm snapshot (its console: '%s/console.log')", dir);
		unlink(tmp);
		goto out;
	}
	text = json_dumps(writable, JSON_COMPACT | JSON_SORT_KEYS);
	/* the list first: a .snap never exists without it */
	if (!text || write_file_atomic(params, text, strlen(text), 0600, err) < 0)
		goto out;
	if (rename(tmp, path) < 0) {
		error_sys(err, errno, "renaming '%s'", tmp);
		goto out;
	}
	*built_s = *wait_s = now_monotonic() - t0;
	rc = 0;
out:
	if (fd >= 0)
		close(fd); /* drops the lock */
	json_decref(writable);
	free(text);
	free(params);
	free(lock);
	free(tmp);
	free(dir);
	return rc;
}

/* ---- a cell from it ------------------------------------------------------------------------ */

/* The snapshot's list of writable module parameters (written beside it by snapshot_ensure()). */
static int writable_load(const struct vm_spec *s, const char *key, json_t **out,
			 struct zb_error *err)
{
	char *path = xasprintf("%s/%s.params.json", s->snapshot_dir, key), *buf = NULL;
	size_t len = 0;
	json_t *j = NULL;

	if (read_file(path, 1 << 20, &buf, &len, err) == 0)
		j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	*out = vm_snapshot_writable_check(j);
	json_decref(j);
	free(buf);
	if (!*out) {
		error_set(err, EINVAL, "'%s': not a list of writable module parameters", path);
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

/* Load the snapshot into the just-started QEMU, run it, hot-plug the disks, wake the agent. */
static int restore_run(struct vm *vm, struct vm_warm *w, struct zb_error *err)
{
	struct vm_boot *b = vm_qemu_boot(vm);
	double t0 = now_monotonic();
	unsigned char seed[32];
	char uri[64], hex[65];
	struct qmp q;

	qmp_init(&q, vm_qemu_qmp_fd(vm));
	snprintf(uri, sizeof(uri), "file:/dev/fdset/%d", w->snap_set);
	if (qmp_call(&q, "migrate-set-capabilities", mapped_ram(), NULL, WARM_QMP_WAIT_S, err) <
		0 ||
	    qmp_call(&q, "migrate-incoming", json_pack("{s:s}", "uri", uri), NULL, WARM_QMP_WAIT_S,
		     err) < 0 ||
	    migration_wait(&q, WARM_LOAD_WAIT_S, err) < 0 ||
	    qmp_call(&q, "cont", NULL, NULL, WARM_QMP_WAIT_S, err) < 0)
		return error_wrap(err, "restoring the warm snapshot");
	b->restore_s += now_monotonic() - t0;
	t0 = now_monotonic();
	for (int i = 0; i < w->nhot; i++) {
		char *line = xasprintf("device_add %s", w->hot[i]);
		int rc = qmp_hmp(&q, line, WARM_QMP_WAIT_S, err);

		free(line);
		if (rc < 0)
			return error_wrap(err, "hot-plugging a disk");
	}
	if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		return error_sys(err, errno, "getrandom");
	for (size_t i = 0; i < sizeof(seed); i++)
		snprintf(hex + 2 * i, 3, "%02x", seed[i]);
	if (send_frame(vm_qemu_ops.channel_fd(vm),
		       json_pack("{s:i, s:s, s:s, s:f}", "v", 1, "type", "wake", "seed", hex,
				 "time", now_wall()),
		       err) < 0)
		return error_wrap(err, "waking the restored guest");
	b->hotplug_s = now_monotonic() - t0;
	return 0;
}

static int cold_start(const struct vm_spec *s, const char *reason, struct vm **out,
		      struct zb_error *err)
{
	if (vm_qemu_launch(s, NULL, out, err) < 0)
		return -1;
	snprintf(vm_qemu_boot(*out)->reason, sizeof(vm_qemu_boot(*out)->reason), "%s", reason);
	return 0;
}

int vm_snapshot_start(const struct vm_spec *s, struct vm **out, struct zb_error *err)
{
	struct vm_warm w = { .mode = VM_WARM_RESTORE, .snap_fd = -1 };
	char buf[256], key[65], *path;
	const char *reason = vm_snapshot_cold_reason(s, buf, sizeof(buf));
	double built_s, wait_s, t0;
	struct vm *vm = NULL;
	int rc;

	if (reason)
		return cold_start(s, reason, out, err);
	if (vm_snapshot_key(s, key, NULL, err) < 0)
		return -1;
	path = xasprintf("%s/%s.snap", s->snapshot_dir, key);
	rc = snapshot_ensure(s, key, path, &built_s, &wait_s, err);
	if (rc == 0 && json_object_size(s->module_params)) {
		json_t *writable = NULL;

		rc = writable_load(s, key, &writable, err);
		reason =
		    rc ? NULL
		       : vm_snapshot_params_reason(writable, s->module_params, buf, sizeof(buf));
		json_decref(writable);
		if (reason) {
			free(path);
			rc = cold_start(s, reason, out, err);
			if (rc == 0) {
				vm_qemu_boot(*out)->build_s = built_s;
				vm_qemu_boot(*out)->wait_s = wait_s;
			}
			return rc;
		}
	}
	t0 = now_monotonic();
	if (rc == 0) {
		w.snap_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (w.snap_fd < 0)
			rc = error_sys(err, errno, "opening '%s'", path);
	}
	free(path);
	if (rc == 0) {
		struct vm_spec r = *s;

		r.cmdline = s->warm_cmdline; /* what the restored guest booted with */
		rc = vm_qemu_launch(&r, &w, &vm, err);
	}
	if (rc == 0) {
		vm_qemu_boot(vm)->restore_s = now_monotonic() - t0;
		rc = restore_run(vm, &w, err);
	}
	vm_warm_release(&w);
	if (rc < 0) {
		if (vm) {
			vm_qemu_ops.stop(vm, 1);
			vm_qemu_ops.free(vm);
		}
		return -1;
	}
	vm_qemu_boot(vm)->path = "restored";
	vm_qemu_boot(vm)->build_s = built_s;
	vm_qemu_boot(vm)->wait_s = wait_s;
	*out = vm;
	return 0;
}
