/* The workload: zbench-engine runs the job's workload against the target; its per-second status
 * lines go to the host as "sample" messages, the guest's own telemetry (telemetry.c) as
 * "telemetry" messages once a second and a summary at the end, and the engine's JSON result as
 * the "result" message. The engine's stdout and stderr go to the console and, bounded, into the
 * error message if it fails.
 *
 * A workload with "phases" (guest/phase.h, docs/matrix.md) runs them in order on the same pool:
 * each engine run ends with a "phase_result" message (its result, its telemetry summary and the
 * target's space figures), each action (zpool sync, export and import, drop caches, sleep) runs
 * between them, and the "result" is the last measured phase's. A prefill ends with a zpool sync. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "phase.h"
#include "telemetry.h"
#include "units.h"

#define ENGINE_PATH   "/bin/zbench-engine"
#define RESULT_PATH   "/tmp/zbench-result.json"
#define TELEMETRY_SEC 1

/* The engine while it runs: its pipes, and what came out of them so far. */
struct engine_proc {
	pid_t pid;
	int status_fd;	/* read end of the engine's --status-fd=3, -1 once closed */
	int out_fd;	/* read end of its stdout and stderr, -1 once closed */
	char acc[8192]; /* status bytes not yet a whole line */
	size_t acc_len;
	char *errout; /* its output, CMD_OUTPUT_MAX bytes kept */
	size_t err_len;
};

/* Relay the engine's per-second status lines (one JSON object each) as "sample" messages. */
static void relay_status(int fd, char *acc, size_t *len, size_t cap)
{
	ssize_t r = read(fd, acc + *len, cap - *len - 1);
	char *nl;

	if (r <= 0)
		return;
	*len += (size_t)r;
	acc[*len] = '\0';
	while ((nl = strchr(acc, '\n'))) {
		json_t *line;

		*nl = '\0';
		line = json_loads(acc, 0, NULL);
		if (json_is_object(line)) {
			json_object_set_new(line, "type", json_string("sample"));
			send_msg(line);
		} else {
			json_decref(line);
		}
		*len -= (size_t)(nl + 1 - acc);
		memmove(acc, nl + 1, *len + 1);
	}
	if (*len == cap - 1) /* a line longer than the buffer: drop it */
		*len = 0;
}

/* The phase running now (a phased workload), named in each telemetry message; or NULL. */
static const char *phase_now;

/* One "telemetry" message (steals `t`; NULL sends nothing): an interval's figures, or with
 * summary true the whole workload's. */
static void send_telemetry(json_t *t, int summary)
{
	if (!t)
		return;
	json_object_set_new(t, "type", json_string("telemetry"));
	if (phase_now && !summary)
		json_object_set_new(t, "phase", json_string(phase_now));
	if (summary)
		json_object_set_new(t, "summary", json_true());
	send_msg(t);
}

/* The engine's command line: fixed options, the target, then the phase's engine options
 * (phase_engine_options(): zbench's keys already left out) as --NAME=VALUE. The one place that
 * says which program runs a phase: another engine (fio in the guest) builds its own argv here
 * from the same options and writes its JSON to RESULT_PATH. */
static void engine_argv(struct argv_buf *a, const json_t *opts)
{
	const char *name = json_string_value(json_object_get(agent.job, "cell"));
	const char *k;
	json_t *v;

	argv_add(a, ENGINE_PATH);
	argv_add(a, "--output-format=json+"); /* clat_ns.bins: fio's clat tools read them */
	argv_add(a, "--output=" RESULT_PATH);
	argv_add(a, "--status-fd=3");
	argv_add(a, "--name=%s", name ? name : "zbench");
	argv_add(a, agent.target_is_dev ? "--filename=%s" : "--directory=%s", agent.target_path);
	json_object_foreach ((json_t *)opts, k, v) {
		char tmp[64];

		argv_add(a, "--%s=%s", k, scalar_str(v, tmp, sizeof(tmp)));
	}
}

static void engine_start(struct engine_proc *e, char *const argv[])
{
	int status_pipe[2], out_pipe[2];

	if (pipe(status_pipe) < 0 || pipe(out_pipe) < 0)
		fail_step(NULL, "pipe: %s", strerror(errno));
	e->pid = fork();
	if (e->pid < 0)
		fail_step(NULL, "fork: %s", strerror(errno));
	if (e->pid == 0) {
		dup2(out_pipe[1], 1);
		dup2(out_pipe[1], 2);
		dup2(status_pipe[1], 3);
		cmd_exec(argv);
	}
	close(status_pipe[1]);
	close(out_pipe[1]);
	e->status_fd = status_pipe[0];
	e->out_fd = out_pipe[0];
	e->errout = calloc(1, CMD_OUTPUT_MAX + 1);
}

