/* The cell loop: matrix -> for each cell: disks, VM, job, result record -> run directory.
 *
 * Per cell the host is a small event loop over two file descriptors (the channel socket and a
 * pidfd of the VM process) with three deadlines (docs/protocol.md):
 *   boot       no byte from the guest (console or channel) since the VM started
 *   heartbeat  no message from the agent for that long once it said hello
 *   overall    a backstop derived from the workload's runtime
 * and classifies how the cell ended (DESIGN.md, outcome classes).
 */
#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "cloud_seed.h"
#include "commands.h"
#include "console.h"
#include "disk.h"
#include "image.h"
#include "libvirt_uri.h"
#include "matrix.h"
#include "outcome.h"
#include "proto.h"
#include "results.h"
#include "stats.h"
#include "term.h"
#include "units.h"
#include "util.h"
#include "version.h"
#include "vm.h"
#include "workload_engine.h"

#define KVM_PROBE_SECONDS  15 /* a working KVM guest prints within a second or two */
#define EXIT_GRACE_SECONDS 30 /* after the result: time for the guest to power off */
/* Added to timeouts.boot on the cloud flavor: systemd and cloud-init start before the agent
 * (measured under TCG here: docs/images.md). */
#define CLOUD_BOOT_ALLOWANCE 480

static volatile sig_atomic_t interrupted;
static volatile pid_t running_vm_pid = -1; /* for a second Ctrl-C */

static void on_signal(int sig)
{
	if (interrupted) {
		/* Second signal: out now. The VM is in its own process group, so it would
		 * outlive us: kill it first. (--resume also cleans up what is left.) */
		if (running_vm_pid > 0)
			kill(running_vm_pid, SIGKILL);
		_exit(130);
	}
	interrupted = sig;
}

struct run_ctx {
	const struct run_options *o;
	struct matrix *m;
	struct image img;
	struct results res;
	const struct vm_ops *vm_ops;
	char accel[8]; /* "kvm" or "tcg" once decided; "" while auto is undecided */
	int is_tty;
	int ncells_total; /* cells x repeats */
	int done, ok;
	int m_retries;	       /* the matrix's "retries": extra attempts after a failed one */
	const char *accel_opt; /* --accel, or on resume the run's own; NULL: the matrix's */
	int shard_index, shard_count; /* this run's slice of the cells (1-based index) */
	struct libvirt_host *hosts;   /* --hosts: one worker per slot of each (run_parallel) */
	int nhosts;
	const char *uri;     /* the libvirt URI without --hosts; NULL: the backend's default */
	char host_uri[1024]; /* the connection this process opened (connect_host); records
			      * carry it as "host" */
	char cpuset[64];     /* host CPUs of this process's VMs on a shared host, or "" */
};

/* One attempt at one cell: what the runner keeps beside the state the channel fills. */
struct cell_run {
	const struct cell *cell;
	int repeat, attempt;
	char *dir;
	const char *accel;
	double t_first_byte; /* the first byte from the guest, console or channel */
	struct cell_state st;
};

/* ---- the channel --------------------------------------------------------------------------- */

/* What the channel's hello hook needs to answer with the job. */
struct job_ctx {
	struct cell_run *cr;
	struct vm *vm;
	const struct vm_ops *ops;
	struct vm_disk *disks;
	int ndisks;
};

/* The answer to the guest's hello: the job, as one frame. */
static int send_job(void *arg, struct zb_error *err)
{
	struct job_ctx *jc = arg;
	json_t *jd = json_array();
	json_t *job;
	char *text;
	int fd = jc->ops->channel_fd(jc->vm), rc, flags;

	for (int i = 0; i < jc->ndisks; i++) {
		char *gp = disk_guest_path(&jc->disks[i]);

		json_array_append_new(
		    jd, json_pack("{s:s, s:s}", "name", jc->disks[i].name, "guest_path", gp));
		free(gp);
	}
	job = json_pack("{s:i, s:s, s:s, s:O, s:o}", "v", ZB_PROTO_VERSION, "type", "job", "cell",
			jc->cr->cell->id, "config", jc->cr->cell->config, "disks", jd);
	text = json_dumps(job, JSON_COMPACT);
	json_decref(job);
	/* One small message: write it blocking, then go back to non-blocking. */
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	rc = proto_write_frame(fd, text, strlen(text));
	fcntl(fd, F_SETFL, flags);
	free(text);
	if (rc < 0)
		return error_sys(err, errno, "sending the job");
	return 0;
}

/* ---- one cell ------------------------------------------------------------------------------ */

static double json_duration(const json_t *v, double fallback)
{
	uint64_t usec;

	if (json_is_string(v) && units_parse_duration(json_string_value(v), &usec) == 0)
		return (double)usec / 1e6;
	if (json_is_integer(v))
		return (double)json_integer_value(v);
	return fallback;
}

/* One progress line. The cell's summary (from the matrix), the phase and the detail (from the
 * guest) go through the terminal sanitiser. */
static void progress(struct run_ctx *ctx, struct cell_run *cr, int final)
{
	char el[32], head[4 * TERM_TEXT_MAX], detail[512 + 4];
	const struct cell_state *st = &cr->st;
	const char *phase = st->current_phase ? st->current_phase : "boot";

	format_duration(now_monotonic() - st->t_start, el, sizeof(el));
	snprintf(head, sizeof(head), "[%d/%d] %s (%s) %s", ctx->done + 1, ctx->ncells_total,
		 TERM(cr->cell->summary), TERM(cr->cell->id), TERM(cr->accel));
	if (final) {
		if (ctx->is_tty)
			fputs("\r\033[K", stderr);
		fprintf(stderr, "%s: %s", head, outcome_name(st->outcome));
		if (st->fio)
			fprintf(stderr, ", read %.0f IOPS, write %.0f IOPS",
				results_fio_iops(st->fio, "read"),
				results_fio_iops(st->fio, "write"));
		else if (st->detail)
			fprintf(stderr, ": %s",
				term_text(st->detail, sizeof(detail) - 4, detail, sizeof(detail)));
		fprintf(stderr, " [%s]\n", el);
	} else if (ctx->is_tty) {
		fprintf(stderr, "\r\033[K%s: %s %s", head, TERM(phase), el);
	} else {
		fprintf(stderr, "%s: %s at %s\n", head, TERM(phase), el);
	}
	fflush(stderr);
}

/* Evidence for a timeout while the guest may still answer: ask the agent to dump the blocked
 * tasks' stacks (sysrq w) to the console, and give the console a few seconds to receive them. */
static void capture_stacks(struct run_ctx *ctx, struct vm *vm)
{
	static const char dump[] = "{\"v\":1,\"type\":\"dump\"}";
	int fd = ctx->vm_ops->channel_fd(vm);
	int flags = fcntl(fd, F_GETFL);
	char sink[4096];

	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if (proto_write_frame(fd, dump, sizeof(dump) - 1) < 0) {
		fcntl(fd, F_SETFL, flags);
		return;
	}
	fcntl(fd, F_SETFL, flags);
	for (double end = now_monotonic() + 4; now_monotonic() < end;) {
		/* keep the channel drained so the guest never blocks writing to it */
		while (read(fd, sink, sizeof(sink)) > 0)
			;
		if (ctx->vm_ops->exited(vm, NULL))
			break;
		usleep(100 * 1000);
	}
}

