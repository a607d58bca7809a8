/* The direct QEMU backend: one qemu-system-x86_64 process per cell.
 *
 * q35 with qboot and direct kernel boot (the appliance's uncompressed vmlinux boots through PVH,
 * which skips the 5-13 s of kernel decompression TCG would spend), no network device, no
 * default devices, the serial console into the cell's console.log, the virtio-serial port
 * org.zbench.0 and QMP (for a polite quit) on socketpairs. The exact command line is kept in the
 * cell directory (qemu.cmdline).
 *
 * QEMU runs what the guest does, so it gets as little as possible (docs/security.md): never root
 * (when zbench is root, the system user zbench-qemu, set before exec: QEMU's own -run-with user=
 * would call setuid() under its seccomp filter, which elevateprivileges=deny kills), the seccomp
 * sandbox with every deny, no descriptor of zbench's but the ones it is given, and no file to
 * open by name: zbench opens every file QEMU uses (the kernel, the initramfs, console.log, the
 * disks, the cloud flavor's backing chain) and hands over descriptors (-add-fd, /dev/fdset/N;
 * /proc/self/fd/N for -kernel and -initrd), so QEMU needs no access to the run directory or the
 * image cache, and a passthrough device is the very one passthrough.c checked and holds. Values
 * that reach QEMU's key=value syntax go through vm_qemu_opt_quote().
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pwd.h>
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
#include "qmp.h"
#include "vm.h"
#include "vm_machine.h"
#include "vm_qemu_int.h"
#include "vm_snapshot.h"

struct vm {
	pid_t pid;
	int pidfd;
	int chan; /* our end of the channel's socketpair */
	int qmp;  /* our end of QMP's socketpair, capabilities negotiated */
	int exited;
	int status;
	char *dir;
	char *console_path;
	struct vm_boot boot;
};

/* Once capabilities are negotiated QEMU sends QMP events (at most a few a second: QEMU throttles
 * the ones a guest can cause); nobody reads them, so they are dropped here, as the runner polls,
 * rather than queued in QEMU's memory. */