/* The engine's output: to the console, and kept (bounded) for an error message. */
static void engine_output(struct engine_proc *e)
{
	char tmp[4096];
	ssize_t r = read(e->out_fd, tmp, sizeof(tmp));

	if (r > 0) {
		fwrite(tmp, 1, (size_t)r, stderr); /* the console keeps it too */
		if (e->err_len + (size_t)r <= CMD_OUTPUT_MAX) {
			memcpy(e->errout + e->err_len, tmp, (size_t)r);
			e->err_len += (size_t)r;
		}
	}
}

/* Until the engine closes both pipes: its status lines and output relayed as they come, and a
 * telemetry sample every TELEMETRY_SEC on the agent's own clock. */
static void engine_watch(struct engine_proc *e, struct telemetry *tm, int use_fio)
{
	double next_tick = mono_now() + TELEMETRY_SEC;

	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd pfd[2] = { { e->status_fd, POLLIN, 0 }, { e->out_fd, POLLIN, 0 } };
		double now = mono_now();
		int rc;

		if (now >= next_tick) {
			send_telemetry(telemetry_sample(tm, now), 0);
			next_tick += TELEMETRY_SEC * (1 + (int)((now - next_tick) / TELEMETRY_SEC));
		}
		rc = poll(pfd, 2, (int)((next_tick - now) * 1000) + 1);
		if (rc == 0)
			continue;
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents & POLLIN) {
			if (use_fio)
				fio_relay(e->status_fd, e->errout, &e->err_len);
			else
				relay_status(e->status_fd, e->acc, &e->acc_len, sizeof(e->acc));
			if (agent.fault == FAULT_STALL) {
				logf_console("fault injection: stopping the engine");
				kill(e->pid, SIGSTOP);
			}
		} else if (pfd[0].revents & (POLLHUP | POLLERR)) {
			if (pfd[0].fd >= 0)
				open_fds--;
			close(e->status_fd);
			e->status_fd = -1;
		}
		if (pfd[1].revents & POLLIN) {
			engine_output(e);
		} else if (pfd[1].revents & (POLLHUP | POLLERR)) {
			open_fds--;
			close(e->out_fd);
			e->out_fd = -1;
		}
	}
}

/* One engine run with `opts`: samples and per-second telemetry relayed while it runs; its
 * fio-shaped result returned (new reference) and its telemetry summary in *summary (or NULL).
 * The step fails if the engine fails. */
static json_t *engine_run(const json_t *opts, json_t **summary)
{
	const char *pool = job_pool_name();
	struct engine_proc e = { 0 };
	struct argv_buf a = { 0 };
	struct telemetry *tm;
	json_error_t jerr;
	json_t *fio;
	int status, use_fio = agent_engine_is_fio();

	unlink(RESULT_PATH); /* a phase never reads the one before it's result */
	if (use_fio)
		fio_argv(&a, opts);
	else
		engine_argv(&a, opts);
	engine_start(&e, a.v);
	tm = telemetry_start(pool ? pool : "", agent.disk_devs, mono_now());
	engine_watch(&e, tm, use_fio);
	while (waitpid(e.pid, &status, 0) < 0 && errno == EINTR)
		;
	argv_free(&a);
	*summary = telemetry_summary(tm, mono_now());
	telemetry_free(tm);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status))
			fail_step(e.errout, "the workload engine was killed by signal %d",
				  WTERMSIG(status));
		fail_step(e.errout, "the workload engine exited with status %d",
			  WEXITSTATUS(status));
	}
	fio = use_fio ? fio_result(e.errout) : json_load_file(RESULT_PATH, 0, &jerr);
	if (!fio)
		fail_step(e.errout, "the engine's result is not JSON: %s (line %d)", jerr.text,
			  jerr.line);
	free(e.errout);
	return fio;
}

/* The target's space figures as numbers ({"compressratio": 1.52, "used": 123, ...}): what the
 * host turns into the data's real compress ratio. Empty when zfs cannot say. */
static json_t *target_space(void)
{
	char name[512], *out = NULL, *save = NULL;
	char *const argv[] = { "/sbin/zfs",
			       "get",
			       "-Hp",
			       "-o",
			       "property,value",
			       "compressratio,refcompressratio,used,logicalused,referenced,"
			       "logicalreferenced",
			       name,
			       NULL };
	json_t *o = json_object();

	snprintf(name, sizeof(name), "%s/%s", job_pool_name(), job_target_name());
	if (run_cmd(argv, &out) == 0 && out) {
		for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *tab = strchr(l, '\t'), *end;
			double v;

			if (!tab)
				continue;
			*tab = '\0';
			v = strtod(tab + 1, &end); /* "1.52x" without -p on some versions */
			if (end != tab + 1)
				json_object_set_new(o, l, json_real(v));
		}
	}
	free(out);
	return o;
}

