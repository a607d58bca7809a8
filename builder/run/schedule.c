/* Which cells run where and when (schedule.h). */
#include "schedule.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cell.h"
#include "core/error.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/term.h"
#include "core/util.h"
#include "devices.h"
#include "matrix/metrics.h"
#include "progress.h"
#include "rundir.h"
#include "vm/disk.h"

/* ---- where: backend, hosts, and what must hold before anything is created ------------------ */

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
	/* --hosts and --libvirt-uri mean the backend that runs VMs on hosts */
	const char *hosts_backend = vm_backend_with(VM_CAP_HOSTS)->name;

	if (man && !hosts && !uri) {
		hosts = json_string_value(json_object_get(opts, "hosts"));
		uri = json_string_value(json_object_get(opts, "libvirt_uri"));
		src = LIBVIRT_URI_FILE;
	}
	if (!name && (o->hosts || o->libvirt_uri) && o->backend &&
	    !vm_backend_has(o->backend, VM_CAP_HOSTS))
		return error_set(err, EINVAL,
				 "%s is for a backend that runs VMs on hosts (%s), not "
				 "--backend %s",
				 o->hosts ? "--hosts" : "--libvirt-uri", hosts_backend, o->backend);
	if (!name)
		name = o->backend;
	if (!name && (hosts || o->libvirt_uri))
		name = hosts_backend;
	if (!name)
		name = json_string_value(json_object_get(ctx->m->json, "backend"));
	if (!name)
		name = VM_BACKEND_DEFAULT;
	ctx->vm_ops = vm_backend(name);
	if (!ctx->vm_ops)
		return error_set(err, EINVAL, "unknown backend '%s' (%s)", name,
				 VM_BACKEND_CHOICES);
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
		if (libvirt_uri_check(uri, src, &ctx->hosts[0].parsed, err) < 0)
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

/* The sides whose cells a check must see: every side of the matrix's "sides" (each may set
 * its disks), else the matrix's cells once. */
static size_t side_count(const struct matrix *m)
{
	return m->n_sides ? m->n_sides : 1;
}

int schedule_check_interference(const struct matrix *m, const char *what, struct zb_error *err)
{
	for (size_t s = 0; s < side_count(m); s++) {
		const struct cell *cells = matrix_side_cells(m, s);

		for (size_t i = 0; i < m->n_cells; i++) {
			json_t *disks = json_object_get(cells[i].config, "disks");
			size_t k;
			json_t *d;

			json_array_foreach (disks, k, d) {
				if (!json_is_object(json_object_get(d, "throttle")) &&
				    !disk_model_is_modelled(d))
					return error_set(
					    err, EINVAL,
					    "%s: disk '%s' of cell %s is not throttled, so "
					    "parallel cells would disturb each other's numbers; "
					    "use a modelled disk, a throttle, or "
					    "--allow-interference",
					    what, json_string_value(json_object_get(d, "name")),
					    cells[i].id);
			}
		}
	}
	return 0;
}

/* Modelled disks need a backend that attaches them; refused before anything is created. */
static int check_disk_models(struct run_ctx *ctx, struct zb_error *err)
{
	if (ctx->vm_ops->caps & VM_CAP_DISK_MODELS)
		return 0;
	for (size_t s = 0; s < side_count(ctx->m); s++) {
		const struct cell *cells = matrix_side_cells(ctx->m, s);

		for (size_t i = 0; i < ctx->m->n_cells; i++) {
			json_t *disks = json_object_get(cells[i].config, "disks");
			size_t k;
			json_t *d;

			json_array_foreach (disks, k, d) {
				if (disk_model_is_modelled(d))
					return error_set(
					    err, ENOTSUP,
					    "disk '%s' of cell %s is modelled (disk model '%s'): "
					    "the %s backend does not attach modelled disks; use "
					    "the qemu backend (docs/disks.md)",
					    json_string_value(json_object_get(d, "name")),
					    cells[i].id,
					    json_string_value(json_object_get(d, "model")),
					    ctx->vm_ops->name);
			}
		}
	}
	return 0;
}

/* Every passthrough device of every cell of every side, before anything is created
 * (disk_check_devices()): where the cells run (a remote host: none at all) and whether they run
 * at once. */
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
	for (size_t s = 0; s < side_count(ctx->m); s++)
		if (disk_check_devices(matrix_side_cells(ctx->m, s), ctx->m->n_cells, &plan, err) <
		    0)
			return -1;
	return 0;
}

