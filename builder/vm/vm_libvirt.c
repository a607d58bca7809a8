/* The libvirt backend: one transient libvirt domain per cell, through the libvirt C API.
 *
 * The domain is the machine vm_qemu.c builds (q35, qboot and direct kernel boot, no network,
 * the serial console into the cell's console.log, the virtio-serial port org.zbench.0 on a unix
 * socket in the cell directory, pvpanic), described as domain XML (kept as domain.xml in the
 * cell directory) and started with virDomainCreateXML(): transient, never defined, and with
 * VIR_DOMAIN_START_AUTODESTROY (it dies with the connection) wherever the driver allows it,
 * which the embedded one does not. The runner sees exactly what the QEMU backend gives it.
 *
 * The URI is the runner's (zbench run --libvirt-uri, --hosts, the matrix's libvirt_uri); by
 * default the embedded driver, qemu:///embed?root=RUNDIR/libvirt/PID, which runs inside zbench
 * and needs no daemon (docs/libvirt.md). libvirt allows one embedded root per process and
 * delivers domain events only from a running event loop, so the connection and an event loop
 * thread are opened once per process (connect(), or the first cell) and live as long as it.
 *
 * The channel is read through libvirt, not from its unix socket: virDomainOpenChannel() gives a
 * stream that works over every connection, remote ones included (the socket is on the machine
 * running QEMU), and a relay in the event loop thread copies it to a socketpair whose other end
 * is the runner's channel fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cleanup.h"
#include "core/outdir.h"
#include "core/util.h"
#include "libvirt_uri.h"
#include "vm.h"

#define EMBED_PREFIX   "qemu:///embed"
#define CHANNEL_WAIT_S 30

struct vm {
	virDomainPtr dom;
	unsigned char uuid[VIR_UUID_BUFLEN];
	char *name;
	char *dir; /* absolute cell directory */
	char *console_path;
	int chan;	     /* the runner's end of the relay's socketpair */
	struct relay *relay; /* the channel's stream and the other end */
	int exit_efd;	     /* eventfd, written by the lifecycle callback when the domain stops */
	int qemu_pidfd;	     /* QEMU's pidfd when libvirt is local (see qemu_gone()), else -1 */
	int exited;	     /* set by the event loop thread (atomic) */
	int status;	     /* a wait status made up from the stop reason */
	struct vm *next;
};

/* Process-wide: the one connection, its event loop thread, and the running domains the
 * lifecycle callback (event loop thread) looks up by UUID. */
static struct {
	pthread_mutex_t lock;
	virConnectPtr conn;
	char *uri;
	char *embed_root; /* NULL unless the URI is qemu:///embed */
	int remote;	  /* the URI names another machine: no local pid, no local paths */
	int cpus;	  /* the host's logical CPUs (virNodeGetInfo), 0 if unknown */
	struct vm *live;
} lv = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *event_loop(void *arg)
{
	for (;;) {
		if (virEventRunDefaultImpl() < 0)
			usleep(100 * 1000);
	}
	return arg;
}

/* libvirt prints every error to stderr by default; ours carry the message instead. */
static void quiet_errors(void *arg, virErrorPtr e)
{
}

static const char *virt_msg(void)
{
	const char *m = virGetLastErrorMessage();

	return m ? m : "unknown libvirt error";
}

/* Runs in the event loop thread. */
static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *arg)
{
	unsigned char uuid[VIR_UUID_BUFLEN];

	if (event != VIR_DOMAIN_EVENT_STOPPED || virDomainGetUUID(dom, uuid) < 0)
		return 0;
	pthread_mutex_lock(&lv.lock);
	for (struct vm *vm = lv.live; vm; vm = vm->next) {
		uint64_t one = 1;

		if (memcmp(vm->uuid, uuid, sizeof(uuid)))
			continue;
		/* The runner only tells clean exits (0) from the rest; keep the distinction a
		 * process would have: powered off = exit 0, destroyed = SIGKILL, else exit 1. */
		if (detail == VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN)
			vm->status = 0;
		else if (detail == VIR_DOMAIN_EVENT_STOPPED_DESTROYED)
			vm->status = SIGKILL;
		else
			vm->status = 1 << 8;
		__atomic_store_n(&vm->exited, 1, __ATOMIC_RELEASE);
		if (write(vm->exit_efd, &one, sizeof(one)) < 0) {
			/* the flag above is what counts */
		}
	}
	pthread_mutex_unlock(&lv.lock);
	return 0;
}