/* `zpool sync`: the pool's dirty data on its disks before the next phase starts (a cell
 * without a pool, a workload on the raw disks: the page cache's). */
static void pool_sync(void)
{
	char *const argv[] = { "/sbin/zpool", "sync", (char *)job_pool_name(), NULL };

	if (argv[2])
		free(must_run(argv));
	else
		sync();
}

/* ---- waiting for a state (guest/phase.h, issue 33 item 5) ---------------------------------- */

struct until {
	enum phase_state state;
	uint64_t bytes;		 /* l2arc_size */
	double idle, timeout;	 /* seconds */
	double t0, quiet_since;	 /* when the wait began; when the feed last wrote */
	uint64_t value, written; /* l2_size now; l2_write_bytes at quiet_since */
	int runs;
};

static double until_seconds(const json_t *u, const char *key)
{
	uint64_t us = 0;

	units_parse_duration(json_string_value(json_object_get(u, key)), &us);
	return (double)us / 1e6;
}

static void until_init(struct until *w, const json_t *phase)
{
	const json_t *u = json_object_get(phase, "until");

	memset(w, 0, sizeof(*w));
	w->state = phase_until_state(phase);
	units_parse_size(json_string_value(json_object_get(u, "bytes")), &w->bytes);
	w->idle = until_seconds(u, "idle");
	w->timeout = until_seconds(u, "timeout");
	w->t0 = w->quiet_since = mono_now();
	telemetry_arcstat("l2_write_bytes", &w->written);
}

/* Whether the state holds now. */
static int until_holds(struct until *w)
{
	uint64_t written = 0;
	double now = mono_now();

	telemetry_arcstat("l2_size", &w->value);
	switch (w->state) {
	case PHASE_STATE_L2ARC_SIZE:
		return w->value >= w->bytes;
	case PHASE_STATE_L2ARC_IDLE:
		telemetry_arcstat("l2_write_bytes", &written);
		if (written != w->written) {
			w->written = written;
			w->quiet_since = now;
		}
		return now - w->quiet_since >= w->idle;
	case PHASE_STATE_DIRTY_WRITTEN:
		pool_sync();
		return 1;
	case PHASE_STATE_NONE:
		break;
	}
	return 1;
}

/* Past the timeout: the cell fails, saying how far it got. */
static void until_check_timeout(const struct until *w, const char *what)
{
	if (mono_now() - w->t0 <= w->timeout)
		return;
	fail_step(NULL,
		  "%s: the state it waits for did not hold within %.0f s (the L2ARC held %llu "
		  "bytes%s%llu asked; %d engine runs)",
		  what, w->timeout, (unsigned long long)w->value,
		  w->state == PHASE_STATE_L2ARC_SIZE ? " of " : ", ",
		  (unsigned long long)(w->state == PHASE_STATE_L2ARC_SIZE ? w->bytes : 0), w->runs);
}

/* What the wait reached, for the phase's result. */
static json_t *until_outcome(const struct until *w, const json_t *phase)
{
	return json_pack("{s:s, s:b, s:f, s:i, s:I}", "state",
			 json_string_value(json_object_get(json_object_get(phase, "until"), "state")),
			 "reached", 1, "seconds", mono_now() - w->t0, "runs", w->runs, "l2_size",
			 (json_int_t)w->value);
}

/* Action "wait": poll once a second; a growing L2ARC is progress for the host's heartbeat. */
static void action_wait(const json_t *phase)
{
	struct until w;
	uint64_t shown = 0;

	until_init(&w, phase);
	while (!until_holds(&w)) {
		until_check_timeout(&w, "action wait");
		if (w.value != shown) {
			shown = w.value;
			send_msg(json_pack("{s:s, s:s}", "type", "phase", "name", "phase wait"));
		}
		for (struct timespec ts = { 1, 0 }; nanosleep(&ts, &ts) < 0 && errno == EINTR;)
			;
	}
	logf_console("action wait: %s after %.1f s (l2_size %llu)",
		     json_string_value(json_object_get(json_object_get(phase, "until"), "state")),
		     mono_now() - w.t0, (unsigned long long)w.value);
}

/* An engine phase with "until": its engine runs again until the state holds. Returns the last
 * run's result and summary (replacing *fio and *summary) and what the wait reached. */
static json_t *run_until(const json_t *phase, const json_t *opts, json_t **fio, json_t **summary)
{
	struct until w;

	until_init(&w, phase);
	w.runs = 1;
	while (!until_holds(&w)) {
		until_check_timeout(&w, json_string_value(json_object_get(phase, "name")));
		json_decref(*fio);
		json_decref(*summary);
		*fio = engine_run(opts, summary);
		w.runs++;
	}
	logf_console("phase '%s': %s after %d runs, %.1f s (l2_size %llu)",
		     json_string_value(json_object_get(phase, "name")),
		     json_string_value(json_object_get(json_object_get(phase, "until"), "state")),
		     w.runs, mono_now() - w.t0, (unsigned long long)w.value);
	return until_outcome(&w, phase);
}

