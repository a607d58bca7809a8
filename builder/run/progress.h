/* The progress of a run on stderr (docs/reports.md, "Progress"): one board per run that knows
 * every planned task, what each worker is doing, the live IOPS of its cell, how long finished
 * cells took and so the time left (ETA). On a terminal it keeps a block of lines at the bottom,
 * one per worker and a status line, redrawn in place; elsewhere it appends plain lines without
 * escape codes. Everything goes out through log.c (sanitised, silent with -q).
 *
 * The -j and --hosts workers are processes of their own: each posts its events to the parent
 * over a pipe (struct progress_event, one write() each), and the parent, which owns the board,
 * applies them and draws. A serial run applies its events to its own board. */
#ifndef ZB_PROGRESS_H
#define ZB_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define PROGRESS_TEXT_MAX  480 /* bytes of an event's text, with its NUL */
#define PROGRESS_PHASE_MAX 48  /* bytes of a phase name kept, with its NUL */
/* Without a terminal: a busy worker's line at least this often (seconds), besides one per
 * phase change, so a CI log shows the live IOPS of a long phase. */
#define PROGRESS_PLAIN_EVERY 10.0

enum progress_kind {
	PROGRESS_START = 1, /* a worker takes a task: `cell`, `t` its start, `text` its head */
	PROGRESS_UPDATE,    /* the task's attempt now: `text` the phase, `iops` live figures */
	PROGRESS_LINE,	    /* an attempt ended: `text` its line (outcome, figures, time) */
	PROGRESS_DONE,	    /* the task ended (`ok`: its last attempt was ok): counted done */
	PROGRESS_SKIP,	    /* the task was settled by an earlier run: counted done, no time */
	PROGRESS_NOTE,	    /* a worker's warning (log.c's sink): `text`, kept as a line */
};

/* One event of one worker. Fixed size, well under PIPE_BUF, so a worker's write() of one is
 * atomic and the parent reads whole events. `text` is NUL-terminated by the receiver whatever
 * arrives, and sanitised when printed (it holds guest and matrix text). */
struct progress_event {
	int32_t kind, worker, cell, ok;
	double t;	/* START: the task's start, CLOCK_MONOTONIC (shared by the processes) */
	double iops[2]; /* UPDATE: live read and write IOPS from the last samples; < 0: none */
	char text[PROGRESS_TEXT_MAX];
};

/* What one worker is doing. */
struct progress_slot {
	int busy;
	int32_t cell;
	double t_start;	  /* the task's start */
	double t_printed; /* without a terminal: when its last plain line was printed */
	double iops[2];
	char head[PROGRESS_TEXT_MAX];
	char phase[PROGRESS_PHASE_MAX], printed_phase[PROGRESS_PHASE_MAX];
};

struct progress {
	int tty;      /* stderr is a terminal: redraw the block in place */
	int cols;     /* the terminal's width (lines are cut to it, so the block's height holds) */
	int nworkers; /* slots: 1 for a serial run */
	int fd;	      /* >= 0 in a worker: post events to this pipe instead of applying them */
	int self;     /* this process's worker index (its events' `worker`) */
	struct progress_slot *slot;
	size_t ncells;	 /* matrix cells */
	int *pending;	 /* per cell: tasks planned and not yet done (running ones included) */
	double *sum;	 /* per cell: seconds its finished tasks took */
	int *n;		 /* per cell: how many finished */
	int total, done; /* tasks planned; done (finished or skipped) */
	int ok;		 /* tasks whose last attempt was ok */
	int drawn;	 /* terminal: lines of the block on the screen now */
	double t_drawn;	 /* terminal: the block's last redraw */
};

/* A board for `ncells` matrix cells and `nworkers` workers (1: serial); `tty` says whether
 * stderr is a terminal and `cols` its width (0: 80). Nothing planned yet. With a terminal
 * (and not quiet) the board takes log.c's warnings and information (log_set_sink()) so they
 * stay above its block, in this process and in the workers forked from it; until
 * progress_release(). */
void progress_init(struct progress *p, size_t ncells, int nworkers, int tty, int cols);
void progress_release(struct progress *p);

/* `tasks` more tasks of cell `cell` will run (a repeat, an image side, an adaptive repeat). */
void progress_plan(struct progress *p, size_t cell, int tasks);

/* An event of this process: written to the parent's pipe in a worker (p->fd >= 0), else
 * applied here (progress_apply() at the current time). `ev->worker` is set to p->self. */
void progress_post(struct progress *p, struct progress_event *ev);

/* Fold one event into the board at time `now` and print what it changes. Events with a
 * worker or cell out of range are ignored (they come from our own workers, but a board never
 * indexes by an unchecked number). */
void progress_apply(struct progress *p, struct progress_event *ev, double now);

/* Terminal: redraw the block if a second has passed (elapsed times tick). */
void progress_tick(struct progress *p, double now);

/* Terminal: erase the block (before the run's closing lines). */
void progress_end(struct progress *p);

/* Seconds left at `now`, or < 0 while no task has finished. Each queued task is estimated by
 * the mean time of its own cell's finished tasks (repeats of a cell take alike), else by the
 * mean of every finished task; a running one by that estimate less its elapsed time (at least
 * 0). The work left is shared by the workers that can still be busy (at most one per task
 * left), and is never less than the longest running task's remainder. */
double progress_eta(const struct progress *p, double now);

/* The text (unsanitised: log.c does that) of worker w's line and of the status line. */
void progress_worker_text(const struct progress *p, int w, double now, char *buf, size_t len);
void progress_status_text(const struct progress *p, double now, char *buf, size_t len);

#endif