/* The embedded driver's root: its qemu.conf runs QEMU as the calling user (the default
 * would be libvirt-qemu, which cannot read the caller's files), leaves the owner and the
 * extended attributes of our files alone (QEMU runs as their owner: nothing to relabel, and
 * the image cache is shared by every run), and sends QEMU's output to files instead of to
 * virtlogd, which is a daemon (DESIGN.md field notes). */
static int embed_root_prepare(const struct outdir *root, struct zb_error *err)
{
	cleanup_free char *conf = xasprintf("# written by zbench (builder/vm/vm_libvirt.c, "
					    "docs/libvirt.md)\n"
					    "user = \"+%u\"\n"
					    "group = \"+%u\"\n"
					    "dynamic_ownership = 0\n"
					    "remember_owner = 0\n"
					    "stdio_handler = \"file\"\n",
					    (unsigned)getuid(), (unsigned)getgid());
	struct outdir etc = { .fd = -1 }, log = { .fd = -1 };
	int rc = -1;

	if (outdir_sub(root, "etc", OUTDIR_CREATE, 0700, &etc, err) < 0 ||
	    outdir_sub(root, "log", OUTDIR_CREATE, 0700, &log, err) < 0)
		goto out;
	rc = outdir_write(&etc, "qemu.conf", conf, strlen(conf), 0600, err);
out:
	outdir_close(&etc);
	outdir_close(&log);
	return rc;
}

/* Open (creating it) the embedded driver's root: a root the URI names is the user's path
 * (followed as usual); ours, RUNDIR/libvirt/PID, is opened one component at a time below the
 * run directory, never through a symlink planted there (docs/security.md, "Run
 * directories"). */
static int embed_root_open(const char *run_dir, int ours, struct outdir *root, struct zb_error *err)
{
	struct outdir run = { .fd = -1 }, lvdir = { .fd = -1 };
	char pid[32];
	int rc;

	if (!ours)
		return outdir_open(root, lv.embed_root, OUTDIR_CREATE, 0700, err);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	rc = outdir_open(&run, run_dir, 0, 0, err);
	if (rc == 0)
		rc = outdir_sub(&run, "libvirt", OUTDIR_CREATE, 0700, &lvdir, err);
	if (rc == 0)
		rc = outdir_sub(&lvdir, pid, OUTDIR_CREATE, 0700, root, err);
	outdir_close(&run);
	outdir_close(&lvdir);
	return rc;
}

/* The embedded driver has no AUTODESTROY: destroy what is still running when zbench exits
 * (the runner stops every VM itself; this covers an exit on an error path). */
static void destroy_live_domains(void)
{
	pthread_mutex_lock(&lv.lock);
	for (struct vm *vm = lv.live; vm; vm = vm->next) {
		if (vm->dom && !__atomic_load_n(&vm->exited, __ATOMIC_ACQUIRE))
			virDomainDestroy(vm->dom);
	}
	pthread_mutex_unlock(&lv.lock);
}

/* Open the connection once per process. `uri` NULL or empty: the embedded driver with its
 * root under run_dir. */