static void qmp_drain(struct vm *vm)
{
	char buf[4096];

	while (vm->qmp >= 0 && recv(vm->qmp, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static int qemu_exited(struct vm *vm, int *status)
{
	qmp_drain(vm);
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
	if (vm->qmp >= 0)
		close(vm->qmp);
	if (vm->pidfd >= 0)
		close(vm->pidfd);
	free(vm->dir);
	free(vm->console_path);
	free(vm);
}

static void qemu_stop(struct vm *vm, double grace)
{
	static const char quit[] = "{\"execute\":\"quit\"}\n";
	double deadline = now_monotonic() + grace;

	if (qemu_exited(vm, NULL))
		return;
	if (vm->qmp >= 0 &&
	    send(vm->qmp, quit, sizeof(quit) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* fall through to signals */
	}
	while (!qemu_exited(vm, NULL) && now_monotonic() < deadline)
		usleep(20 * 1000);
	if (!qemu_exited(vm, NULL)) {
		kill(vm->pid, SIGKILL);
		while (waitpid(vm->pid, &vm->status, 0) < 0 && errno == EINTR)
			;
		vm->exited = 1;
	}
}

/* In the child, between fork() and exec: QEMU gets the launch's descriptors and nothing else of
 * zbench's, its own process group (a Ctrl-C on the terminal reaches zbench, which stops the VM
 * in order), the user of vm_qemu_user() with no way back, and a minimal environment. */
static void child_exec(const struct launch *l, int logfd)
{
	static char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", NULL };
	const struct vm_qemu_user *u = l->user;
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	setpgid(0, 0);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
		_exit(127);
	syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
	for (int i = 0; i < l->nkeep; i++) {
		if (fcntl(l->keep[i], F_SETFD, 0) < 0)
			_exit(127);
	}
	if (u->drop && (setgroups((size_t)u->ngroups, u->groups) < 0 || setgid(u->gid) < 0 ||
			setuid(u->uid) < 0 || setuid(0) == 0)) {
		fprintf(stderr, "zbench: cannot switch to user '%s': %s\n", u->name,
			strerror(errno));
		_exit(127);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || chdir("/") < 0)
		_exit(127);
	if (u->drop)
		execvpe(l->a.v[0], l->a.v, env);
	else
		execvp(l->a.v[0], l->a.v);
	fprintf(stderr, "cannot run %s: %s\n", l->a.v[0], strerror(errno));
	_exit(127);
}

/* Whether QMP's answer to the "zb-ready" query is among the complete lines of buf (consumed). */
static int qmp_ready(char *buf, size_t *len, struct zb_error *err)
{
	char *nl;
	int ready = 0;

	while (!ready && (nl = memchr(buf, '\n', *len))) {
		json_t *m = json_loadb(buf, (size_t)(nl - buf), 0, NULL);
		const char *id = json_string_value(json_object_get(m, "id"));

		if (id && !strcmp(id, "zb-ready"))
			ready = json_object_get(m, "return") ? 1 : -1;
		json_decref(m);
		*len -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, *len);
	}
	if (ready < 0)
		return error_set(err, EPROTO, "qemu refused a QMP query");
	return ready;
}

/* Wait until QEMU has started up (its main loop answers QMP, so the machine, its disks and
 * its kernel are set up), has exited, or QEMU_START_WAIT_S have passed. */
static int qemu_wait_ready(struct vm *vm, const char *log_path, struct zb_error *err)
{
	static const char hello[] = "{\"execute\":\"qmp_capabilities\"}\n"
				    "{\"execute\":\"query-status\",\"id\":\"zb-ready\"}\n";
	double deadline = now_monotonic() + QEMU_START_WAIT_S;
	char buf[8192];
	size_t len = 0;
	int ready = 0, gone = send(vm->qmp, hello, sizeof(hello) - 1, MSG_NOSIGNAL) < 0;

	while (!ready && !gone) {
		struct pollfd p = { vm->qmp, POLLIN, 0 };
		ssize_t n;

		if (now_monotonic() > deadline) {
			qemu_stop(vm, 1);
			return error_set(err, ETIMEDOUT, "qemu did not start up in %d s",
					 QEMU_START_WAIT_S);
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(vm->qmp, buf + len, sizeof(buf) - 1 - len, MSG_DONTWAIT);
		if (n <= 0) {
			gone = !(n < 0 && (errno == EAGAIN || errno == EINTR));
			continue;
		}
		len += (size_t)n;
		ready = qmp_ready(buf, &len, err);
		if (len == sizeof(buf) - 1)
			len = 0; /* no line that long is the answer */
	}
	if (ready > 0)
		return 0;
	/* QEMU closed QMP (or refused the query): it is on its way out */
	for (int i = 0; i < 100 && !qemu_exited(vm, NULL); i++)
		usleep(20 * 1000);
	if (qemu_exited(vm, NULL)) {
		char *tail = log_tail(log_path, 800);

		error_set(err, 0, "qemu exited during start-up (status %d): %s",
			  WIFEXITED(vm->status) ? WEXITSTATUS(vm->status) : -1, tail);
		free(tail);
		return -1;
	}
	qemu_stop(vm, 1);
	return ready < 0 ? -1 : error_set(err, EPROTO, "qemu closed QMP during start-up");
}

static void write_cmdline(const struct args *a, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	for (int i = 0; i < a->n; i++)
		fprintf(f, "%s%s", a->v[i], i + 1 < a->n ? " \\\n  " : "\n");
	fclose(f);
}

int vm_qemu_launch(const struct vm_spec *s, struct vm_warm *warm, struct vm **out,
		   struct zb_error *err)
{
	static struct vm_qemu_user user;
	static int have_user;
	struct vm *vm = xcalloc(1, sizeof(*vm));
	struct launch l = { .chan = -1, .qmp = -1, .user = &user, .warm = warm };
	char *cmdline_path = xasprintf("%s/qemu.cmdline", s->dir);
	char *log_path = xasprintf("%s/qemu.log", s->dir);
	int logfd = -1;

	vm->chan = vm->qmp = vm->pidfd = -1;
	vm->boot.path = "cold";
	vm->dir = xstrdup(s->dir);
	vm->console_path = xasprintf("%s/console.log", s->dir);
	if (!have_user && vm_qemu_user(&user, err) < 0)
		goto fail;
	have_user = 1;
	if (launch_build(&l, s, vm->console_path, err) < 0)
		goto fail;
	write_cmdline(&l.a, cmdline_path);
	logfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (logfd < 0) {
		error_sys(err, errno, "creating '%s'", log_path);
		goto fail;
	}
	vm->pid = fork();
	if (vm->pid < 0) {
		error_sys(err, errno, "forking for qemu");
		goto fail;
	}
	if (vm->pid == 0)
		child_exec(&l, logfd);
	vm->pidfd = (int)syscall(SYS_pidfd_open, vm->pid, 0);
	vm->chan = l.chan;
	vm->qmp = l.qmp;
	l.chan = l.qmp = -1;
	launch_release(&l); /* QEMU has its copies */
	if (qemu_wait_ready(vm, log_path, err) < 0)
		goto fail;
	fcntl(vm->chan, F_SETFL, fcntl(vm->chan, F_GETFL) | O_NONBLOCK);
	close(logfd);
	free(cmdline_path);
	free(log_path);
	*out = vm;
	return 0;
fail:
	if (logfd >= 0)
		close(logfd);
	if (l.chan >= 0)
		close(l.chan);
	if (l.qmp >= 0)
		close(l.qmp);
	launch_release(&l);
	free(cmdline_path);
	free(log_path);
	qemu_free(vm);
	return -1;
}

/* Every start goes through vm_snapshot_start(): it restores the cell or boots it cold. */
static int qemu_start(const struct vm_spec *s, struct vm **out, struct zb_error *err)
{
	return vm_snapshot_start(s, out, err);
}

int vm_qemu_qmp_fd(struct vm *vm)
{
	return vm->qmp;
}

struct vm_boot *vm_qemu_boot(struct vm *vm)
{
	return &vm->boot;
}

static const struct vm_boot *qemu_boot(struct vm *vm)
{
	return &vm->boot;
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

/* What the group of one disk should hold: every limit a disk can set (zero: none), so that the
 * qom-set replaces them all, with the disk's own values when `on`. */
static json_t *limits_wanted(const struct vm_throttle *t, int on)
{
	json_t *lim = vm_qemu_throttle_limits(NULL);

	if (on) {
		json_t *own = vm_qemu_throttle_limits(t);

		json_object_update(lim, own);
		json_decref(own);
	}
	return lim;
}

/* Each throttled disk's group, through QMP: qom-set /objects/tg<i> limits (QEMU applies a
 * group's new limits to the requests that follow), then read back: the group must hold what was
 * set (a qom-set that changed nothing was once taken for one that lifted the limits). */
static int qemu_disk_limits(struct vm *vm, const struct vm_disk *disks, int ndisks, int on,
			    struct zb_error *err)
{
	struct qmp *q = xmalloc(sizeof(*q)); /* its line buffer is 64 KiB */
	int rc = 0;

	qmp_init(q, vm->qmp);
	for (int i = 0; i < ndisks && rc == 0; i++) {
		const struct vm_throttle *t = &disks[i].throttle;
		json_t *want, *got = NULL, *v;
		const char *k;
		char path[32];

		if (!t->iops && !t->bps) /* no throttle node (vm_qemu_args.c) */
			continue;
		snprintf(path, sizeof(path), "/objects/tg%d", i);
		want = limits_wanted(t, on);
		rc = qmp_call(
		    q, "qom-set",
		    json_pack("{s:s, s:s, s:O}", "path", path, "property", "limits", "value", want),
		    NULL, QEMU_QMP_WAIT_S, err);
		if (rc == 0)
			rc = qmp_call(q, "qom-get",
				      json_pack("{s:s, s:s}", "path", path, "property", "limits"),
				      &got, QEMU_QMP_WAIT_S, err);
		json_object_foreach (want, k, v) {
			json_t *g = json_object_get(got, k);

			if (rc == 0 &&
			    !(json_is_integer(g) && json_integer_value(g) == json_integer_value(v)))
				rc = error_set(
				    err, EIO, "qemu's group %s holds %s %lld, not %lld", path, k,
				    json_is_integer(g) ? (long long)json_integer_value(g) : -1LL,
				    (long long)json_integer_value(v));
		}
		json_decref(want);
		json_decref(got);
		if (rc < 0)
			error_wrap(err, "%s the limits of disk '%s'", on ? "setting" : "lifting",
				   disks[i].name);
	}
	free(q);
	return rc;
}

/* Our QEMU runs in its own process group, so it outlives a killed zbench. */
static int qemu_reap(const char *run_dir)
{
	return vm_reap_processes(run_dir, "qemu-system");
}

const struct vm_ops vm_qemu_ops = {
	.name = "qemu",
	.caps = VM_CAP_CLOUD_DISK | VM_CAP_DISK_MODELS,
	.start = qemu_start,
	.channel_fd = qemu_channel_fd,
	.exit_fd = qemu_exit_fd,
	.console_bytes = qemu_console_bytes,
	.exited = qemu_exited,
	.stop = qemu_stop,
	.pid = qemu_pid,
	.free = qemu_free,
	.boot = qemu_boot,
	.disk_limits = qemu_disk_limits,
	.reap = qemu_reap,
};
