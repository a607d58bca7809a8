/* The progress board (builder/run/progress.c): the ETA arithmetic over case tables (per-cell means,
 * repeats, -j workers, running tasks, skipped ones), the worker and status lines, and what
 * reaches stderr on a terminal (a block redrawn in place, guest text sanitised, cut to the
 * width) and elsewhere (plain lines without an escape code). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/log.h"
#include "run/progress.h"

static FILE *out_file;
static int saved_stderr = -1;

/* From now on stderr goes to out_file (until captured()). */
static void capture(void)
{
	fflush(stderr);
	dup2(fileno(out_file), 2);
}

/* Everything written to stderr since capture(); stderr is the real one again, so a failed
 * check is seen. */
static char *captured(FILE *f)
{
	static char buf[16384];
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	rewind(f);
	if (ftruncate(fileno(f), 0) < 0)
		buf[0] = '\0';
	return buf;
}

static void post(struct progress *p, int kind, int worker, int cell, double t, double now,
		 const char *text)
{
	struct progress_event ev = { .kind = kind, .worker = worker, .cell = cell, .t = t };

	ev.iops[0] = ev.iops[1] = -1;
	snprintf(ev.text, sizeof(ev.text), "%s", text ? text : "");
	progress_apply(p, &ev, now);
}

/* A task of `cell` on `worker` from t0 to t1. */
static void task(struct progress *p, int worker, int cell, double t0, double t1)
{
	post(p, PROGRESS_START, worker, cell, t0, t0, "c");
	post(p, PROGRESS_DONE, worker, cell, 0, t1, NULL);
}

/* Each case: a board of 2 cells (`tasks` each: repeats x images) and `workers`; the finished
 * tasks (worker, cell, start, end), then the running ones (worker, cell, start) at `now`. */
static const struct {
	const char *what;
	int workers, tasks;
	struct {
		int worker, cell;
		double t0, t1; /* t1 < 0: still running */
	} ev[6];
	int nev;
	double now, eta;
} etas[] = {
	{ "nothing finished: no estimate", 1, 3, { { 0 } }, 0, 5, -1 },
	{ "nothing finished, one running: still none", 1, 3, { { 0, 0, 0, -1 } }, 1, 5, -1 },
	{ "serial: 5 tasks left at the only mean (10 s)", 1, 3, { { 0, 0, 0, 10 } }, 1, 10, 50 },
	{ "-j 2: the same work over two workers", 2, 3, { { 0, 0, 0, 10 } }, 1, 10, 25 },
	{ "each cell by its own mean (repeats alike)",
	  2,
	  3,
	  { { 0, 0, 0, 10 }, { 0, 0, 10, 20 }, { 1, 1, 0, 30 } },
	  3,
	  30,
	  (1 * 10 + 2 * 30) / 2.0 },
	{ "a running task: its estimate less its elapsed time",
	  1,
	  3,
	  { { 0, 0, 0, 10 }, { 0, 1, 10, -1 } },
	  2,
	  14,
	  2 * 10 + 3 * 10 - 4 },
	{ "an overrun task counts 0, not less",
	  1,
	  2,
	  { { 0, 0, 0, 10 }, { 0, 0, 10, -1 } },
	  2,
	  40,
	  2 * 10 },
	{ "never less than the longest running task's remainder",
	  2,
	  2,
	  { { 0, 0, 0, 10 }, { 1, 1, 0, 30 }, { 0, 1, 30, -1 } },
	  3,
	  35,
	  25 },
	{ "more workers than tasks: one worker per task",
	  8,
	  2,
	  { { 0, 0, 0, 10 }, { 0, 1, 10, 20 } },
	  2,
	  20,
	  10 },
	{ "all done", 2, 1, { { 0, 0, 0, 10 }, { 1, 1, 0, 12 } }, 2, 12, 0 },
};

static void test_eta(void)
{
	for (size_t i = 0; i < sizeof(etas) / sizeof(etas[0]); i++) {
		struct progress p;
		double eta;

		log_set_quiet(1);
		progress_init(&p, 2, etas[i].workers, 0, 80);
		progress_plan(&p, 0, etas[i].tasks);
		progress_plan(&p, 1, etas[i].tasks);
		for (int k = 0; k < etas[i].nev; k++) {
			if (etas[i].ev[k].t1 >= 0)
				task(&p, etas[i].ev[k].worker, etas[i].ev[k].cell, etas[i].ev[k].t0,
				     etas[i].ev[k].t1);
			else
				post(&p, PROGRESS_START, etas[i].ev[k].worker, etas[i].ev[k].cell,
				     etas[i].ev[k].t0, etas[i].ev[k].t0, "c");
		}
		eta = progress_eta(&p, etas[i].now);
		if (fabs(eta - etas[i].eta) > 1e-9)
			fprintf(stderr, "eta: %s: %g, want %g\n", etas[i].what, eta, etas[i].eta);
		CHECK(fabs(eta - etas[i].eta) <= 1e-9);
		progress_release(&p);
		log_set_quiet(0);
	}
}