static void cell_run_release(struct cell_run *cr)
{
	cell_state_release(&cr->st);
	free(cr->dir);
}

/* The module parameters' share of the kernel command line must stay well under x86's 2048
 * bytes with the rest of it (console, cell id, the matrix's vm.kernel_args). */
#define MODULE_CMDLINE_MAX 1024

char *run_module_cmdline(const json_t *module_params)
{
	char *line = xstrdup(" zbench.preload=zfs"), *next;
	const char *mod, *k;
	json_t *kv, *v;

	json_object_foreach ((json_t *)module_params, mod, kv) {
		json_object_foreach (kv, k, v) {
			char val[64];

			if (json_is_string(v))
				snprintf(val, sizeof(val), "%s", json_string_value(v));
			else if (json_is_integer(v))
				snprintf(val, sizeof(val), "%lld",
					 (long long)json_integer_value(v));
			else if (json_is_boolean(v))
				snprintf(val, sizeof(val), "%d", json_is_true(v));
			else if (json_is_real(v))
				snprintf(val, sizeof(val), "%g", json_real_value(v));
			else
				val[0] = '\0';
			/* no quoting: spaces, quotes, '=' and the like keep the old way */
			if (!val[0] ||
			    strspn(val, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					"0123456789_.,:+-/") != strlen(val) ||
			    (json_is_string(v) && strlen(json_string_value(v)) >= sizeof(val)))
				goto fallback;
			next = xasprintf("%s %s.%s=%s", line, mod, k, val);
			free(line);
			line = next;
			if (strlen(line) > MODULE_CMDLINE_MAX)
				goto fallback;
		}
	}
	return line;
fallback:
	free(line);
	return xstrdup("");
}

/* The deadlines of one attempt, in seconds (docs/protocol.md). */
struct deadlines {
	double probe;	  /* > 0: the KVM probe's, until the first console byte */
	double boot;	  /* until the agent's hello */
	double heartbeat; /* between messages, and between samples whose counters moved */
	double overall;	  /* the whole cell */
};

/* Whether one of the attempt's deadlines has passed; if so the verdict says which. */
static int deadline_passed(struct cell_run *cr, const struct deadlines *dl, double now)
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

/* The VM of one attempt: its kernel command line and resources from the cell's config. Returns
 * the command line spec->cmdline points to, for the caller to free. */
static char *cell_vm_spec(struct run_ctx *ctx, struct cell_run *cr, struct disk_set *ds,
			  const struct cloud_cell *cc, struct vm_spec *spec)
{
	json_t *cfg = cr->cell->config;
	json_t *vmc = json_object_get(cfg, "vm");
	const char *kargs = json_string_value(json_object_get(vmc, "kernel_args"));
	uint64_t memory = 1u << 30;
	char *mod_args, *cmdline;

	if (json_is_string(json_object_get(vmc, "memory")))
		units_parse_size(json_string_value(json_object_get(vmc, "memory")), &memory);
	mod_args = run_module_cmdline(json_object_get(cfg, "module_params"));
	memset(spec, 0, sizeof(*spec));
	cmdline = xasprintf("%s%sconsole=ttyS0 panic=-1 loglevel=4 zbench.cell=%s%s %s",
			    ctx->img.cmdline ? ctx->img.cmdline : "", ctx->img.cmdline ? " " : "",
			    cr->cell->id, mod_args, kargs ? kargs : "");
	spec->cmdline = cmdline;
	free(mod_args);
	spec->kernel = ctx->img.kernel;
	spec->initramfs = ctx->img.initramfs;
	spec->memory = memory;
	spec->cpus = json_is_integer(json_object_get(vmc, "cpus"))
			 ? (int)json_integer_value(json_object_get(vmc, "cpus"))
			 : 2;
	spec->accel = cr->accel;
	spec->dir = cr->dir;
	spec->disks = ds->disks;
	spec->ndisks = ds->n;
	spec->cpuset = ctx->cpuset[0] ? ctx->cpuset : NULL;
	spec->root_disk = cc ? cc->overlay : NULL;
	spec->seed = cc ? cc->seed : NULL;
	return cmdline;
}

/* Boot the VM for one attempt and drive it to the end. Returns < 0 only for host failures that
 * leave no verdict (err set); every guest-side failure is an outcome. */
static int cell_drive(struct run_ctx *ctx, struct cell_run *cr, struct disk_set *ds,
		      const struct cloud_cell *cc, double probe_s, struct zb_error *err)
{
	json_t *timeouts = json_object_get(cr->cell->config, "timeouts");
	json_t *wl = json_object_get(cr->cell->config, "workload");
	double runtime = json_duration(json_object_get(wl, "runtime"), 0) +
			 json_duration(json_object_get(wl, "ramp_time"), 0);
	struct deadlines dl = {
		.probe = probe_s,
		.boot = json_duration(json_object_get(timeouts, "boot"), 120),
		.heartbeat = json_duration(json_object_get(timeouts, "heartbeat"), 60),
	};
	struct cell_state *st = &cr->st;
	struct vm_spec spec;
	struct channel ch;
	struct console_watch cw;
	struct job_ctx jc;
	struct vm *vm = NULL;
	double t_exit_wait = 0, last_progress = 0;
	char last_phase[32] = "", *cmdline;
	int status, fatal;

	/* systemd and cloud-init come up before the agent on the cloud flavor (docs/images.md). */
	if (ctx->img.disk)
		dl.boot += CLOUD_BOOT_ALLOWANCE;
	dl.overall =
	    json_duration(json_object_get(timeouts, "overall"), dl.boot + 600 + 2 * runtime);
	cmdline = cell_vm_spec(ctx, cr, ds, cc, &spec);
	st->t_start = now_monotonic();
	if (ctx->vm_ops->start(&spec, &vm, err) < 0) {
		free(cmdline);
		return error_wrap(err, "starting the VM");
	}
	free(cmdline);
	if (ctx->vm_ops->pid)
		running_vm_pid = ctx->vm_ops->pid(vm);
	json_object_set_new(st->phases, "vm_started", json_real(now_monotonic() - st->t_start));
	channel_init(&ch, st, PROTO_MAX_PAYLOAD);
	jc = (struct job_ctx){ cr, vm, ctx->vm_ops, ds->disks, ds->n };
	ch.on_hello = send_job;
	ch.arg = &jc;
	ch.err = err;
	console_watch_init(&cw, cr->dir, st);

	while (!ctx->vm_ops->exited(vm, &status)) {
		struct pollfd pfd[2] = {
			{ ctx->vm_ops->channel_fd(vm), POLLIN, 0 },
			{ ctx->vm_ops->exit_fd(vm), POLLIN, 0 },
		};
		double now = now_monotonic();

		if (st->broken)
			break;
		if (interrupted) {
			cell_verdict(st, OUTCOME_INTERRUPTED, "stopped by signal %d",
				     (int)interrupted);
			break;
		}
		if (!cr->t_first_byte && ctx->vm_ops->console_bytes(vm) > 0)
			cr->t_first_byte = now;
		console_watch_check(&cw);
		if (deadline_passed(cr, &dl, now))
			break;
		/* After the result or an error, the guest powers itself off; give it a while. */
		if ((st->fio || st->error || st->outcome != OUTCOME_NONE) && !t_exit_wait)
			t_exit_wait = now;
		if (t_exit_wait && now - t_exit_wait > EXIT_GRACE_SECONDS)
			break;
		if (ctx->is_tty ? now - last_progress >= 1.0
				: (st->current_phase && strcmp(st->current_phase, last_phase))) {
			progress(ctx, cr, 0);
			last_progress = now;
			snprintf(last_phase, sizeof(last_phase), "%s",
				 st->current_phase ? st->current_phase : "");
		}

		if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, 250) < 0 && errno != EINTR) {
			error_sys(err, errno, "polling the VM");
			ch.fatal = 1;
			break;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP)) {
			char buf[65536];
			ssize_t r = read(pfd[0].fd, buf, sizeof(buf));

			if (r > 0) {
				if (!cr->t_first_byte)
					cr->t_first_byte = now_monotonic();
				if (channel_feed(&ch, buf, (size_t)r) < 0 && ch.fatal)
					break;
			} else if (r == 0 && !t_exit_wait) {
				/* The channel closed: QEMU is going away. */
				usleep(50 * 1000);
			}
		}
	}
	fatal = ch.fatal;
	channel_release(&ch);
	if (st->outcome == OUTCOME_TIMEOUT && st->said_hello && !ctx->vm_ops->exited(vm, NULL))
		capture_stacks(ctx, vm);
	ctx->vm_ops->stop(vm, 5);
	running_vm_pid = -1;
	json_object_set_new(st->phases, "vm_exit", json_real(now_monotonic() - st->t_start));
	ctx->vm_ops->free(vm);
	console_watch_finish(&cw);
	console_watch_release(&cw);
	return fatal ? -1 : 0;
}