static int conn_open(const char *uri, const char *run_dir, struct zb_error *err)
{
	static int loop_started, handler;
	struct libvirt_uri pu;
	virNodeInfo node;
	pthread_t th;
	int ours = 0; /* the root is RUNDIR/libvirt/PID */

	if (lv.conn)
		return 0;
	free(lv.uri);
	free(lv.embed_root);
	lv.uri = NULL;
	lv.embed_root = NULL;
	if (uri && *uri) {
		if (libvirt_uri_parse(uri, &pu, err) < 0)
			return -1;
		lv.uri = xstrdup(uri);
		lv.remote = pu.remote;
		if (pu.root[0])
			lv.embed_root = xstrdup(pu.root);
	} else {
		/* One root per process, because a root is usable by one process only (zbench
		 * run -j N has N workers); beside cells/ in the run directory. */
		char *abs = realpath(run_dir, NULL);

		if (!abs)
			return error_sys(err, errno, "'%s'", run_dir);
		lv.embed_root = xasprintf("%s/libvirt/%d", abs, (int)getpid());
		ours = 1;
		lv.uri = xasprintf(EMBED_PREFIX "?root=%s", lv.embed_root);
		free(abs);
	}
	if (lv.embed_root) {
		struct outdir root = { .fd = -1 };
		int rc = embed_root_open(run_dir, ours, &root, err);

		if (rc == 0)
			rc = embed_root_prepare(&root, err);
		outdir_close(&root);
		if (rc < 0)
			return error_wrap(err, "libvirt root '%s'", lv.embed_root);
		/* The embedded driver logs its warnings to our stderr (taint notes, missing
		 * device-mapper, ...): into the root instead, unless the user chose. Read once,
		 * by virInitialize(). */
		if (!getenv("LIBVIRT_LOG_OUTPUTS")) {
			char *out = xasprintf("3:file:%s/log/libvirt.log", lv.embed_root);

			setenv("LIBVIRT_LOG_OUTPUTS", out, 1);
			free(out);
		}
		if (!handler && atexit(destroy_live_domains) == 0)
			handler = 1;
	}
	virSetErrorFunc(NULL, quiet_errors);
	if (virInitialize() < 0)
		return error_set(err, 0, "initialising libvirt: %s", virt_msg());
	if (!loop_started) {
		/* Domain events (how we learn that a guest powered off) and the embedded
		 * driver's monitor I/O are dispatched only from a running event loop: it must
		 * be registered before the connection opens (virt-qemu-run does the same). */
		if (virEventRegisterDefaultImpl() < 0)
			return error_set(err, 0, "libvirt's event loop: %s", virt_msg());
		if (pthread_create(&th, NULL, event_loop, NULL) != 0)
			return error_sys(err, errno, "starting libvirt's event loop thread");
		pthread_detach(th);
		loop_started = 1;
	}
	lv.conn = virConnectOpen(lv.uri);
	if (!lv.conn)
		return error_set(err, 0, "connecting to '%s': %s", lv.uri, virt_msg());
	if (virConnectDomainEventRegisterAny(lv.conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
					     VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), NULL,
					     NULL) < 0) {
		error_set(err, 0, "'%s': domain events: %s", lv.uri, virt_msg());
		virConnectClose(lv.conn);
		lv.conn = NULL;
		return -1;
	}
	if (!lv.embed_root && strchr(lv.uri, '+'))
		virConnectSetKeepAlive(lv.conn, 5, 3); /* remote: notice a dead link */
	lv.cpus = virNodeGetInfo(lv.conn, &node) == 0 ? (int)node.cpus : 0;
	return 0;
}

static int lv_connect(const char *uri, const char *run_dir, struct vm_host *host,
		      struct zb_error *err)
{
	if (conn_open(uri, run_dir, err) < 0)
		return -1;
	snprintf(host->uri, sizeof(host->uri), "%s", lv.uri);
	host->cpus = lv.cpus;
	return 0;
}

/* ---- the channel: a libvirt stream relayed to a socketpair --------------------------------- */

/* The relay runs in the event loop thread: the stream's and our socket's callbacks each move one
 * buffer at a time and only ask for the events they can act on, so neither side is read faster
 * than the other is written (nothing is dropped, nothing grows). Freed when both registrations
 * are gone (their free callbacks run after any callback in progress). */
struct relay {
	pthread_mutex_t lock;
	virStreamPtr st;
	int fd;			 /* our end of the socketpair */
	int watch;		 /* virEventAddHandle() id */
	int st_cb;		 /* the stream callback is registered */
	int closed;		 /* lv_free() has begun: the callbacks do nothing more */
	int eof;		 /* the stream ended: our end is shut down for writing */
	int refs;		 /* registrations still holding it */
	size_t out_off, out_len; /* guest to runner, not yet written to fd */
	size_t in_off, in_len;	 /* runner to guest, not yet sent on the stream */
	char out[65536], in[4096];
};