/* A skipped task (settled by an earlier run) is done and takes no time; events naming a worker
 * or a cell out of range change nothing. */
static void test_skip_and_range(void)
{
	struct progress p;
	char s[256];

	log_set_quiet(1);
	progress_init(&p, 2, 1, 0, 80);
	progress_plan(&p, 0, 2);
	progress_plan(&p, 1, 2);
	post(&p, PROGRESS_SKIP, 0, 0, 0, 0, NULL);
	task(&p, 0, 0, 0, 10);
	CHECK(fabs(progress_eta(&p, 10) - 20) < 1e-9); /* cell 1 twice at the mean */
	post(&p, PROGRESS_START, 5, 0, 10, 10, "x");
	post(&p, PROGRESS_START, -1, 0, 10, 10, "x");
	post(&p, PROGRESS_START, 0, 2, 10, 10, "x");
	post(&p, PROGRESS_DONE, 0, 99, 0, 10, NULL);   /* not busy, no such cell */
	post(&p, PROGRESS_SKIP, 0, -7, 0, 10, NULL);   /* no such cell */
	CHECK(fabs(progress_eta(&p, 10) - 20) < 1e-9); /* the estimate as it was */
	progress_status_text(&p, 10, s, sizeof(s));
	CHECK_STR(s, "[4/4] 0 ok, 0 running, ETA 20.0s"); /* the counts still move */
	progress_release(&p);
	log_set_quiet(0);
}

/* The worker and status lines. */
static void test_lines(void)
{
	struct progress p;
	struct progress_event ev = { .kind = PROGRESS_UPDATE, .worker = 1 };
	char s[1024];

	log_set_quiet(1);
	progress_init(&p, 3, 2, 0, 80);
	progress_plan(&p, 0, 2);
	progress_plan(&p, 1, 2);
	progress_plan(&p, 2, 2);
	progress_status_text(&p, 0, s, sizeof(s));
	CHECK_STR(s, "[0/6] 0 ok, 0 running, ETA after the first cell");
	progress_worker_text(&p, 0, 0, s, sizeof(s));
	CHECK_STR(s, "w1 idle");
	task(&p, 0, 0, 0, 62);
	post(&p, PROGRESS_START, 1, 1, 10, 10, "recordsize=16k (0123456789abcdef) tcg");
	progress_worker_text(&p, 1, 12, s, sizeof(s));
	CHECK_STR(s, "w2 recordsize=16k (0123456789abcdef) tcg: boot 2.0s");
	snprintf(ev.text, sizeof(ev.text), "workload");
	ev.iops[0] = 1234.4;
	ev.iops[1] = 0;
	progress_apply(&p, &ev, 70);
	progress_worker_text(&p, 1, 80, s, sizeof(s));
	CHECK_STR(s, "w2 recordsize=16k (0123456789abcdef) tcg: workload 1m10s, read 1234 IOPS");
	ev.iops[0] = 10;
	ev.iops[1] = 20;
	progress_apply(&p, &ev, 81);
	progress_worker_text(&p, 1, 81, s, sizeof(s));
	CHECK(strstr(s, "workload 1m11s, read 10 IOPS, write 20 IOPS") != NULL);
	ev.iops[0] = 0;
	ev.iops[1] = 0;
	progress_apply(&p, &ev, 81);
	progress_worker_text(&p, 1, 81, s, sizeof(s));
	CHECK(strstr(s, "workload 1m11s, 0 IOPS") != NULL);
	/* 4 queued tasks at 62 s, the running one past its estimate (0): 4 * 62 / 2 workers */
	progress_status_text(&p, 81, s, sizeof(s));
	CHECK_STR(s, "[1/6] 0 ok, 1 running, ETA 2m04s");
	progress_release(&p);
	log_set_quiet(0);
}

/* What reaches stderr: without a terminal plain lines (one per phase change, the kept line of
 * an attempt numbered by the board), with one a block redrawn in place; guest text sanitised
 * either way, and on a terminal every line cut to the width. */