static json_t *cell_record(struct run_ctx *ctx, struct cell_run *cr, const char *tail)
{
	const struct cell_state *st = &cr->st;
	json_t *rec = json_object();

	json_object_set_new(rec, "cell", json_string(cr->cell->id));
	json_object_set_new(rec, "index", json_integer(cr->cell->index));
	json_object_set_new(rec, "repeat", json_integer(cr->repeat));
	json_object_set_new(rec, "attempt", json_integer(cr->attempt));
	json_object_set_new(rec, "summary", json_string(cr->cell->summary));
	json_object_set_new(rec, "outcome", json_string(outcome_name(st->outcome)));
	if (st->detail)
		json_object_set_new(rec, "detail", json_string(st->detail));
	json_object_set_new(rec, "accel", json_string(cr->accel));
	json_object_set_new(rec, "backend", json_string(ctx->vm_ops->name));
	if (ctx->host_uri[0])
		json_object_set_new(rec, "host", json_string(ctx->host_uri));
	json_object_set_new(rec, "flavor", json_string(ctx->img.flavor));
	json_object_set_new(rec, "image", json_string(ctx->img.hash));
	json_object_set_new(rec, "config", json_incref(cr->cell->config));
	json_object_set_new(rec, "boot_first_output",
			    cr->t_first_byte ? json_real(cr->t_first_byte - st->t_start)
					     : json_null());
	json_object_set_new(rec, "wall_seconds", json_real(now_monotonic() - st->t_start));
	json_object_set_new(rec, "finished", json_real(now_wall()));
	cell_state_record(st, rec);
	if (st->fio)
		json_object_set_new(rec, "engine",
				    workload_engine_record(cr->cell->config, st->fio));
	if (st->outcome != OUTCOME_OK)
		json_object_set_new(rec, "console_tail", json_string(tail));
	json_object_set_new(rec, "dir", json_string(strrchr(cr->dir, '/') + 1));
	return rec;
}

