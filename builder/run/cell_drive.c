/* One attempt's running VM, driven to its end (cell_int.h).
 *
 * The host waits on a table of event sources (drive_sources[]), each with its own handler: the
 * VM process, the modelled disks' servers, the channel, the signals, the console and the clock
 * (the deadlines of docs/protocol.md: boot, heartbeat, overall). Each round every
 * source's `check` runs in table order, then one poll() over the descriptors the sources offer,
 * then the `ready` handler of each source whose descriptor is ready. A handler that returns
 * DRIVE_STOP ends the loop; the verdict (if any) is in the cell's state by then. A new stop
 * condition is a new source, not a new branch in the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cell_int.h"
#include "core/util.h"
#include "core/version.h"
#include "guest/proto.h"
#include "guest/units.h"
#include "matrix/phases.h"
#include "vm/console.h"

#define EXIT_GRACE_SECONDS 30 /* after the result: time for the guest to power off */
/* Added to timeouts.boot on the cloud flavor: systemd and cloud-init start before the agent
 * (measured under TCG here: docs/images.md). */
#define CLOUD_BOOT_ALLOWANCE 480
#define DRIVE_MAX_FDS	     64 /* channel, VM exit, one per disk server and room to spare */

/* The deadlines of one attempt, in seconds (docs/protocol.md). */
struct deadlines {
	double probe;	  /* > 0: the KVM probe's, until the first console byte */
	double boot;	  /* until the agent's hello */
	double heartbeat; /* between messages, and between samples whose counters moved */
	double overall;	  /* the whole cell */
};

/* Everything the sources of one attempt's loop share. */
struct drive {
	struct run_ctx *ctx;
	struct attempt *cr;
	struct disk_set *ds;
	struct vm *vm;
	struct channel ch;
	struct console_watch cw;
	struct deadlines dl;
	double now;	    /* this round's clock */
	double t_exit_wait; /* when the guest was done (result, error or verdict); 0: not yet */
	double last_progress;
	double t_server_gone; /* a disk server exited with status 0 (models_check) */
	struct zb_error *err;
};

/* ---- the channel's hooks -------------------------------------------------------------------- */

/* One message to the guest, written blocking (the channel is non-blocking otherwise). */
static int send_control(struct vm *vm, const struct vm_ops *ops, const char *text,
			struct zb_error *err)
{
	int fd = ops->channel_fd(vm), flags = fcntl(fd, F_GETFL), rc;

	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	rc = proto_write_frame(fd, text, strlen(text));
	fcntl(fd, F_SETFL, flags);
	return rc < 0 ? error_sys(err, errno, "writing to the guest's channel") : 0;
}

/* The answer to the guest's hello: the job, as one frame. */
static int send_job(void *arg, struct zb_error *err)
{
	struct drive *d = arg;
	json_t *jd = json_array();
	json_t *job;
	char *text;
	int rc;

	for (int i = 0; i < d->ds->n; i++) {
		char *gp = disk_guest_path(&d->ds->disks[i]);

		json_array_append_new(
		    jd, json_pack("{s:s, s:s}", "name", d->ds->disks[i].name, "guest_path", gp));
		free(gp);
	}
	job = json_pack("{s:i, s:s, s:s, s:O, s:o}", "v", ZB_PROTO_VERSION, "type", "job", "cell",
			d->cr->cell->id, "config", d->cr->cell->config, "disks", jd);
	text = json_dumps(job, JSON_COMPACT);
	json_decref(job);
	rc = send_control(d->vm, d->ctx->vm_ops, text, err);
	free(text);
	return rc < 0 ? error_wrap(err, "sending the job") : 0;
}

/* The answer to the guest's "limits" (its setup is over): its disks get their limits back, if
 * they were lifted, before it hears "limits" and measures. */
static int give_limits(void *arg, struct zb_error *err)
{
	static const char limits[] = "{\"v\":1,\"type\":\"limits\"}";
	struct drive *d = arg;
	struct attempt *cr = d->cr;
	const struct vm_ops *ops = d->ctx->vm_ops;

	if (cr->limits_lifted && !cr->limits_set_s) {
		if (ops->disk_limits(d->vm, d->ds->disks, d->ds->n, 1, err) < 0)
			return error_wrap(err, "giving the disks their limits");
		cr->limits_set_s = now_monotonic() - cr->st.t_start;
	}
	/* the measured window starts: the modelled disks' counters from here (its end is the
	 * result, channel_ready) */
	disk_servers_mark(&cr->servers, DISK_MARK_START);
	return send_control(d->vm, ops, limits, err);
}

/* Evidence for a timeout while the guest may still answer: ask the agent to dump the blocked
 * tasks' stacks (sysrq w) to the console, and give the console a few seconds to receive them. */