static void test_output(FILE *f)
{
	struct progress p;
	const char *out;

	capture();
	progress_init(&p, 2, 2, 0, 80);
	progress_plan(&p, 0, 1);
	progress_plan(&p, 1, 1);
	post(&p, PROGRESS_START, 0, 0, 0, 0, "a\033[2Jb (id) tcg");
	CHECK_STR(captured(f), "");
	capture();
	post(&p, PROGRESS_UPDATE, 0, 0, 0, 3, "pool");
	post(&p, PROGRESS_UPDATE, 0, 0, 0, 4, "pool");	/* no change, within 10 s: nothing */
	post(&p, PROGRESS_UPDATE, 0, 0, 0, 14, "pool"); /* 10 s since the last: again */
	post(&p, PROGRESS_LINE, 0, 0, 0, 15, "a (id) tcg: ok, read 5 IOPS [15s]");
	post(&p, PROGRESS_DONE, 0, 0, 0, 15, NULL);
	out = captured(f);
	capture();
	CHECK_STR(out, "[0/2] w1 a?[2Jb (id) tcg: pool 3.0s, ETA after the first cell\n"
		       "[0/2] w1 a?[2Jb (id) tcg: pool 14.0s, ETA after the first cell\n"
		       "[1/2] a (id) tcg: ok, read 5 IOPS [15s]\n");
	CHECK(strchr(out, '\033') == NULL);
	progress_release(&p);

	progress_init(&p, 1, 1, 1, 40);
	progress_plan(&p, 0, 2);
	post(&p, PROGRESS_START, 0, 0, 0, 0,
	     "x\x9b"
	     "31m (id) tcg");
	CHECK_STR(captured(f),
		  "\r\033[Jx?31m (id) tcg: boot 0.0s\n[0/2] 0 ok, 1 running, ETA after the...\n");
	capture();
	post(&p, PROGRESS_LINE, 0, 0, 0, 5,
	     "x (id) tcg: timeout: the workload made no progress for 60 s [5s]");
	CHECK_STR(captured(f),
		  "\033[2A\r\033[J[1/2] x (id) tcg: timeout: the workload made no progress for 60 "
		  "s [5s]\n"
		  "x?31m (id) tcg: boot 5.0s\n[0/2] 0 ok, 1 running, ETA after the...\n");
	capture();
	progress_tick(&p, 5.5); /* within a second of the last redraw */
	CHECK_STR(captured(f), "");
	capture();
	progress_tick(&p, 6);
	CHECK_STR(captured(f), "\033[2A\r\033[Jx?31m (id) tcg: boot 6.0s\n"
			       "[0/2] 0 ok, 1 running, ETA after the...\n");
	capture();
	/* a warning while the block is up goes above it, whole, not into it */
	log_warn("cell %s ended %s; retrying", "x\033]0;t", "timeout");
	{
		const char *want = "\033[2A\r\033[Jzbench: cell x?]0;t ended timeout; retrying\n"
				   "x?31m (id) tcg: boot ";
		const char *got = captured(f);

		if (strncmp(got, want, strlen(want)))
			fprintf(stderr, "warning above the block: got \"%s\"\n", got);
		CHECK(strncmp(got, want, strlen(want)) == 0);
	}
	capture();
	progress_end(&p);
	CHECK_STR(captured(f), "\033[2A\r\033[J");
	capture();
	log_set_quiet(1); /* run -q */
	post(&p, PROGRESS_LINE, 0, 0, 0, 7, "y");
	progress_tick(&p, 9);
	CHECK_STR(captured(f), "");
	capture();
	log_set_quiet(0);
	progress_release(&p);
	log_warn("after");
	CHECK_STR(captured(f), "zbench: after\n"); /* the board gave stderr back */
	capture();

	/* quiet on a terminal: no block, and warnings straight to stderr */
	log_set_quiet(1);
	progress_init(&p, 1, 1, 1, 80);
	progress_plan(&p, 0, 1);
	post(&p, PROGRESS_START, 0, 0, 0, 0, "q");
	log_warn("w");
	CHECK_STR(captured(f), "zbench: w\n");
	progress_release(&p);
	log_set_quiet(0);
}

int main(void)
{
	out_file = tmpfile();
	saved_stderr = dup(2);
	test_eta();
	test_skip_and_range();
	test_lines();
	CHECK(out_file != NULL && saved_stderr >= 0);
	test_output(out_file);
	return check_summary("progress");
}