/* The actions between phases: one handler per row of PHASE_ACTION_LIST (guest/phase.h). */
static void action_sync(const json_t *phase)
{
	pool_sync();
}

static void action_export_import(const json_t *phase)
{
	target_export_import();
}

static void action_drop_caches(const json_t *phase)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

	sync();
	if (fd < 0 || write(fd, "3", 1) != 1)
		fail_step(NULL, "drop_caches: %s", strerror(errno));
	close(fd);
}

static void action_sleep(const json_t *phase)
{
	uint64_t us = 0;

	units_parse_duration(json_string_value(json_object_get(phase, "duration")), &us);
	for (struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	     nanosleep(&ts, &ts) < 0 && errno == EINTR;)
		;
}

static void (*const action_handlers[PHASE_ACTION_COUNT])(const json_t *phase) = {
#define PHASE_ACTION_HANDLER_(id, name, handler, what) [PHASE_ACTION_##id] = handler,
	PHASE_ACTION_LIST(PHASE_ACTION_HANDLER_)
#undef PHASE_ACTION_HANDLER_
};

/* An action between phases (guest/phase.h). */
static void run_action(const json_t *phase)
{
	enum phase_action act = phase_action_of(phase);

	logf_console("phase action '%s'", phase_action_name(act));
	if (act == PHASE_ACTION_NONE || !action_handlers[act])
		fail_step(NULL, "unknown phase action");
	action_handlers[act](phase);
}

/* A workload with phases: each in order; the last measured one's result is the cell's. */
static void run_phases(const json_t *w, const json_t *phases)
{
	json_t *last = NULL, *last_summary = NULL, *p;
	size_t i;

	json_array_foreach (phases, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		json_t *opts, *fio, *summary, *until = NULL;
		int measured = phase_is_measured(p);

		/* "phase NAME" restarts the host's progress clock (an action has no samples) */
		send_msg(json_pack("{s:s, s:s+}", "type", "phase", "name", "phase ",
				   name ? name : phase_action_name(phase_action_of(p))));
		if (!name) {
			run_action(p);
			continue;
		}
		if (measured || !phase_is_prefill(p))
			await_disk_limits(); /* setup ends here: the disks get their limits */
		logf_console("phase '%s'%s", name, measured ? "" : " (not measured)");
		opts = phase_engine_options(w, p, agent.target_is_dev);
		phase_now = name;
		fio = engine_run(opts, &summary);
		if (phase_until_state(p) != PHASE_STATE_NONE)
			until = run_until(p, opts, &fio, &summary);
		phase_now = NULL;
		json_decref(opts);
		/* Prepared data is on the disks: without this the prefill's TXG writeback (its
		 * fsync only logs it) would run in the next phase, a read phase's disks writing as
		 * they read, or its reads answered from dirty data (docs/matrix.md). The space
		 * figures below then count what was synced. */
		if (phase_is_prefill(p))
			pool_sync();
		send_msg(json_pack("{s:s, s:s, s:b, s:O, s:o*, s:o, s:o*}", "type", "phase_result",
				   "name", name, "measured", measured, "fio", fio,
				   "telemetry_summary", json_incref(summary), "target",
				   target_space(), "until", until));
		if (measured) {
			json_decref(last);
			json_decref(last_summary);
			last = fio;
			last_summary = summary;
		} else {
			json_decref(fio);
			json_decref(summary);
		}
	}
	send_telemetry(last_summary, 1);
	send_msg(
	    json_pack("{s:s, s:o, s:o}", "type", "result", "fio", last, "target", target_space()));
}

void step_workload(void)
{
	const json_t *w = job_config("workload"), *phases = json_object_get(w, "phases");
	json_t *opts, *fio, *summary;

	if (agent.fault == FAULT_PANIC) {
		int fd = open("/proc/sysrq-trigger", O_WRONLY);

		logf_console("fault injection: crashing the kernel");
		if (fd >= 0 && write(fd, "c", 1) < 0)
			logf_console("sysrq: %s", strerror(errno));
	}
	if (json_array_size(phases)) {
		run_phases(w, phases);
		return;
	}
	await_disk_limits();
	opts = phase_engine_options(w, NULL, agent.target_is_dev);
	fio = engine_run(opts, &summary);
	json_decref(opts);
	send_telemetry(summary, 1);
	send_msg(
	    json_pack("{s:s, s:o, s:o}", "type", "result", "fio", fio, "target", target_space()));
}