static void capture_stacks(struct run_ctx *ctx, struct vm *vm)
{
	static const char dump[] = "{\"v\":1,\"type\":\"dump\"}";
	int fd = ctx->vm_ops->channel_fd(vm);
	struct zb_error ignored = { 0 };
	char sink[4096];

	if (send_control(vm, ctx->vm_ops, dump, &ignored) < 0)
		return;
	for (double end = now_monotonic() + 4; now_monotonic() < end;) {
		/* keep the channel drained so the guest never blocks writing to it */
		while (read(fd, sink, sizeof(sink)) > 0)
			;
		if (ctx->vm_ops->exited(vm, NULL))
			break;
		usleep(100 * 1000);
	}
}

/* ---- the event sources ---------------------------------------------------------------------- */

enum drive_next { DRIVE_ON, DRIVE_STOP };

struct drive_source {
	const char *name;
	/* Optional, every round before the poll: DRIVE_STOP ends the attempt's loop. */
	enum drive_next (*check)(struct drive *d);
	/* Optional: append the descriptors to poll this round to p (at most max); returns how
	 * many. */
	int (*fds)(struct drive *d, struct pollfd *p, int max);
	/* Optional: the descriptors this source offered, after the poll (p[i].revents set). */
	enum drive_next (*ready)(struct drive *d, const struct pollfd *p, int n);
};

/* The VM process: its exit ends the loop. */
static enum drive_next vm_check(struct drive *d)
{
	return d->ctx->vm_ops->exited(d->vm, NULL) ? DRIVE_STOP : DRIVE_ON;
}

static int vm_fds(struct drive *d, struct pollfd *p, int max)
{
	int fd = d->ctx->vm_ops->exit_fd(d->vm);

	if (fd < 0 || max < 1)
		return 0;
	p[0] = (struct pollfd){ fd, POLLIN, 0 };
	return 1;
}

/* The channel: what the guest says (channel_feed() answers the hello and "limits"); a guest
 * that broke the protocol, or a hook that failed on the host (fatal), ends the loop. */
static enum drive_next channel_check(struct drive *d)
{
	return d->cr->st.broken ? DRIVE_STOP : DRIVE_ON;
}

static int channel_fds(struct drive *d, struct pollfd *p, int max)
{
	if (max < 1)
		return 0;
	p[0] = (struct pollfd){ d->ctx->vm_ops->channel_fd(d->vm), POLLIN, 0 };
	return 1;
}

static enum drive_next channel_ready(struct drive *d, const struct pollfd *p, int n)
{
	char buf[65536];
	ssize_t r;

	if (n < 1 || !(p[0].revents & (POLLIN | POLLHUP)))
		return DRIVE_ON;
	r = read(p[0].fd, buf, sizeof(buf));
	if (r > 0) {
		if (!d->cr->t_first_byte)
			d->cr->t_first_byte = now_monotonic();
		if (channel_feed(&d->ch, buf, (size_t)r) < 0 && d->ch.fatal)
			return DRIVE_STOP;
		/* the result ends the measured window: before the guest's sync and power-off */
		if (d->cr->st.fio)
			disk_servers_mark(&d->cr->servers, DISK_MARK_END);
	} else if (r == 0 && !d->t_exit_wait) {
		/* The channel closed: QEMU is going away. */
		usleep(50 * 1000);
	}
	return DRIVE_ON;
}

/* SIGINT or SIGTERM: the attempt is interrupted (not a verdict on the cell). */
static enum drive_next signal_check(struct drive *d)
{
	if (!run_interrupted)
		return DRIVE_ON;
	cell_verdict(&d->cr->st, OUTCOME_INTERRUPTED, "stopped by signal %d", (int)run_interrupted);
	return DRIVE_STOP;
}

/* The console: its first byte (the KVM probe and the boot deadline's message), and what it
 * says as it grows (console_watch). */
static enum drive_next console_check(struct drive *d)
{
	if (!d->cr->t_first_byte && d->ctx->vm_ops->console_bytes(d->vm) > 0)
		d->cr->t_first_byte = d->now;
	console_watch_check(&d->cw);
	return DRIVE_ON;
}