/* Whether /dev/kvm can be opened read-write (whether guests actually run is another matter). */
static int kvm_openable(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static char *cell_dir_name(const struct cell *cell, int repeat, int attempt)
{
	if (attempt > 1)
		return xasprintf("%03d-%s-r%d-a%d", cell->index, cell->id, repeat, attempt);
	return xasprintf("%03d-%s-r%d", cell->index, cell->id, repeat);
}

/* Boot one attempt's VM (fresh disks, and the cloud flavor's seed) and drive it to its end,
 * trying KVM first where auto allows it. Fills *cr (the caller releases it); returns < 0 only
 * for a host failure (err set). */
static int attempt_boot(struct run_ctx *ctx, struct cell_run *cr, const struct cell *cell,
			int repeat, int attempt, struct zb_error *err)
{
	json_t *cfg = cell->config;
	const char *want =
	    ctx->accel_opt
		? ctx->accel_opt
		: json_string_value(json_object_get(json_object_get(cfg, "vm"), "accel"));
	struct disk_set ds;
	struct cloud_cell cc = { 0 };
	int probing, rc;

	if (!want)
		want = "auto";
	for (;;) {
		memset(cr, 0, sizeof(*cr));
		cr->cell = cell;
		cr->repeat = repeat;
		cr->attempt = attempt;
		cell_state_init(&cr->st);
		probing = 0;
		if (!strcmp(want, "auto")) {
			if (!ctx->accel[0] && kvm_openable()) {
				probing = 1;
				cr->accel = "kvm";
			} else {
				cr->accel = ctx->accel[0] ? ctx->accel : "tcg";
			}
		} else {
			cr->accel = want;
		}
		{
			char *name = cell_dir_name(cell, repeat, attempt);

			rc = results_cell_dir(&ctx->res, name, &cr->dir, err);
			free(name);
		}
		if (rc < 0)
			return -1;
		if (disk_set_create(&ds, cfg, cr->dir, err) < 0)
			return error_wrap(err, "cell %s", cell->id);
		rc = 0;
		if (ctx->img.disk &&
		    cloud_seed_create(&ctx->img, cell->id, cfg, cr->dir, &cc, err) < 0)
			rc = -1;
		if (rc == 0)
			rc = cell_drive(ctx, cr, &ds, ctx->img.disk ? &cc : NULL,
					probing ? KVM_PROBE_SECONDS : 0, err);
		if (!ctx->o->keep_disks || cr->st.outcome == OUTCOME_INTERRUPTED) {
			disk_set_remove(&ds);
			cloud_seed_remove(&cc);
		}
		disk_set_release(&ds);
		cloud_seed_release(&cc);
		if (rc < 0)
			return error_wrap(err, "cell %s", cell->id);
		if (probing && cr->st.outcome == OUTCOME_BOOT_FAIL && !cr->t_first_byte) {
			/* KVM opened but the guest never spoke: it does not work on this host
			 * (DESIGN.md field notes). Everything from here runs under TCG. */
			fprintf(stderr,
				"zbench: KVM opened but the guest printed nothing in %d s; "
				"using TCG for this run\n",
				KVM_PROBE_SECONDS);
			snprintf(ctx->accel, sizeof(ctx->accel), "tcg");
			remove_tree(cr->dir, err);
			cell_run_release(cr);
			continue;
		}
		if (probing || (!ctx->accel[0] && cr->st.said_hello))
			snprintf(ctx->accel, sizeof(ctx->accel), "%s", cr->accel);
		return 0;
	}
}

/* How the attempt ended, once the VM is gone: the console first (a panic or an OOM explains
 * everything), then what the channel brought. */
static void attempt_classify(struct cell_run *cr, const char *tail)
{
	struct cell_state *st = &cr->st;

	console_classify(st, tail);
	if (st->outcome != OUTCOME_NONE)
		return;
	if (st->fio)
		st->outcome = OUTCOME_OK;
	else if (!cr->t_first_byte)
		cell_verdict(st, OUTCOME_BOOT_FAIL, "the guest exited without any output");
	else
		cell_verdict(st, OUTCOME_AGENT_ERROR,
			     "the guest stopped without a result or an error (last step '%s')",
			     st->current_phase ? st->current_phase : "boot");
}

/* One attempt at one cell: fresh disks, a VM, the verdict, one record. *outcome gets the
 * verdict (OUTCOME_INTERRUPTED attempts leave no record). */
static int run_attempt(struct run_ctx *ctx, const struct cell *cell, int repeat, int attempt,
		       enum cell_outcome *outcome, struct zb_error *err)
{
	struct cell_run cr;
	json_t *rec;
	char *tail;
	int rc;

	if (attempt_boot(ctx, &cr, cell, repeat, attempt, err) < 0) {
		cell_run_release(&cr);
		return -1;
	}
	if (cr.st.outcome == OUTCOME_INTERRUPTED) {
		/* Not a verdict on the cell: nothing is recorded and --resume runs it again. */
		*outcome = OUTCOME_INTERRUPTED;
		cell_run_release(&cr);
		return 0;
	}
	tail = console_tail(cr.dir);
	attempt_classify(&cr, tail);
	rec = cell_record(ctx, &cr, tail);
	free(tail);
	rc = results_append(&ctx->res, rec, err);
	json_decref(rec);
	progress(ctx, &cr, 1);
	*outcome = cr.st.outcome;
	cell_run_release(&cr);
	return rc;
}

/* Every attempt the matrix allows at one (cell, repeat), starting at `attempt`. */
static int run_cell(struct run_ctx *ctx, const struct cell *cell, int repeat, int attempt,
		    struct zb_error *err)
{
	enum cell_outcome outcome = OUTCOME_NONE;

	for (; attempt <= 1 + ctx->m_retries; attempt++) {
		if (run_attempt(ctx, cell, repeat, attempt, &outcome, err) < 0)
			return -1;
		if (outcome == OUTCOME_OK || outcome == OUTCOME_INTERRUPTED)
			break;
		if (attempt <= ctx->m_retries)
			fprintf(stderr, "zbench: cell %s ended %s; retrying (attempt %d of %d)\n",
				TERM(cell->id), outcome_name(outcome), attempt + 1,
				1 + ctx->m_retries);
	}
	if (outcome == OUTCOME_OK)
		ctx->ok++;
	if (outcome != OUTCOME_INTERRUPTED)
		ctx->done++;
	return 0;
}

/* ---- the run ------------------------------------------------------------------------------- */

static char *qemu_version(void)
{
	char *const argv[] = { "qemu-system-x86_64", "--version", NULL };
	char *out = NULL;
	struct zb_error e;

	if (run_capture(argv, "/dev/null", 4096, &out, &e) != 0) {
		free(out);
		return xstrdup("unknown");
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

static json_t *host_info(void)
{
	struct utsname u;
	char *qv = qemu_version();
	json_t *h;

	uname(&u);
	h = json_pack("{s:s, s:s, s:s, s:s, s:i, s:b}", "hostname", u.nodename, "kernel", u.release,
		      "machine", u.machine, "qemu", qv, "cpus", (int)sysconf(_SC_NPROCESSORS_ONLN),
		      "kvm_openable", kvm_openable());
	free(qv);
	return h;
}

static char *default_run_dir(const char *name)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	return xasprintf("runs/%s-%s", name, ts);
}

/* Kill what a killed zbench left in RUNDIR: QEMU processes whose command line names a file
 * under RUNDIR/cells/ (their own process group outlived us), and disk images. */
static void cleanup_leftovers(struct results *res)
{
	const char *run_dir = res->dir;
	char *cells = xasprintf("%s/cells/", run_dir);
	char *abs = realpath(run_dir, NULL);
	char *abs_cells = abs ? xasprintf("%s/cells/", abs) : xstrdup(cells);
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int killed = 0, removed = 0;

	while (proc && (de = readdir(proc))) {
		char path[64], buf[8192];
		ssize_t n;
		int fd;
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (ssize_t k = 0; k < n; k++)
			if (buf[k] == '\0')
				buf[k] = ' ';
		if (strstr(buf, "qemu-system") && (strstr(buf, abs_cells) || strstr(buf, cells))) {
			kill(pid, SIGKILL);
			killed++;
		}
	}
	if (proc)
		closedir(proc);
	removed = results_remove_leftovers(res);
	if (killed || removed)
		fprintf(stderr,
			"zbench: resume: stopped %d QEMU process%s and removed %d disk "
			"image%s left by the interrupted run\n",
			killed, killed == 1 ? "" : "es", removed, removed == 1 ? "" : "s");
	/* give the kernel a moment to reap the killed processes' file locks */
	if (killed)
		usleep(200 * 1000);
	free(cells);
	free(abs);
	free(abs_cells);
}

/* What the run directory already holds: per (cell id, repeat), the last attempt and whether
 * it settled the cell (ok, or no retries left). */
struct done_map {
	json_t *last; /* "id/repeat" -> {"attempt": n, "outcome": s} */
};

static int done_map_load(struct done_map *dm, const char *dir, struct zb_error *err)
{
	struct results_skipped skipped = { 0 };
	json_t *cells, *rec;
	size_t i;

	if (results_read_cells(dir, &cells, &skipped, err) < 0)
		return -1;
	results_skipped_print(&skipped, stderr);
	results_skipped_release(&skipped);
	dm->last = json_object();
	json_array_foreach (cells, i, rec) {
		const char *id = json_string_value(json_object_get(rec, "cell"));
		const char *outcome = json_string_value(json_object_get(rec, "outcome"));
		json_int_t repeat = json_integer_value(json_object_get(rec, "repeat"));
		json_int_t attempt = json_integer_value(json_object_get(rec, "attempt"));
		char key[64];
		json_t *prev;

		if (!id || !outcome)
			continue;
		snprintf(key, sizeof(key), "%.20s/%lld", id, (long long)repeat);
		prev = json_object_get(dm->last, key);
		if (prev && json_integer_value(json_object_get(prev, "attempt")) >= attempt)
			continue;
		json_object_set_new(
		    dm->last, key, json_pack("{s:I, s:s}", "attempt", attempt, "outcome", outcome));
	}
	json_decref(cells);
	return 0;
}

/* The attempt to start (cell, repeat) with, or 0 if it is settled. */
static int done_map_next(struct done_map *dm, const struct cell *cell, int repeat, int retries,
			 int *ok)
{
	char key[64];
	json_t *prev;
	int attempt;
	const char *outcome;

	*ok = 0;
	if (!dm->last)
		return 1;
	snprintf(key, sizeof(key), "%.20s/%d", cell->id, repeat);
	prev = json_object_get(dm->last, key);
	if (!prev)
		return 1;
	attempt = (int)json_integer_value(json_object_get(prev, "attempt"));
	outcome = json_string_value(json_object_get(prev, "outcome"));
	if (!strcmp(outcome, "ok")) {
		*ok = 1;
		return 0;
	}
	return attempt >= 1 + retries ? 0 : attempt + 1;
}

/* The order of the cells in repeat r: shuffled (the default) so slow drift of the host spreads
 * over every cell instead of biasing the last ones, deterministically (seeded by the matrix's
 * "seed", else by its hash) so a rerun or a resume sees the same order. */
static void cell_order(struct run_ctx *ctx, int r, size_t *order)
{
	const char *how = json_string_value(json_object_get(ctx->m->json, "order"));
	json_t *seed = json_object_get(ctx->m->json, "seed");
	uint64_t x = json_is_integer(seed) ? (uint64_t)json_integer_value(seed)
					   : strtoull(ctx->m->sha256 + 48, NULL, 16);
	size_t n = ctx->m->n_cells;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	if (how && !strcmp(how, "sequential"))
		return;
	x ^= (uint64_t)(r + 1) * 0x9e3779b97f4a7c15ULL;
	for (size_t i = n; i > 1; i--) {
		/* splitmix64 */
		uint64_t z = (x += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		size_t j = (size_t)(z % i);
		size_t t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
}

/* The shard (0-based) a cell belongs to: from its id, so it does not depend on the order or
 * number of cells, and a resumed or repeated run slices the same way. */
static int cell_shard(const struct cell *cell, int count)
{
	return (int)(strtoull(cell->id + 8, NULL, 16) % (unsigned long long)count);
}

static int run_or_skip(struct run_ctx *ctx, struct done_map *dm, const struct cell *cell, int r,
		       struct zb_error *err)
{
	int ok, attempt;

	if (ctx->shard_count > 1 && cell_shard(cell, ctx->shard_count) != ctx->shard_index - 1)
		return 0;
	attempt = done_map_next(dm, cell, r, ctx->m_retries, &ok);
	if (attempt == 0) {
		ctx->done++;
		ctx->ok += ok;
		return 0;
	}
	return run_cell(ctx, cell, r, attempt, err);
}

/* Adaptive repeats: after the fixed ones, repeat each cell whose metric's coefficient of
 * variation over its ok records is still above the threshold, one round at a time, until every
 * cell is settled or has max_repeats. */
static int run_adaptive(struct run_ctx *ctx, struct done_map *dm, size_t *order,
			struct zb_error *err)
{
	json_t *ad = json_object_get(ctx->m->json, "adaptive");
	const char *metric = json_string_value(json_object_get(ad, "metric"));
	json_t *cvj = json_object_get(ad, "cv_percent");
	json_t *maxj = json_object_get(ad, "max_repeats");
	double limit = json_is_number(cvj) ? json_number_value(cvj) : 3.5;
	int max = json_is_integer(maxj) ? (int)json_integer_value(maxj) : 10;

	for (int r = ctx->m->repeats; r < max && !interrupted; r++) {
		json_t *records;
		int wanted = 0;

		/* lines it cannot read were named when the run was resumed or will be at its end */
		if (results_read_cells(ctx->res.dir, &records, NULL, err) < 0)
			return -1;
		cell_order(ctx, r, order);
		for (size_t k = 0; k < ctx->m->n_cells && !interrupted; k++) {
			const struct cell *cell = &ctx->m->cells[order[k]];
			double *v = xcalloc(json_array_size(records) + 1, sizeof(*v));
			struct stats_summary st;
			size_t i, n = 0;
			json_t *rec;

			json_array_foreach (records, i, rec) {
				const char *id = json_string_value(json_object_get(rec, "cell"));
				const char *oc = json_string_value(json_object_get(rec, "outcome"));
				double x;

				if (!id || strcmp(id, cell->id) || !oc || strcmp(oc, "ok"))
					continue;
				x = results_fio_metric(json_object_get(rec, "fio"), metric);
				if (!isnan(x))
					v[n++] = x;
			}
			stats_summarize(v, n, &st);
			free(v);
			if (n >= 2 && !isnan(st.cv) && st.cv * 100 <= limit)
				continue;
			wanted++;
			ctx->ncells_total++;
			fprintf(stderr,
				"zbench: adaptive: cell %s has CV %.1f%% of %s over %zu runs "
				"(limit %g%%): repeat %d\n",
				TERM(cell->id), isnan(st.cv) ? 100.0 : st.cv * 100, TERM(metric), n,
				limit, r + 1);
			if (run_or_skip(ctx, dm, cell, r, err) < 0) {
				json_decref(records);
				return -1;
			}
		}
		json_decref(records);
		if (!wanted)
			break;
	}
	return 0;
}

/* Parallel cells only measure what they claim if they cannot disturb each other's disks: every
 * disk must be throttled (a disk model with limits), unless the user says otherwise. */
static int check_interference(struct run_ctx *ctx, const char *what, struct zb_error *err)
{
	for (size_t i = 0; i < ctx->m->n_cells; i++) {
		json_t *disks = json_object_get(ctx->m->cells[i].config, "disks");
		size_t k;
		json_t *d;

		json_array_foreach (disks, k, d) {
			if (!json_is_object(json_object_get(d, "throttle")))
				return error_set(
				    err, EINVAL,
				    "%s: disk '%s' of cell %s is not throttled, so "
				    "parallel cells would disturb each other's numbers; use "
				    "a throttled disk model, or --allow-interference",
				    what, json_string_value(json_object_get(d, "name")),
				    ctx->m->cells[i].id);
		}
	}
	return 0;
}

/* Every passthrough device of every cell, before anything is created (disk_check_devices()):
 * where the cells run (a remote host: none at all) and whether they run at once. */
static int check_devices(struct run_ctx *ctx, struct zb_error *err)
{
	struct disk_run_plan plan = { .repeats = ctx->m->repeats };
	int nhosts = ctx->nhosts ? ctx->nhosts : ctx->uri ? 1 : 0, slots = 0;
	char why[32];

	for (int h = 0; h < nhosts; h++) {
		if (ctx->hosts[h].parsed.remote && !plan.remote_uri)
			plan.remote_uri = ctx->hosts[h].uri;
		slots += ctx->nhosts ? ctx->hosts[h].slots : 1;
	}
	snprintf(why, sizeof(why), "-j %d", ctx->o->jobs);
	if (ctx->o->jobs > 1)
		plan.parallel = why;
	else if (slots > 1)
		plan.parallel = "--hosts";
	return disk_check_devices(ctx->m->cells, ctx->m->n_cells, &plan, err);
}

/* Connect this process to where its VMs run, if the backend connects (libvirt): `uri` NULL
 * is the backend's default. A host shared by `slots` workers gives each its own share of the
 * host's CPUs (slot 0..slots-1) for its VMs' vCPUs. */
static int connect_host(struct run_ctx *ctx, const char *uri, int slots, int slot,
			struct zb_error *err)
{
	struct vm_host h = { 0 };

	if (!ctx->vm_ops->connect || ctx->host_uri[0])
		return 0;
	if (ctx->vm_ops->connect(uri, ctx->res.dir, &h, err) < 0)
		return -1;
	snprintf(ctx->host_uri, sizeof(ctx->host_uri), "%s", h.uri);
	if (slots > 1 && h.cpus >= slots) {
		int per = h.cpus / slots;

		if (per == 1)
			snprintf(ctx->cpuset, sizeof(ctx->cpuset), "%d", slot);
		else
			snprintf(ctx->cpuset, sizeof(ctx->cpuset), "%d-%d", slot * per,
				 slot * per + per - 1);
	}
	return 0;
}

/* What a worker tells the parent once it has connected (or failed to): one write, shorter than
 * PIPE_BUF, so the workers' reports never interleave. */
struct worker_status {
	int32_t worker, ok;
	char msg[1024];
};

/* The backend, and for libvirt where it connects, from (first wins) the run being resumed, the
 * command line, $ZBENCH_LIBVIRT_URI, the matrix ("backend", "libvirt_uri"), the defaults.
 * --hosts and --libvirt-uri imply libvirt. Every URI is checked here, before anything is created:
 * an unknown scheme, N=0, or another machine whose QEMU could not see our files is refused now. */
static int choose_backend(struct run_ctx *ctx, struct zb_error *err)
{
	const struct run_options *o = ctx->o;
	json_t *man = o->resume_dir ? ctx->res.manifest : NULL;
	json_t *opts = json_object_get(man, "options");
	const char *name = json_string_value(json_object_get(man, "backend"));
	const char *hosts = o->hosts, *uri = o->libvirt_uri;
	int shared = o->shared_paths || json_is_true(json_object_get(opts, "shared_paths"));
	/* a URI from a manifest or a matrix may not choose a connection that runs a program */
	enum libvirt_uri_source src = LIBVIRT_URI_COMMAND_LINE;

	if (man && !hosts && !uri) {
		hosts = json_string_value(json_object_get(opts, "hosts"));
		uri = json_string_value(json_object_get(opts, "libvirt_uri"));
		src = LIBVIRT_URI_FILE;
	}
	if (!name && (o->hosts || o->libvirt_uri) && o->backend &&
	    !vm_backend_has(o->backend, VM_CAP_HOSTS))
		return error_set(err, EINVAL, "%s is for the libvirt backend, not --backend %s",
				 o->hosts ? "--hosts" : "--libvirt-uri", o->backend);
	if (!name)
		name = o->backend;
	if (!name && (hosts || o->libvirt_uri))
		name = "libvirt";
	if (!name)
		name = json_string_value(json_object_get(ctx->m->json, "backend"));
	if (!name)
		name = "qemu";
	ctx->vm_ops = vm_backend(name);
	if (!ctx->vm_ops)
		return error_set(err, EINVAL, "unknown backend '%s' (qemu or libvirt)", name);
	if (vm_ops_check(ctx->vm_ops, err) < 0)
		return -1;
	if (!(ctx->vm_ops->caps & VM_CAP_HOSTS)) {
		if (hosts)
			return error_set(err, EINVAL,
					 "--hosts places cells on libvirt hosts, but run '%s' "
					 "used the %s backend",
					 o->resume_dir, name);
		return 0;
	}
	if (hosts && o->jobs > 1)
		return error_set(err, EINVAL,
				 "--hosts and -j %d: say how many cells run at once on each "
				 "host with URI=N",
				 o->jobs);
	if (hosts && o->libvirt_uri)
		return error_set(err, EINVAL,
				 "--hosts and --libvirt-uri: the hosts' URIs are the connections");
	if (!hosts && !uri && getenv("ZBENCH_LIBVIRT_URI") && *getenv("ZBENCH_LIBVIRT_URI")) {
		uri = getenv("ZBENCH_LIBVIRT_URI");
		src = LIBVIRT_URI_COMMAND_LINE;
	}
	if (!hosts && !uri) {
		uri = json_string_value(json_object_get(ctx->m->json, "libvirt_uri"));
		src = LIBVIRT_URI_FILE;
	}
	if (hosts) {
		ctx->nhosts = libvirt_hosts_parse(hosts, src, &ctx->hosts, err);
		if (ctx->nhosts < 0) {
			ctx->nhosts = 0;
			return src == LIBVIRT_URI_FILE ? error_wrap(err, "run '%s'", o->resume_dir)
						       : -1;
		}
	} else if (uri) {
		ctx->hosts = xcalloc(1, sizeof(*ctx->hosts));
		snprintf(ctx->hosts[0].uri, sizeof(ctx->hosts[0].uri), "%s", uri);
		if (libvirt_uri_check(uri, src, &ctx->hosts[0].parsed, err->msg, sizeof(err->msg)) <
		    0)
			return -1;
		ctx->uri = ctx->hosts[0].uri;
	}
	for (int h = 0; h < (ctx->nhosts ? ctx->nhosts : ctx->uri ? 1 : 0); h++) {
		if (ctx->hosts[h].parsed.remote && !shared)
			return error_set(
			    err, EINVAL,
			    "'%s' is another machine: its QEMU opens the kernel, the initramfs and "
			    "the disk images at this machine's paths (the image cache and the run "
			    "directory); mount both at the same paths there and pass "
			    "--shared-paths "
			    "(docs/scale-out.md)",
			    ctx->hosts[h].uri);
	}
	return 0;
}

/* -j N: N worker processes take (cell, repeat) tasks from a pipe, each pinned to its own host
 * cores (QEMU inherits the affinity), each appending its records to cells.jsonl (one write()
 * per record with O_APPEND: lines never interleave). The parent only hands out work, forwards
 * a stop signal and counts the results at the end. --hosts: the same, one worker per slot of
 * each host, connected to that host; a worker takes its next cell when its last one is done,
 * so faster hosts run more cells. */
static int run_parallel(struct run_ctx *ctx, struct done_map *dm, size_t *order,
			struct zb_error *err)
{
	int jobs = ctx->o->jobs, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int cpus_per, fds[2], sfds[2], failed = 0, forwarded = 0, reported = 0, refused = 0;
	pid_t *pids;
	struct done_map final = { 0 };
	struct worker_status ws;

	if (ctx->nhosts) {
		/* one worker per slot: (host 0, slot 0), (host 0, slot 1), ..., (host 1, slot 0) */
		jobs = 0;
		for (int h = 0; h < ctx->nhosts; h++)
			jobs += ctx->hosts[h].slots;
	}
	cpus_per = ncpu / jobs > 0 ? ncpu / jobs : 1;
	pids = xcalloc((size_t)jobs, sizeof(*pids));
	if (pipe(fds) < 0) {
		free(pids);
		return error_sys(err, errno, "creating the task pipe");
	}
	if (pipe(sfds) < 0) {
		close(fds[0]);
		close(fds[1]);
		free(pids);
		return error_sys(err, errno, "creating the status pipe");
	}
	ctx->is_tty = 0; /* several progress lines at once: one line per event */
	fflush(NULL);
	for (int w = 0; w < jobs; w++) {
		pids[w] = fork();
		if (pids[w] < 0) {
			error_sys(err, errno, "forking worker %d", w);
			jobs = w;
			break;
		}
		if (pids[w] == 0) {
			cpu_set_t set;
			int32_t task[2];
			const char *uri = ctx->uri;
			int slots = 1, slot = 0;

			close(fds[1]);
			close(sfds[0]);
			if (ctx->nhosts) {
				/* QEMU runs on the worker's host, which shares out its own CPUs
				 * (connect_host); the worker itself only waits. */
				int h = 0;

				for (slot = w; slot >= ctx->hosts[h].slots; h++)
					slot -= ctx->hosts[h].slots;
				uri = ctx->hosts[h].uri;
				slots = ctx->hosts[h].slots;
			} else {
				CPU_ZERO(&set);
				for (int c = 0; c < cpus_per; c++)
					CPU_SET((w * cpus_per + c) % ncpu, &set);
				sched_setaffinity(0, sizeof(set), &set);
			}
			/* Connected before any task: a host that cannot be reached stops the
			 * run before any cell runs (the parent waits for every report). */
			memset(&ws, 0, sizeof(ws));
			ws.worker = w;
			ws.ok = connect_host(ctx, uri, slots, slot, err) == 0;
			if (!ws.ok)
				snprintf(ws.msg, sizeof(ws.msg), "%.1000s", err->msg);
			if (write(sfds[1], &ws, sizeof(ws)) != sizeof(ws) || !ws.ok)
				_exit(0);
			close(sfds[1]);
			while (!interrupted && read(fds[0], task, sizeof(task)) == sizeof(task)) {
				if (run_or_skip(ctx, dm, &ctx->m->cells[task[0]], task[1], err) <
				    0) {
					die_message(err->msg);
					_exit(2);
				}
			}
			_exit(interrupted ? 130 : 0);
		}
	}
	close(fds[0]);
	close(sfds[1]);
	/* Every worker connected, or nothing runs. */
	while (reported < jobs) {
		ssize_t n = read(sfds[0], &ws, sizeof(ws));

		if (n < 0 && errno == EINTR && !interrupted)
			continue;
		if (n != sizeof(ws))
			break;
		reported++;
		if (!ws.ok && !refused++)
			error_set(err, EHOSTUNREACH, "%s", ws.msg);
	}
	close(sfds[0]);
	if (!refused && reported < jobs && !interrupted) {
		refused = 1;
		error_set(err, EIO, "%d of %d workers did not start", jobs - reported, jobs);
	}
	for (int r = 0; r < ctx->m->repeats && !interrupted && !refused && jobs > 0; r++) {
		cell_order(ctx, r, order);
		for (size_t k = 0; k < ctx->m->n_cells && !interrupted; k++) {
			int32_t task[2] = { (int32_t)order[k], r };

			if (write(fds[1], task, sizeof(task)) != sizeof(task) && errno != EINTR)
				break;
		}
	}
	close(fds[1]);
	for (int w = 0; w < jobs; w++) {
		int status;

		while (waitpid(pids[w], &status, 0) < 0) {
			if (errno != EINTR)
				break;
			if (interrupted && !forwarded) {
				/* a SIGTERM to zbench alone must reach the workers too */
				for (int v = 0; v < jobs; v++)
					kill(pids[v], SIGTERM);
				forwarded = 1;
			}
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
			failed++;
	}
	free(pids);
	if (refused)
		return refused > 1
			   ? error_wrap(err, "%d of %d workers could not connect; the first",
					refused, jobs)
			   : -1;
	/* The counts come from what the workers recorded. */
	if (done_map_load(&final, ctx->res.dir, err) < 0)
		return -1;
	ctx->done = ctx->ok = 0;
	{
		const char *key;
		json_t *v;

		json_object_foreach (final.last, key, v) {
			ctx->done++;
			ctx->ok += !strcmp(json_string_value(json_object_get(v, "outcome")), "ok");
		}
	}
	json_decref(final.last);
	if (failed)
		return error_set(err, EIO, "%d worker%s failed (see above)", failed,
				 failed == 1 ? "" : "s");
	return 0;
}

int run_matrix(const struct run_options *o, struct zb_error *err)
{
	struct run_ctx ctx = { .o = o };
	struct sigaction sa = { .sa_handler = on_signal };
	struct done_map dm = { 0 };
	const char *matrix_path = o->matrix_path, *recipe = o->recipe_path;
	/* the recipe as the command line or the matrix named it (the manifest's record: a replay
	 * on another machine finds it in its own repository), where `recipe` is where it was found
	 */
	const char *recipe_named = NULL;
	char *dir = NULL, *matrix_text = NULL, *matrix_recipe = NULL;
	size_t *order = NULL;
	int rc = -1, lock_fd = -1;

	ctx.is_tty = isatty(2);

	if (o->resume_dir) {
		json_t *mm;

		dir = xstrdup(o->resume_dir);
		if (results_open(&ctx.res, dir, err) < 0)
			goto out;
		mm = json_object_get(ctx.res.manifest, "matrix");
		matrix_path = json_string_value(json_object_get(mm, "path"));
		recipe = json_string_value(
		    json_object_get(json_object_get(ctx.res.manifest, "image"), "recipe"));
		if (!matrix_path || !recipe || !json_object_get(mm, "content")) {
			error_set(err, EINVAL, "'%s/manifest.json' lacks the matrix or image", dir);
			goto out;
		}
		/* The matrix as it was when the run started, not as the file is now. */
		matrix_text = json_dumps(json_object_get(mm, "content"), JSON_INDENT(2));
		if (matrix_load_buffer(matrix_path, matrix_text, strlen(matrix_text), &ctx.m, err) <
		    0)
			goto out;
	} else if (o->matrix_text) {
		if (matrix_load_buffer(matrix_path, o->matrix_text, strlen(o->matrix_text), &ctx.m,
				       err) < 0)
			goto out;
	} else if (matrix_load(matrix_path, &ctx.m, err) < 0) {
		goto out;
	}
	ctx.m_retries = (int)json_integer_value(json_object_get(ctx.m->json, "retries"));
	/* before anything is created: a refused backend, host or -j leaves nothing behind */
	if (choose_backend(&ctx, err) < 0 || check_devices(&ctx, err) < 0)
		goto out;
	if (o->jobs > 1 && !o->allow_interference) {
		char what[32];

		snprintf(what, sizeof(what), "-j %d", o->jobs);
		if (check_interference(&ctx, what, err) < 0)
			goto out;
	}
	for (int h = 0; h < ctx.nhosts && !o->allow_interference; h++) {
		if (ctx.hosts[h].slots > 1) {
			char *what =
			    xasprintf("--hosts '%s=%d'", ctx.hosts[h].uri, ctx.hosts[h].slots);

			rc = check_interference(&ctx, what, err);
			free(what);
			if (rc < 0)
				goto out;
		}
	}
	ctx.accel_opt = o->accel;
	ctx.shard_index = o->shard_index;
	ctx.shard_count = o->shard_count;
	if (o->resume_dir) {
		json_t *sh = json_object_get(ctx.res.manifest, "shard");

		ctx.shard_index = (int)json_integer_value(json_object_get(sh, "index"));
		ctx.shard_count = (int)json_integer_value(json_object_get(sh, "count"));
	}
	if (!ctx.accel_opt && o->resume_dir)
		ctx.accel_opt = json_string_value(
		    json_object_get(json_object_get(ctx.res.manifest, "options"), "accel"));
	if (!recipe) {
		const char *named = json_string_value(json_object_get(ctx.m->json, "image"));

		recipe = named ? (matrix_recipe = image_recipe_locate(named, matrix_path))
			       : RUN_DEFAULT_RECIPE;
		recipe_named = named;
	}
	if (image_resolve(recipe, o->cache_dir, 1, &ctx.img, err) < 0) {
		error_wrap(err, "image '%s'", recipe);
		goto out;
	}
	if (ctx.img.disk && !(ctx.vm_ops->caps & VM_CAP_CLOUD_DISK)) {
		error_set(err, EINVAL,
			  "image '%s' is a cloud image (a qcow2 disk): only the qemu backend boots "
			  "those so far, not '%s'",
			  recipe, ctx.vm_ops->name);
		goto out;
	}
	if (o->replay_image_hash && strcmp(o->replay_image_hash, ctx.img.hash))
		fprintf(stderr,
			"zbench: note: the image is %.12s, the run used %.12s (the recipe or the "
			"guest binaries changed since)\n",
			TERM(ctx.img.hash), TERM(o->replay_image_hash));
	/* Every cell's disks on buses the image's kernel drives, before anything boots. */
	for (size_t k = 0; k < ctx.m->n_cells; k++) {
		if (disk_check_image(ctx.m->cells[k].config, &ctx.img, recipe, o->cache_dir, err) <
		    0)
			goto out;
	}
	if (workload_engine_check_image(ctx.m->cells, ctx.m->n_cells, &ctx.img, recipe, err) < 0)
		goto out;

	if (o->resume_dir) {
		const char *was = json_string_value(
		    json_object_get(json_object_get(ctx.res.manifest, "image"), "hash"));
		json_t *resumed;

		if (!was || strcmp(was, ctx.img.hash)) {
			error_set(err, EINVAL,
				  "the image changed since the run started (%.12s, now %.12s): its "
				  "cells would mix two images; start a new run instead",
				  was ? was : "?", ctx.img.hash);
			goto out;
		}
		lock_fd = results_lock(&ctx.res, err);
		if (lock_fd < 0)
			goto out;
		cleanup_leftovers(&ctx.res);
		if (done_map_load(&dm, dir, err) < 0)
			goto out;
		resumed = json_object_get(ctx.res.manifest, "resumed");
		if (!json_is_array(resumed)) {
			resumed = json_array();
			json_object_set_new(ctx.res.manifest, "resumed", resumed);
		}
		json_array_append_new(resumed, json_real(now_wall()));
		json_object_set_new(ctx.res.manifest, "status", json_string("running"));
	} else {
		dir = o->out_dir ? xstrdup(o->out_dir) : default_run_dir(ctx.m->name);
		if (results_create(&ctx.res, dir, err) < 0)
			goto out;
		lock_fd = results_lock(&ctx.res, err);
		if (lock_fd < 0)
			goto out;
		json_object_set_new(ctx.res.manifest, "zbench", json_string(ZBENCH_VERSION));
		json_object_set_new(ctx.res.manifest, "status", json_string("running"));
		json_object_set_new(ctx.res.manifest, "started", json_real(now_wall()));
		json_object_set_new(ctx.res.manifest, "host", host_info());
		json_object_set_new(ctx.res.manifest, "backend", json_string(ctx.vm_ops->name));
		json_object_set_new(ctx.res.manifest, "flavor", json_string(ctx.img.flavor));
		json_object_set_new(ctx.res.manifest, "options",
				    json_pack("{s:s?, s:b, s:s?, s:s?, s:b}", "accel", o->accel,
					      "keep_disks", o->keep_disks, "libvirt_uri", ctx.uri,
					      "hosts", o->hosts, "shared_paths", o->shared_paths));
		if (ctx.nhosts) {
			json_t *hosts = json_array();

			for (int h = 0; h < ctx.nhosts; h++)
				json_array_append_new(hosts, json_pack("{s:s, s:i}", "uri",
								       ctx.hosts[h].uri, "slots",
								       ctx.hosts[h].slots));
			json_object_set_new(ctx.res.manifest, "hosts", hosts);
		}
		if (o->shard_count > 1)
			json_object_set_new(ctx.res.manifest, "shard",
					    json_pack("{s:i, s:i}", "index", o->shard_index,
						      "count", o->shard_count));
		json_object_set_new(ctx.res.manifest, "matrix",
				    json_pack("{s:s, s:s, s:O}", "path", matrix_path, "sha256",
					      o->matrix_sha256 ? o->matrix_sha256 : ctx.m->sha256,
					      "content", ctx.m->json));
		json_object_set_new(ctx.res.manifest, "image",
				    json_pack("{s:s, s:s, s:O}", "recipe",
					      recipe_named ? recipe_named : recipe, "hash",
					      ctx.img.hash, "manifest", ctx.img.manifest));
	}
	if (results_write_manifest(&ctx.res, err) < 0)
		goto out;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ctx.ncells_total = 0;
	for (size_t i = 0; i < ctx.m->n_cells; i++)
		if (ctx.shard_count < 2 ||
		    cell_shard(&ctx.m->cells[i], ctx.shard_count) == ctx.shard_index - 1)
			ctx.ncells_total += ctx.m->repeats;
	fprintf(stderr, "zbench: %s '%s': %d cells x %d repeats in %s\n",
		o->resume_dir ? "resuming" : "running", TERM(ctx.m->name), (int)ctx.m->n_cells,
		ctx.m->repeats, TERM(dir));
	order = xcalloc(ctx.m->n_cells, sizeof(*order));
	if (o->jobs > 1 || ctx.nhosts) {
		if (run_parallel(&ctx, &dm, order, err) < 0)
			goto out;
	} else {
		if (connect_host(&ctx, ctx.uri, 1, 0, err) < 0)
			goto out;
		for (int r = 0; r < ctx.m->repeats && !interrupted; r++) {
			cell_order(&ctx, r, order);
			for (size_t k = 0; k < ctx.m->n_cells && !interrupted; k++) {
				if (run_or_skip(&ctx, &dm, &ctx.m->cells[order[k]], r, err) < 0)
					goto out;
			}
		}
	}
	/* Adaptive repeats run here, one at a time: after --hosts on the first host. */
	if (json_is_object(json_object_get(ctx.m->json, "adaptive")) &&
	    (connect_host(&ctx, ctx.nhosts ? ctx.hosts[0].uri : ctx.uri, 1, 0, err) < 0 ||
	     run_adaptive(&ctx, &dm, order, err) < 0))
		goto out;
	json_object_set_new(ctx.res.manifest, "status",
			    json_string(interrupted ? "interrupted" : "complete"));
	json_object_set_new(ctx.res.manifest, "finished", json_real(now_wall()));
	if (ctx.accel[0])
		json_object_set_new(ctx.res.manifest, "accel", json_string(ctx.accel));
	json_object_set_new(ctx.res.manifest, "cells_ok", json_integer(ctx.ok));
	json_object_set_new(ctx.res.manifest, "cells_done", json_integer(ctx.done));
	if (results_write_manifest(&ctx.res, err) < 0)
		goto out;
	if (interrupted)
		fprintf(stderr,
			"zbench: interrupted after %d of %d cells; `zbench run --resume %s` "
			"finishes the run\n",
			ctx.done, ctx.ncells_total, TERM(dir));
	else
		fprintf(stderr, "zbench: %d of %d cells ok; results in %s/cells.jsonl\n", ctx.ok,
			ctx.ncells_total, TERM(dir));
	printf("%s\n", dir);
	rc = interrupted ? 130 : (ctx.ok == ctx.ncells_total ? 0 : 1);
out:
	if (rc < 0 && ctx.res.dir && ctx.res.manifest) {
		json_object_set_new(ctx.res.manifest, "status", json_string("failed"));
		json_object_set_new(ctx.res.manifest, "error", json_string(err->msg));
		results_write_manifest(&ctx.res, &(struct zb_error){ 0 });
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (lock_fd >= 0)
		close(lock_fd);
	json_decref(dm.last);
	results_release(&ctx.res);
	image_release(&ctx.img);
	matrix_free(ctx.m);
	free(matrix_text);
	free(matrix_recipe);
	free(order);
	free(dir);
	free(ctx.hosts);
	return rc;
}