static void relay_unref(void *arg)
{
	struct relay *r = arg;
	int last;

	pthread_mutex_lock(&r->lock);
	last = --r->refs == 0;
	pthread_mutex_unlock(&r->lock);
	if (!last)
		return;
	close(r->fd);
	virStreamFree(r->st);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* With r->lock held. Returns 1 when the stream's callback is to be removed, which the caller
 * does after unlocking (libvirt may run the free callback, which takes the lock, from there). */
static int relay_update(struct relay *r)
{
	int remove = r->st_cb && r->eof;

	if (remove) {
		r->st_cb = 0;
	} else if (r->st_cb) {
		virStreamEventUpdateCallback(
		    r->st, (r->out_len ? 0 : VIR_STREAM_EVENT_READABLE) |
			       (r->in_len ? VIR_STREAM_EVENT_WRITABLE : 0) |
			       (r->out_len ? 0 : VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP));
	}
	virEventUpdateHandle(r->watch, (r->in_len ? 0 : VIR_EVENT_HANDLE_READABLE) |
					   (r->out_len ? VIR_EVENT_HANDLE_WRITABLE : 0));
	return remove;
}

/* With r->lock held: move what can be moved without blocking. */
static void relay_pump(struct relay *r)
{
	while (r->out_len) {
		ssize_t n =
		    send(r->fd, r->out + r->out_off, r->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0)
			break;
		r->out_off += (size_t)n;
		r->out_len -= (size_t)n;
	}
	while (r->in_len && !r->eof) {
		int n = virStreamSend(r->st, r->in + r->in_off, r->in_len);

		if (n == -2)
			break;
		if (n < 0) {
			r->in_len = 0; /* the guest is gone: nothing to deliver it to */
			break;
		}
		r->in_off += (size_t)n;
		r->in_len -= (size_t)n;
	}
}

static void relay_stream_cb(virStreamPtr st, int events, void *arg)
{
	struct relay *r = arg;
	int remove;

	pthread_mutex_lock(&r->lock);
	if (r->closed) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	if (!r->out_len && !r->eof) {
		int n = virStreamRecv(st, r->out, sizeof(r->out));

		if (n > 0) {
			r->out_off = 0;
			r->out_len = (size_t)n;
		} else if (n != -2) {
			/* end of stream or an error: QEMU closed the channel */
			r->eof = 1;
			shutdown(r->fd, SHUT_WR);
		}
	}
	relay_pump(r);
	remove = relay_update(r);
	pthread_mutex_unlock(&r->lock);
	if (remove)
		virStreamEventRemoveCallback(st);
}

static void relay_fd_cb(int watch, int fd, int events, void *arg)
{
	struct relay *r = arg;
	int remove;

	pthread_mutex_lock(&r->lock);
	if (r->closed) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	if (!r->in_len && (events & VIR_EVENT_HANDLE_READABLE)) {
		ssize_t n = read(fd, r->in, sizeof(r->in));

		if (n > 0) {
			r->in_off = 0;
			r->in_len = (size_t)n;
		}
	}
	relay_pump(r);
	remove = relay_update(r);
	pthread_mutex_unlock(&r->lock);
	if (remove)
		virStreamEventRemoveCallback(r->st);
}

/* Open the domain's channel through libvirt and start relaying it; vm->chan is the runner's
 * end. Fails (err set) while the domain's channel is not there yet. */
static int channel_open(struct vm *vm, struct zb_error *err)
{
	virStreamPtr st = virStreamNew(lv.conn, VIR_STREAM_NONBLOCK);
	struct relay *r;
	int sv[2];

	if (!st)
		return error_set(err, 0, "a libvirt stream: %s", virt_msg());
	if (virDomainOpenChannel(vm->dom, VM_CHANNEL_NAME, st, VIR_DOMAIN_CHANNEL_FORCE) < 0) {
		error_set(err, 0, "opening channel '" VM_CHANNEL_NAME "': %s", virt_msg());
		virStreamFree(st);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
		virStreamAbort(st);
		virStreamFree(st);
		return error_sys(err, errno, "socketpair");
	}
	r = xcalloc(1, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->st = st;
	r->fd = sv[1];
	r->refs = 1; /* ours until both registrations hold it */
	pthread_mutex_lock(&r->lock);
	if (virStreamEventAddCallback(
		st, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP,
		relay_stream_cb, r, relay_unref) == 0) {
		r->st_cb = 1;
		r->refs++;
	}
	r->watch = r->st_cb ? virEventAddHandle(sv[1], VIR_EVENT_HANDLE_READABLE, relay_fd_cb, r,
						relay_unref)
			    : -1;
	if (r->watch >= 0)
		r->refs++;
	pthread_mutex_unlock(&r->lock);
	vm->relay = r;
	vm->chan = sv[0];
	if (r->watch < 0) {
		error_set(err, 0, "watching the channel: %s", virt_msg());
		return -1; /* lv_free() releases the rest */
	}
	return 0;
}

/* Stop relaying: no callback acts after this, the stream is aborted (a remote one tells the
 * other side), and the relay is freed once libvirt lets go of it. */
static void channel_close(struct vm *vm)
{
	struct relay *r = vm->relay;
	int st_cb;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->closed = 1;
	st_cb = r->st_cb;
	r->st_cb = 0;
	pthread_mutex_unlock(&r->lock);
	if (r->watch >= 0)
		virEventRemoveHandle(r->watch);
	if (st_cb)
		virStreamEventRemoveCallback(r->st);
	virStreamAbort(r->st);
	vm->relay = NULL;
	relay_unref(r);
}

/* ---- the ops ------------------------------------------------------------------------------- */

/* Whether QEMU itself has exited. libvirt daemonizes QEMU, so its parent is init, and libvirt
 * reports the domain stopped only once the process is gone for good (kill(pid, 0) fails), that
 * is once init has reaped it: 1.8-2 s after QEMU exited on a host whose PID 1 reaps every 2 s
 * (measured here). A pidfd becomes readable when QEMU exits, reaped or not: the runner learns
 * it at once and libvirt finishes its clean-up in the background. */
static int qemu_gone(struct vm *vm)
{
	struct pollfd p = { .fd = vm->qemu_pidfd, .events = POLLIN };

	return vm->qemu_pidfd >= 0 && poll(&p, 1, 0) == 1;
}

static int lv_exited(struct vm *vm, int *status)
{
	int done = __atomic_load_n(&vm->exited, __ATOMIC_ACQUIRE);

	if (!done && qemu_gone(vm)) {
		vm->status = 0; /* not our child: how it ended is the domain event's to say */
		__atomic_store_n(&vm->exited, 1, __ATOMIC_RELEASE);
		done = 1;
	}

	if (done && status)
		*status = vm->status;
	return done;
}

/* A copy of the embedded driver's log of this domain (QEMU's command line and its stderr) in
 * the cell directory as qemu.log, where the QEMU backend leaves its own. */
static void keep_qemu_log(struct vm *vm)
{
	char *src, *dst;
	struct zb_error e;

	if (!lv.embed_root)
		return;
	src = xasprintf("%s/log/qemu/%s.log", lv.embed_root, vm->name);
	dst = xasprintf("%s/qemu.log", vm->dir);
	copy_file(src, dst, &e); /* best effort: the original stays in the root */
	free(src);
	free(dst);
}

static void lv_free(struct vm *vm)
{
	if (!vm)
		return;
	pthread_mutex_lock(&lv.lock);
	for (struct vm **p = &lv.live; *p; p = &(*p)->next) {
		if (*p == vm) {
			*p = vm->next;
			break;
		}
	}
	pthread_mutex_unlock(&lv.lock);
	keep_qemu_log(vm);
	channel_close(vm);
	if (vm->dom)
		virDomainFree(vm->dom);
	if (vm->chan >= 0)
		close(vm->chan);
	if (vm->exit_efd >= 0)
		close(vm->exit_efd);
	if (vm->qemu_pidfd >= 0)
		close(vm->qemu_pidfd);
	free(vm->name);
	free(vm->dir);
	free(vm->console_path);
	free(vm);
}

/* SIGTERM first (QEMU exits at once, like QMP quit), SIGKILL when the grace is over. */
static void lv_stop(struct vm *vm, double grace)
{
	double deadline = now_monotonic() + grace;

	if (lv_exited(vm, NULL) || !vm->dom)
		return;
	virDomainDestroyFlags(vm->dom, VIR_DOMAIN_DESTROY_GRACEFUL);
	while (!lv_exited(vm, NULL) && now_monotonic() < deadline) {
		int state, reason;

		if (virDomainGetState(vm->dom, &state, &reason, 0) < 0 ||
		    state == VIR_DOMAIN_SHUTOFF)
			break;
		usleep(20 * 1000);
	}
	if (!lv_exited(vm, NULL))
		virDomainDestroy(vm->dom);
	/* A transient domain is gone once destroyed, event or not. */
	if (!lv_exited(vm, NULL)) {
		vm->status = SIGKILL;
		__atomic_store_n(&vm->exited, 1, __ATOMIC_RELEASE);
	}
}

/* QEMU's pid from libvirt's pid file, when libvirt runs on this host and we know where it keeps
 * them (the embedded driver, qemu:///system); -1 otherwise. */
static pid_t lv_pid(struct vm *vm)
{
	char *path, *buf = NULL;
	size_t len;
	struct zb_error e;
	long pid = -1;

	if (lv.embed_root)
		path = xasprintf("%s/run/qemu/%s.pid", lv.embed_root, vm->name);
	else if (!lv.remote && !strcmp(lv.uri, "qemu:///system"))
		path = xasprintf("/run/libvirt/qemu/%s.pid", vm->name);
	else
		return -1;
	if (read_file(path, 64, &buf, &len, &e) == 0)
		pid = strtol(buf, NULL, 10);
	free(path);
	free(buf);
	return pid > 0 ? (pid_t)pid : -1;
}

/* libvirt opens a passthrough device by its path (it has no way to take our descriptor for a
 * transient domain), so the path must still name the device passthrough.c checked and holds
 * (O_EXCL, until the cell is over): checked before the domain is created and again after, which
 * leaves a window only to root (/dev is root's). And never on another machine: the checks ran
 * here, on this machine's device of that name (the runner refuses that first). */
static int passthrough_still_ours(const struct vm_spec *s, char **paths, struct zb_error *err)
{
	for (int i = 0; i < s->ndisks; i++) {
		const struct vm_disk *d = &s->disks[i];
		struct stat held, named;

		if (!d->passthrough)
			continue;
		if (lv.remote)
			return error_set(err, EINVAL,
					 "disk '%s': passthrough device '%s' refused: '%s' is on "
					 "another machine",
					 d->name, d->path, lv.uri);
		if (d->fd < 0 || fstat(d->fd, &held) < 0 || stat(paths[i], &named) < 0 ||
		    !S_ISBLK(named.st_mode) || named.st_rdev != held.st_rdev)
			return error_set(err, EBUSY,
					 "disk '%s': '%s' no longer names the device that was "
					 "checked",
					 d->name, paths[i]);
	}
	return 0;
}

/* The domain's UUID (random, version 4) and its name, unique on a shared libvirt: the cell
 * directory's name and our pid. */
static int domain_identity(struct vm *vm, struct zb_error *err)
{
	char *copy;

	if (getrandom(vm->uuid, sizeof(vm->uuid), 0) != (ssize_t)sizeof(vm->uuid))
		return error_sys(err, errno, "getrandom");
	vm->uuid[6] = (unsigned char)((vm->uuid[6] & 0x0f) | 0x40); /* version 4 */
	vm->uuid[8] = (unsigned char)((vm->uuid[8] & 0x3f) | 0x80);
	copy = xstrdup(vm->dir);
	vm->name = xasprintf("zbench-%s-%d", basename(copy), (int)getpid());
	free(copy);
	return 0;
}

/* Open the domain's channel once it is there, at most CHANNEL_WAIT_S after the start. */
static int channel_wait(struct vm *vm, struct zb_error *err)
{
	double deadline = now_monotonic() + CHANNEL_WAIT_S;

	while (channel_open(vm, err) < 0) {
		if (vm->relay)
			return -1; /* not a channel that is not there yet */
		if (lv_exited(vm, NULL))
			return error_set(
			    err, 0, "domain '%s' stopped during start-up (see qemu.log)", vm->name);
		if (now_monotonic() > deadline) {
			error_wrap(err, "domain '%s' after %d s", vm->name, CHANNEL_WAIT_S);
			lv_stop(vm, 1);
			return -1;
		}
		usleep(20 * 1000);
	}
	return 0;
}

static int lv_start(const struct vm_spec *s, struct vm **out, struct zb_error *err)
{
	struct vm *vm = xcalloc(1, sizeof(*vm));
	struct vm_spec abs; /* s with the cell directory absolute */
	char **paths = xcalloc((size_t)s->ndisks + 1, sizeof(*paths));
	char *xml = NULL, *xml_path = NULL;
	int rc = -1;

	vm->chan = -1;
	vm->qemu_pidfd = -1;
	vm->exit_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->exit_efd < 0) {
		error_sys(err, errno, "eventfd");
		goto out;
	}
	/* libvirt wants absolute paths; the run directory may be relative. */
	vm->dir = realpath(s->dir, NULL);
	if (!vm->dir) {
		error_sys(err, errno, "'%s'", s->dir);
		goto out;
	}
	for (int i = 0; i < s->ndisks; i++) {
		paths[i] = realpath(s->disks[i].path, NULL);
		if (!paths[i]) {
			error_sys(err, errno, "disk '%s'", s->disks[i].path);
			goto out;
		}
	}
	vm->console_path = xasprintf("%s/console.log", vm->dir);
	xml_path = xasprintf("%s/domain.xml", vm->dir);
	if (domain_identity(vm, err) < 0)
		goto out;
	/* Connected already (connect()), else by default: the embedded driver, its root in the
	 * run directory (the cell directory is RUNDIR/cells/NAME). */
	if (!lv.conn) {
		char *copy = xstrdup(vm->dir);
		char *cells = dirname(copy);

		rc = conn_open(NULL, dirname(cells), err);
		free(copy);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	abs = *s;
	abs.dir = vm->dir;
	if (passthrough_still_ours(s, paths, err) < 0 ||
	    vm_libvirt_domain_xml(&abs, vm->name, vm->uuid, paths, lv.remote, &xml, err) < 0)
		goto out;
	if (write_file_atomic(xml_path, xml, strlen(xml), 0644, err) < 0)
		goto out;

	/* Known to the lifecycle callback before it can fire. */
	pthread_mutex_lock(&lv.lock);
	vm->next = lv.live;
	lv.live = vm;
	pthread_mutex_unlock(&lv.lock);
	/* The embedded driver refuses AUTODESTROY (libvirt 9.0 to 11.x: "not supported for
	 * embedded drivers yet"); there the domain is ours alone and stop() or the exit handler
	 * destroys it (docs/libvirt.md). */
	vm->dom =
	    virDomainCreateXML(lv.conn, xml, lv.embed_root ? 0 : VIR_DOMAIN_START_AUTODESTROY);
	if (!vm->dom) {
		error_set(err, 0, "creating domain '%s' on '%s': %s", vm->name, lv.uri, virt_msg());
		goto out;
	}
	if (passthrough_still_ours(s, paths, err) < 0)
		goto out; /* stopped below */
	{
		pid_t pid = lv_pid(vm);

		if (pid > 0)
			vm->qemu_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	}
	if (channel_wait(vm, err) < 0)
		goto out;
	*out = vm;
	vm = NULL;
	rc = 0;
out:
	if (vm && vm->dom)
		lv_stop(vm, 1);
	lv_free(vm);
	for (int i = 0; i < s->ndisks; i++)
		free(paths[i]);
	free(paths);
	free(xml);
	free(xml_path);
	return rc;
}

static int lv_channel_fd(struct vm *vm)
{
	return vm->chan;
}

static int lv_exit_fd(struct vm *vm)
{
	return vm->qemu_pidfd >= 0 ? vm->qemu_pidfd : vm->exit_efd;
}

static uint64_t lv_console_bytes(struct vm *vm)
{
	struct stat st;

	if (stat(vm->console_path, &st) < 0)
		return 0;
	return (uint64_t)st.st_size;
}

/* The embedded driver's QEMU (a local connection's) outlives a killed zbench as the qemu
 * backend's does, and names the same cell files. A domain on another machine is that machine's
 * process, not reachable from here. */
static int lv_reap(const char *run_dir)
{
	return vm_reap_processes(run_dir, "qemu-system");
}

const struct vm_ops vm_libvirt_ops = {
	.name = "libvirt",
	.caps = VM_CAP_HOSTS,
	.connect = lv_connect,
	.start = lv_start,
	.channel_fd = lv_channel_fd,
	.exit_fd = lv_exit_fd,
	.console_bytes = lv_console_bytes,
	.exited = lv_exited,
	.stop = lv_stop,
	.pid = lv_pid,
	.free = lv_free,
	.reap = lv_reap,
};