/* Whether one of the attempt's deadlines has passed; if so the verdict says which. */
static int deadline_passed(struct attempt *cr, const struct deadlines *dl, double now)
{
	struct cell_state *st = &cr->st;

	if (dl->probe > 0 && !cr->t_first_byte && now - st->t_start > dl->probe) {
		cell_verdict(st, OUTCOME_BOOT_FAIL, "no console output within %.0f s (KVM probe)",
			     dl->probe);
		return 1;
	}
	if (!st->said_hello && now - st->t_start > dl->boot) {
		cell_verdict(st, OUTCOME_BOOT_FAIL, "the agent did not say hello within %.0f s%s",
			     dl->boot, cr->t_first_byte ? "" : " (no console output either)");
		return 1;
	}
	if (st->t_workload && !st->fio && st->outcome == OUTCOME_NONE &&
	    now - (st->t_progress > st->t_workload ? st->t_progress : st->t_workload) >
		dl->heartbeat) {
		cell_verdict(st, OUTCOME_TIMEOUT, "the workload made no progress for %.0f s",
			     dl->heartbeat);
		return 1;
	}
	if (st->said_hello && st->outcome == OUTCOME_NONE && now - st->t_last_msg > dl->heartbeat) {
		cell_verdict(st, OUTCOME_TIMEOUT,
			     "no message from the agent for %.0f s (step '%s')", dl->heartbeat,
			     st->current_phase ? st->current_phase : "?");
		return 1;
	}
	if (now - st->t_start > dl->overall) {
		cell_verdict(st, OUTCOME_TIMEOUT, "the cell exceeded its overall limit of %.0f s",
			     dl->overall);
		return 1;
	}
	return 0;
}

/* The clock: the deadlines, the guest's time to power off once it is done, and the progress
 * board's tick. */
static enum drive_next clock_check(struct drive *d)
{
	struct cell_state *st = &d->cr->st;

	if (deadline_passed(d->cr, &d->dl, d->now))
		return DRIVE_STOP;
	/* After the result or an error, the guest powers itself off; give it a while. */
	if ((st->fio || st->error || st->outcome != OUTCOME_NONE) && !d->t_exit_wait)
		d->t_exit_wait = d->now;
	if (d->t_exit_wait && d->now - d->t_exit_wait > EXIT_GRACE_SECONDS)
		return DRIVE_STOP;
	/* After its bye the guest has nothing left to say, only its sync() and power-off: a sync
	 * of every pool, on disks given back their limits, that no one reads (the disks are
	 * removed next). Stop it now; keep waiting for a clean power-off only when the disks are
	 * kept for the user to look at. */
	if (st->got_bye && !d->ctx->o->keep_disks)
		return DRIVE_STOP;
	/* the board decides what to print of it (progress.c) */
	if (d->now - d->last_progress >= 1.0) {
		cell_progress(d->ctx, d->cr, 0);
		d->last_progress = d->now;
	}
	return DRIVE_ON;
}

/* The modelled disks' servers (disk_server.h): one that dies under a running VM ends the
 * attempt as host-error with its log's tail, whatever the guest made of its vanished disk. One
 * that exited with status 0 lost its connection, which only QEMU closes: the VM is going away,
 * and the vm source says so within a few rounds (else that too is a host error). */
#define SERVER_GONE_GRACE 5.0

static enum drive_next models_check(struct drive *d)
{
	struct cell_state *st = &d->cr->st;
	int i = disk_servers_exited(&d->cr->servers);
	char why[1024];

	if (i < 0)
		return DRIVE_ON;
	if (WIFEXITED(d->cr->servers.s[i].status) && !WEXITSTATUS(d->cr->servers.s[i].status)) {
		if (!d->t_server_gone)
			d->t_server_gone = d->now;
		if (d->now - d->t_server_gone < SERVER_GONE_GRACE)
			return DRIVE_ON;
	}
	disk_server_describe_exit(&d->cr->servers.s[i], why, sizeof(why));
	if (st->outcome != OUTCOME_NONE && st->outcome != OUTCOME_HOST_ERROR) {
		/* what the guest said came from a disk that had gone */
		char *was = st->detail;

		st->detail = xasprintf("%s; the guest then saw: %s: %s", why,
				       outcome_name(st->outcome), was ? was : "");
		free(was);
		st->outcome = OUTCOME_HOST_ERROR;
		return DRIVE_STOP;
	}
	cell_verdict(st, OUTCOME_HOST_ERROR, "%s", why);
	return DRIVE_STOP;
}

static int models_fds(struct drive *d, struct pollfd *p, int max)
{
	int n = 0;

	for (int i = 0; i < d->cr->servers.n && n < max; i++) {
		if (d->cr->servers.s[i].pid > 0 && d->cr->servers.s[i].pidfd >= 0)
			p[n++] = (struct pollfd){ d->cr->servers.s[i].pidfd, POLLIN, 0 };
	}
	return n;
}

static enum drive_next models_ready(struct drive *d, const struct pollfd *p, int n)
{
	for (int i = 0; i < n; i++) {
		if (p[i].revents)
			return models_check(d);
	}
	return DRIVE_ON;
}

/* In the order the loop asks them each round. */
static const struct drive_source drive_sources[] = {
	{ .name = "vm", .check = vm_check, .fds = vm_fds },
	{ .name = "disk models", .check = models_check, .fds = models_fds, .ready = models_ready },
	{ .name = "channel", .check = channel_check, .fds = channel_fds, .ready = channel_ready },
	{ .name = "signal", .check = signal_check },
	{ .name = "console", .check = console_check },
	{ .name = "clock", .check = clock_check },
};