/* ---- when: order, shards, tasks ------------------------------------------------------------- */

void schedule_order(const struct matrix *m, int r, size_t *order)
{
	const char *how = json_string_value(json_object_get(m->json, "order"));
	json_t *seed = json_object_get(m->json, "seed");
	uint64_t x = json_is_integer(seed) ? (uint64_t)json_integer_value(seed)
					   : strtoull(m->sha256 + 48, NULL, 16);
	size_t n = m->n_cells;

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

void schedule_tasks(const struct matrix *m, int r, int nsides, struct schedule_task *tasks)
{
	size_t *order = xcalloc(m->n_cells, sizeof(*order));

	schedule_order(m, r, order);
	for (size_t k = 0; k < m->n_cells; k++) {
		for (int j = 0; j < nsides; j++) {
			tasks[k * (size_t)nsides + (size_t)j].cell = order[k];
			tasks[k * (size_t)nsides + (size_t)j].side = (j + r) % nsides;
		}
	}
	free(order);
}

int schedule_shard(const struct cell *cell, int count)
{
	return (int)(strtoull(cell->id + 8, NULL, 16) % (unsigned long long)count);
}

/* One (cell, repeat, side) task: nothing if the cell belongs to another shard (every side of
 * a cell is in the cell's shard), counted if the done map settled it, else cell_run() from its
 * next attempt. */
/* Whether the run takes the cell at all: its shard, and run_options.only_cells. */
static int cell_wanted(const struct run_ctx *ctx, const struct cell *cell)
{
	if (ctx->shard_count > 1 && schedule_shard(cell, ctx->shard_count) != ctx->shard_index - 1)
		return 0;
	if (!ctx->o->only_cells)
		return 1;
	for (size_t i = 0; i < ctx->o->n_only_cells; i++)
		if (!strcmp(ctx->o->only_cells[i], cell->id))
			return 1;
	return 0;
}

static int run_or_skip(struct run_ctx *ctx, const struct done_map *dm, const struct cell *cell,
		       int r, int side, struct zb_error *err)
{
	int ok, attempt;

	if (!cell_wanted(ctx, cell))
		return 0;
	attempt = done_map_next(dm, cell, r, side, ctx->m_retries, &ok);
	if (attempt == 0) {
		struct progress_event ev = { .kind = PROGRESS_SKIP, .cell = cell->index, .ok = ok };

		ctx->done++;
		ctx->ok += ok;
		progress_post(&ctx->prog, &ev);
		return 0;
	}
	return cell_run(ctx, cell, r, side, attempt, err);
}

/* The coefficient of variation of `metric` over the ok records of (cell, side) (records
 * without "side" are side A); *n says over how many. */
static double side_cv(const json_t *records, const struct cell *cell, const char *label,
		      const char *metric, size_t *n)
{
	double *v = xcalloc(json_array_size(records) + 1, sizeof(*v));
	const struct metric_def *def = metric_find(metric);
	struct stats_summary st;
	size_t i;
	json_t *rec;

	*n = 0;
	json_array_foreach (records, i, rec) {
		const char *id = json_string_value(json_object_get(rec, "cell"));
		const char *oc = json_string_value(json_object_get(rec, "outcome"));
		const char *side = json_string_value(json_object_get(rec, "side"));
		double x;

		if (!id || strcmp(id, cell->id) || !oc || strcmp(oc, "ok") ||
		    strcmp(side ? side : "A", label))
			continue;
		if (def && metric_read(rec, (enum metric_id)(def - metric_table), &x) == 0)
			v[(*n)++] = x;
	}
	stats_summarize(v, *n, &st);
	free(v);
	return st.cv;
}

/* Adaptive repeats: after the fixed ones, repeat each cell whose metric's coefficient of
 * variation over its ok records is still above the threshold on some image, one round at a
 * time, until every cell is settled or has max_repeats. A repeated cell runs on every image,
 * in the round's order, so the sides stay paired. */
static int run_adaptive(struct run_ctx *ctx, const struct done_map *dm, struct schedule_task *tasks,
			struct zb_error *err)
{
	json_t *ad = json_object_get(ctx->m->json, "adaptive");
	const char *metric = json_string_value(json_object_get(ad, "metric"));
	json_t *cvj = json_object_get(ad, "cv_percent");
	json_t *maxj = json_object_get(ad, "max_repeats");
	double limit = json_is_number(cvj) ? json_number_value(cvj) : 3.5;
	int max = json_is_integer(maxj) ? (int)json_integer_value(maxj) : 10;
	size_t ns = (size_t)ctx->nsides;

	for (int r = ctx->m->repeats; r < max && !run_interrupted; r++) {
		json_t *records;
		int wanted = 0;

		/* lines it cannot read were named when the run was resumed or will be at its end */
		if (results_read_cells(ctx->res.dir, &records, NULL, err) < 0)
			return -1;
		schedule_tasks(ctx->m, r, ctx->nsides, tasks);
		for (size_t k = 0; k < ctx->m->n_cells && !run_interrupted; k++) {
			const struct cell *cell = &ctx->m->cells[tasks[k * ns].cell];
			double worst = -1;
			size_t n = 0, worst_n = 0;

			for (size_t j = 0; j < ns; j++) {
				double cv = side_cv(records, cell, ctx->sides[j].label, metric, &n);

				if (n < 2 || isnan(cv))
					cv = INFINITY; /* unsettled: always repeated */
				if (cv > worst) {
					worst = cv;
					worst_n = n;
				}
			}
			if (worst * 100 <= limit)
				continue;
			wanted++;
			ctx->ncells_total += ctx->nsides;
			progress_plan(&ctx->prog, (size_t)cell->index, ctx->nsides);
			log_info(
			    "adaptive: cell %s has CV %.1f%% of %s over %zu runs (limit %g%%): "
			    "repeat %d",
			    TERM(cell->id), isinf(worst) ? 100.0 : worst * 100, TERM(metric),
			    worst_n, limit, r + 1);
			for (size_t j = 0; j < ns && !run_interrupted; j++) {
				if (run_or_skip(ctx, dm, cell, r, tasks[k * ns + j].side, err) <
				    0) {
					json_decref(records);
					return -1;
				}
			}
		}
		json_decref(records);
		if (!wanted)
			break;
	}
	return 0;
}

/* How many workers run the cells: -j, or a slot of each --hosts host; 1 for a serial run. */
static int schedule_workers(const struct run_ctx *ctx)
{
	int n = 0;

	if (!ctx->nhosts)
		return ctx->o->jobs > 1 ? ctx->o->jobs : 1;
	for (int h = 0; h < ctx->nhosts; h++)
		n += ctx->hosts[h].slots;
	return n;
}

/* The width of the terminal on stderr, or 0 if it has none. */
static int terminal_columns(void)
{
	struct winsize ws;

	return ioctl(2, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}

/* ---- workers -------------------------------------------------------------------------------- */

/* Connect this process to where its VMs run, if the backend connects (libvirt): `uri` NULL
 * is the backend's default. A host shared by `slots` workers gives each its own share of the
 * host's CPUs (slot 0..slots-1) for its VMs' vCPUs. */
static int schedule_connect(struct run_ctx *ctx, const char *uri, int slots, int slot,
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

/* The -j or --hosts worker processes of one run. */
struct workers {
	int n;		    /* workers started */
	pid_t *pids;	    /* n of them */
	int ncpu, cpus_per; /* -j: the host's CPUs, and each worker's share */
	int task[2];	    /* the pipe of (cell index, repeat, side) tasks, parent -> workers */
	int status[2];	    /* the pipe of struct worker_status, workers -> parent */
	int events[2];	    /* the pipe of struct progress_event, workers -> parent */
};

/* Worker w (a child process): pinned to its CPUs (-j) or connected to its host's slot
 * (--hosts), it reports whether it connected, then runs the tasks it reads until the pipe
 * closes. Exits 0, 130 if interrupted, or 2 after a host failure (printed here: the parent
 * only counts). */
static void __attribute__((noreturn))
worker_main(struct run_ctx *ctx, struct workers *wk, int w, struct zb_error *err)
{
	struct worker_status ws;
	cpu_set_t set;
	int32_t task[3];
	const char *uri = ctx->uri;
	int slots = 1, slot = 0;

	close(wk->task[1]);
	close(wk->status[0]);
	close(wk->events[0]);
	ctx->prog.fd = wk->events[1];
	ctx->prog.self = w;
	if (ctx->nhosts) {
		/* QEMU runs on the worker's host, which shares out its own CPUs
		 * (schedule_connect); the worker itself only waits. */
		int h = 0;

		for (slot = w; slot >= ctx->hosts[h].slots; h++)
			slot -= ctx->hosts[h].slots;
		uri = ctx->hosts[h].uri;
		slots = ctx->hosts[h].slots;
	} else {
		CPU_ZERO(&set);
		for (int c = 0; c < wk->cpus_per; c++)
			CPU_SET((w * wk->cpus_per + c) % wk->ncpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	/* Connected before any task: a host that cannot be reached stops the run before any
	 * cell runs (the parent waits for every report). */
	memset(&ws, 0, sizeof(ws));
	ws.worker = w;
	ws.ok = schedule_connect(ctx, uri, slots, slot, err) == 0;
	if (!ws.ok)
		snprintf(ws.msg, sizeof(ws.msg), "%.1000s", err->msg);
	if (write(wk->status[1], &ws, sizeof(ws)) != sizeof(ws) || !ws.ok)
		_exit(0);
	close(wk->status[1]);
	while (!run_interrupted && read(wk->task[0], task, sizeof(task)) == sizeof(task)) {
		if (run_or_skip(ctx, &ctx->dm, &ctx->m->cells[task[0]], task[1], task[2], err) <
		    0) {
			die_message(err->msg);
			_exit(2);
		}
	}
	_exit(run_interrupted ? 130 : 0);
}

/* Create the pipes and fork the workers: with --hosts one per slot of each host, (host 0,
 * slot 0), (host 0, slot 1), ..., (host 1, slot 0); else -j of them. wk->n says how many
 * started (a failed fork sets err and stops there). */
static int workers_start(struct run_ctx *ctx, struct workers *wk, struct zb_error *err)
{
	int jobs = schedule_workers(ctx);

	wk->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	wk->cpus_per = wk->ncpu / jobs > 0 ? wk->ncpu / jobs : 1;
	wk->pids = xcalloc((size_t)jobs, sizeof(*wk->pids));
	if (pipe(wk->task) < 0)
		return error_sys(err, errno, "creating the task pipe");
	if (pipe(wk->status) < 0) {
		close(wk->task[0]);
		close(wk->task[1]);
		return error_sys(err, errno, "creating the status pipe");
	}
	if (pipe(wk->events) < 0) {
		close(wk->task[0]);
		close(wk->task[1]);
		close(wk->status[0]);
		close(wk->status[1]);
		return error_sys(err, errno, "creating the progress pipe");
	}
	fflush(NULL);
	for (wk->n = 0; wk->n < jobs; wk->n++) {
		pid_t pid = fork();

		if (pid < 0) {
			error_sys(err, errno, "forking worker %d", wk->n);
			break;
		}
		if (pid == 0)
			worker_main(ctx, wk, wk->n, err);
		wk->pids[wk->n] = pid;
	}
	close(wk->task[0]);
	close(wk->status[1]);
	close(wk->events[1]);
	return 0;
}

/* Wait until every worker said whether it connected. Returns how many refused (err holds the
 * first one's reason), or 1 with err set if some never reported. */
static int workers_connected(struct workers *wk, struct zb_error *err)
{
	struct worker_status ws;
	int reported = 0, refused = 0;

	while (reported < wk->n) {
		ssize_t n = read(wk->status[0], &ws, sizeof(ws));

		if (n < 0 && errno == EINTR && !run_interrupted)
			continue;
		if (n != sizeof(ws))
			break;
		reported++;
		if (!ws.ok && !refused++)
			error_set(err, EHOSTUNREACH, "%s", ws.msg);
	}
	close(wk->status[0]);
	if (!refused && reported < wk->n && !run_interrupted) {
		refused = 1;
		error_set(err, EIO, "%d of %d workers did not start", wk->n - reported, wk->n);
	}
	return refused;
}

/* Every (cell, repeat, side) task of the fixed repeats, in each repeat's order; *n says how
 * many. */
static int32_t (*tasks_list(struct run_ctx *ctx, struct schedule_task *tasks, size_t *n))[3]
{
	size_t per = ctx->m->n_cells * (size_t)ctx->nsides, k = 0;
	int32_t(*list)[3] = xcalloc(per * (size_t)ctx->m->repeats + 1, sizeof(*list));

	for (int r = 0; r < ctx->m->repeats; r++) {
		schedule_tasks(ctx->m, r, ctx->nsides, tasks);
		for (size_t i = 0; i < per; i++, k++) {
			list[k][0] = (int32_t)tasks[i].cell;
			list[k][1] = r;
			list[k][2] = tasks[i].side;
		}
	}
	*n = k;
	return list;
}

/* Read the workers' progress events that are there (the pipe is non-blocking) onto the board.
 * Returns 0, or -1 once every worker has closed its end (all of them exited). */
static int events_read(struct run_ctx *ctx, int fd)
{
	struct progress_event ev;

	for (;;) {
		ssize_t r = read(fd, &ev, sizeof(ev));

		if (r == (ssize_t)sizeof(ev)) {
			progress_apply(&ctx->prog, &ev, now_monotonic());
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		/* a short read cannot happen (every write is one whole event under PIPE_BUF) */
		return r == 0 ? -1 : 0;
	}
}

/* The parent while the workers run: hand out every task of the fixed repeats (the task pipe
 * fills while every worker is busy, and is closed after the last task so idle workers end) and
 * draw the workers' progress, until every worker has closed the progress pipe. A stop signal
 * stops the handing out and is forwarded to the workers once (a SIGTERM to zbench alone must
 * reach them too). */
static void tasks_feed(struct run_ctx *ctx, struct workers *wk, struct schedule_task *tasks, int go)
{
	size_t n, next = 0;
	int32_t(*list)[3] = tasks_list(ctx, tasks, &n);
	int open = 1, forwarded = 0;

	fcntl(wk->events[0], F_SETFL, fcntl(wk->events[0], F_GETFL) | O_NONBLOCK);
	for (;;) {
		struct pollfd pfd[2] = { { wk->events[0], POLLIN, 0 },
					 { wk->task[1], POLLOUT, 0 } };

		if (open && (!go || next == n || run_interrupted)) {
			close(wk->task[1]);
			open = 0;
		}
		if (run_interrupted && !forwarded) {
			for (int w = 0; w < wk->n; w++)
				kill(wk->pids[w], SIGTERM);
			forwarded = 1;
		}
		if (poll(pfd, open ? 2 : 1, 1000) < 0 && errno != EINTR)
			break;
		/* POLLOUT on a pipe: room for PIPE_BUF bytes, so one task's write never blocks */
		if (open && (pfd[1].revents & (POLLERR | POLLHUP)))
			next = n; /* every worker is gone */
		else if (open && (pfd[1].revents & POLLOUT) &&
			 write(wk->task[1], list[next], sizeof(list[next])) == sizeof(list[next]))
			next++;
		if ((pfd[0].revents & (POLLIN | POLLHUP)) && events_read(ctx, wk->events[0]) < 0)
			break;
		progress_tick(&ctx->prog, now_monotonic());
	}
	if (open)
		close(wk->task[1]);
	close(wk->events[0]);
	free(list);
}

/* Wait for every worker, forwarding a stop signal once (a SIGTERM to zbench alone must reach
 * the workers too). Returns how many failed on a host error (exit status 2). */
static int workers_reap(struct workers *wk)
{
	int failed = 0, forwarded = 0;

	for (int w = 0; w < wk->n; w++) {
		int status = 0;

		while (waitpid(wk->pids[w], &status, 0) < 0) {
			if (errno != EINTR)
				break;
			if (run_interrupted && !forwarded) {
				for (int v = 0; v < wk->n; v++)
					kill(wk->pids[v], SIGTERM);
				forwarded = 1;
			}
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
			failed++;
	}
	return failed;
}

/* -j N: N worker processes take (cell, repeat) tasks from a pipe, each pinned to its own host
 * cores (QEMU inherits the affinity), each appending its records to cells.jsonl (one write()
 * per record with O_APPEND: lines never interleave). The parent only hands out work, forwards
 * a stop signal and counts the results at the end. --hosts: the same, one worker per slot of
 * each host, connected to that host; a worker takes its next cell when its last one is done,
 * so faster hosts run more cells. */
static int run_parallel(struct run_ctx *ctx, struct schedule_task *tasks, struct zb_error *err)
{
	struct workers wk = { 0 };
	int failed, refused, jobs;

	if (workers_start(ctx, &wk, err) < 0) {
		free(wk.pids);
		return -1;
	}
	jobs = wk.n;
	/* Every worker connected, or nothing runs. */
	refused = workers_connected(&wk, err);
	tasks_feed(ctx, &wk, tasks, !refused && jobs > 0);
	failed = workers_reap(&wk);
	free(wk.pids);
	if (refused)
		return refused > 1
			   ? error_wrap(err, "%d of %d workers could not connect; the first",
					refused, jobs)
			   : -1;
	/* The counts come from what the workers recorded. */
	if (done_map_count(ctx, err) < 0)
		return -1;
	if (failed)
		return error_set(err, EIO, "%d worker%s failed (see above)", failed,
				 failed == 1 ? "" : "s");
	return 0;
}

/* The fixed repeats one at a time, in this process. */
static int run_serial(struct run_ctx *ctx, struct schedule_task *tasks, struct zb_error *err)
{
	size_t n = ctx->m->n_cells * (size_t)ctx->nsides;

	if (schedule_connect(ctx, ctx->uri, 1, 0, err) < 0)
		return -1;
	for (int r = 0; r < ctx->m->repeats && !run_interrupted; r++) {
		schedule_tasks(ctx->m, r, ctx->nsides, tasks);
		for (size_t k = 0; k < n && !run_interrupted; k++) {
			if (run_or_skip(ctx, &ctx->dm, &ctx->m->cells[tasks[k].cell], r,
					tasks[k].side, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* ---- the plan and the run ------------------------------------------------------------------ */

int schedule_plan(struct run_ctx *ctx, struct zb_error *err)
{
	const struct run_options *o = ctx->o;
	int rc;

	if (choose_backend(ctx, err) < 0 || check_devices(ctx, err) < 0 ||
	    check_disk_models(ctx, err) < 0)
		return -1;
	if (o->jobs > 1 && !o->allow_interference) {
		char what[32];

		snprintf(what, sizeof(what), "-j %d", o->jobs);
		if (schedule_check_interference(ctx->m, what, err) < 0)
			return -1;
	}
	for (int h = 0; h < ctx->nhosts && !o->allow_interference; h++) {
		if (ctx->hosts[h].slots > 1) {
			char *what =
			    xasprintf("--hosts '%s=%d'", ctx->hosts[h].uri, ctx->hosts[h].slots);

			rc = schedule_check_interference(ctx->m, what, err);
			free(what);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

int schedule_run(struct run_ctx *ctx, struct zb_error *err)
{
	struct schedule_task *tasks =
	    xcalloc(ctx->m->n_cells * (size_t)ctx->nsides, sizeof(*tasks));
	int rc;

	ctx->ncells_total = 0;
	progress_init(&ctx->prog, ctx->m->n_cells, schedule_workers(ctx), ctx->is_tty,
		      terminal_columns());
	for (size_t i = 0; i < ctx->m->n_cells; i++)
		if (cell_wanted(ctx, &ctx->m->cells[i])) {
			ctx->ncells_total += ctx->m->repeats * ctx->nsides;
			progress_plan(&ctx->prog, i, ctx->m->repeats * ctx->nsides);
		}
	if (ctx->nsides > 1)
		log_info("%s '%s': %d cells x %d repeats x %d images in %s",
			 ctx->o->resume_dir ? "resuming" : "running", TERM(ctx->m->name),
			 (int)ctx->m->n_cells, ctx->m->repeats, ctx->nsides, TERM(ctx->dir));
	else
		log_info("%s '%s': %d cells x %d repeats in %s",
			 ctx->o->resume_dir ? "resuming" : "running", TERM(ctx->m->name),
			 (int)ctx->m->n_cells, ctx->m->repeats, TERM(ctx->dir));
	if (ctx->o->jobs > 1 || ctx->nhosts)
		rc = run_parallel(ctx, tasks, err);
	else
		rc = run_serial(ctx, tasks, err);
	/* Adaptive repeats run here, one at a time: after --hosts on the first host. */
	if (rc == 0 && json_is_object(json_object_get(ctx->m->json, "adaptive")) &&
	    (schedule_connect(ctx, ctx->nhosts ? ctx->hosts[0].uri : ctx->uri, 1, 0, err) < 0 ||
	     run_adaptive(ctx, &ctx->dm, tasks, err) < 0))
		rc = -1;
	progress_end(&ctx->prog);
	progress_release(&ctx->prog);
	free(tasks);
	return rc;
}