/* One round: every source's check, one poll, the ready handlers. 0 to go on, 1 to stop, -1 when
 * the poll itself failed (d->err set). */
static int drive_round(struct drive *d)
{
	struct pollfd p[DRIVE_MAX_FDS];
	int first[ARRAY_SIZE(drive_sources)], count[ARRAY_SIZE(drive_sources)], n = 0;

	d->now = now_monotonic();
	for (size_t i = 0; i < ARRAY_SIZE(drive_sources); i++) {
		if (drive_sources[i].check && drive_sources[i].check(d) == DRIVE_STOP)
			return 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(drive_sources); i++) {
		first[i] = n;
		count[i] =
		    drive_sources[i].fds ? drive_sources[i].fds(d, p + n, DRIVE_MAX_FDS - n) : 0;
		n += count[i];
	}
	if (poll(p, (nfds_t)n, 250) < 0) {
		if (errno == EINTR)
			return 0;
		error_sys(d->err, errno, "polling the VM");
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(drive_sources); i++) {
		if (drive_sources[i].ready && count[i] &&
		    drive_sources[i].ready(d, p + first[i], count[i]) == DRIVE_STOP)
			return 1;
	}
	return 0;
}

/* ---- the attempt ---------------------------------------------------------------------------- */

static double json_duration(const json_t *v, double fallback)
{
	uint64_t usec;

	if (json_is_string(v) && units_parse_duration(json_string_value(v), &usec) == 0)
		return (double)usec / 1e6;
	if (json_is_integer(v))
		return (double)json_integer_value(v);
	return fallback;
}

static void drive_deadlines(const struct attempt *cr, struct deadlines *dl)
{
	json_t *timeouts = json_object_get(cr->cell->config, "timeouts");
	/* every phase's runtime and sleep */
	double runtime = phases_seconds(json_object_get(cr->cell->config, "workload"));

	*dl = (struct deadlines){
		.probe = cr->probing ? KVM_PROBE_SECONDS : 0,
		.boot = json_duration(json_object_get(timeouts, "boot"), 120),
		.heartbeat = json_duration(json_object_get(timeouts, "heartbeat"), 60),
	};
	/* systemd and cloud-init come up before the agent on the cloud flavor (docs/images.md). */
	if (cr->side->img.disk)
		dl->boot += CLOUD_BOOT_ALLOWANCE;
	dl->overall =
	    json_duration(json_object_get(timeouts, "overall"), dl->boot + 600 + 2 * runtime);
}

int cell_drive(struct run_ctx *ctx, struct attempt *cr, struct disk_set *ds,
	       const struct cloud_cell *cc, struct zb_error *err)
{
	struct drive *d = xcalloc(1, sizeof(*d));
	struct cell_state *st = &cr->st;
	struct vm_spec spec;
	char *cmdline;
	int rc = 0, fatal;

	*d = (struct drive){ .ctx = ctx, .cr = cr, .ds = ds, .err = err };
	drive_deadlines(cr, &d->dl);
	cmdline = cell_vm_spec(ctx, cr, ds, cc, &spec);
	st->t_start = now_monotonic();
	if (ctx->vm_ops->start(&spec, &d->vm, err) < 0) {
		free(cmdline);
		free(d);
		return error_wrap(err, "starting the VM");
	}
	free(cmdline);
	if (ctx->vm_ops->pid)
		run_vm_pid = ctx->vm_ops->pid(d->vm);
	cell_boot(ctx, cr, d->vm);
	json_object_set_new(st->phases, "vm_started", json_real(now_monotonic() - st->t_start));
	channel_init(&d->ch, st, PROTO_MAX_PAYLOAD);
	cell_lift_limits(ctx, cr, d->vm, ds);
	d->ch.on_hello = send_job;
	d->ch.on_limits = give_limits;
	d->ch.arg = d;
	d->ch.err = err;
	console_watch_init(&d->cw, cr->dir, st->budget[STREAM_CONSOLE]);

	while ((rc = drive_round(d)) == 0)
		;
	fatal = rc < 0 || d->ch.fatal;
	channel_release(&d->ch);
	if (st->outcome == OUTCOME_TIMEOUT && st->said_hello && !ctx->vm_ops->exited(d->vm, NULL))
		capture_stacks(ctx, d->vm);
	ctx->vm_ops->stop(d->vm, 5);
	run_vm_pid = -1;
	json_object_set_new(st->phases, "vm_exit", json_real(now_monotonic() - st->t_start));
	ctx->vm_ops->free(d->vm);
	console_watch_finish(&d->cw);
	if (d->cw.cut)
		cell_state_truncate(st, STREAM_CONSOLE);
	console_watch_release(&d->cw);
	free(d);
	return fatal ? -1 : 0;
}
