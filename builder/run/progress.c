/* The progress board of a run (progress.h). */
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"

#define PROGRESS_REDRAW 1.0 /* terminal: seconds between redraws when nothing happened */

static void note_sink(const char *line, void *arg);

void progress_init(struct progress *p, size_t ncells, int nworkers, int tty, int cols)
{
	memset(p, 0, sizeof(*p));
	/* quiet draws no block: its warnings go to stderr as lines, as without a terminal */
	p->tty = tty && !log_is_quiet();
	if (p->tty)
		log_set_sink(note_sink, p);
	p->cols = cols > 0 ? cols : 80;
	p->nworkers = nworkers > 0 ? nworkers : 1;
	p->fd = -1;
	p->slot = xcalloc((size_t)p->nworkers, sizeof(*p->slot));
	p->ncells = ncells;
	p->pending = xcalloc(ncells + 1, sizeof(*p->pending));
	p->sum = xcalloc(ncells + 1, sizeof(*p->sum));
	p->n = xcalloc(ncells + 1, sizeof(*p->n));
}

void progress_release(struct progress *p)
{
	if (p->tty)
		log_set_sink(NULL, NULL);
	free(p->slot);
	free(p->pending);
	free(p->sum);
	free(p->n);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

void progress_plan(struct progress *p, size_t cell, int tasks)
{
	if (cell >= p->ncells)
		return;
	p->pending[cell] += tasks;
	p->total += tasks;
}

/* ---- the estimate -------------------------------------------------------------------------- */

/* The expected seconds of a task of `cell`: its own finished tasks' mean, else `mean`. */
static double cell_estimate(const struct progress *p, int32_t cell, double mean)
{
	return p->n[cell] ? p->sum[cell] / p->n[cell] : mean;
}

double progress_eta(const struct progress *p, double now)
{
	double all = 0, mean, work = 0, longest = 0, eta;
	int finished = 0, running = 0, queued = 0, par;

	for (size_t c = 0; c < p->ncells; c++) {
		all += p->sum[c];
		finished += p->n[c];
	}
	if (!finished)
		return -1;
	mean = all / finished;
	for (size_t c = 0; c < p->ncells; c++) {
		int q = p->pending[c];

		for (int w = 0; w < p->nworkers; w++)
			q -= p->slot[w].busy && p->slot[w].cell == (int32_t)c;
		if (q > 0) {
			work += q * cell_estimate(p, (int32_t)c, mean);
			queued += q;
		}
	}
	for (int w = 0; w < p->nworkers; w++) {
		double left;

		if (!p->slot[w].busy)
			continue;
		left = cell_estimate(p, p->slot[w].cell, mean) - (now - p->slot[w].t_start);
		if (left < 0)
			left = 0;
		work += left;
		if (left > longest)
			longest = left;
		running++;
	}
	par = running + queued < p->nworkers ? running + queued : p->nworkers;
	if (par == 0)
		return 0;
	eta = work / par;
	return eta > longest ? eta : longest;
}

/* ---- the lines ----------------------------------------------------------------------------- */

/* ", read 1234 IOPS, write 56 IOPS" for the directions with I/O; ", 0 IOPS" for none; "" if
 * the cell has sent no two samples yet. */
static void iops_text(const double iops[2], char *buf, size_t len)
{
	int w = 0;

	buf[0] = '\0';
	if (iops[0] < 0 || iops[1] < 0)
		return;
	if (iops[0] > 0)
		w = snprintf(buf, len, ", read %.0f IOPS", iops[0]);
	if (iops[1] > 0 && w >= 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, ", write %.0f IOPS", iops[1]);
	if (!buf[0])
		snprintf(buf, len, ", 0 IOPS");
}

static void eta_text(const struct progress *p, double now, char *buf, size_t len)
{
	double eta = progress_eta(p, now);
	char d[32];

	if (eta < 0)
		snprintf(buf, len, "ETA after the first cell");
	else
		snprintf(buf, len, "ETA %s", format_duration(eta, d, sizeof(d)));
}

void progress_worker_text(const struct progress *p, int w, double now, char *buf, size_t len)
{
	const struct progress_slot *s = &p->slot[w];
	char el[32], io[96], who[16] = "";

	if (p->nworkers > 1)
		snprintf(who, sizeof(who), "w%d ", w + 1);
	if (!s->busy) {
		snprintf(buf, len, "%sidle", who);
		return;
	}
	format_duration(now - s->t_start, el, sizeof(el));
	iops_text(s->iops, io, sizeof(io));
	snprintf(buf, len, "%s%s: %s %s%s", who, s->head, s->phase[0] ? s->phase : "boot", el, io);
}

void progress_status_text(const struct progress *p, double now, char *buf, size_t len)
{
	char eta[64];
	int busy = 0;

	for (int w = 0; w < p->nworkers; w++)
		busy += p->slot[w].busy;
	eta_text(p, now, eta, sizeof(eta));
	snprintf(buf, len, "[%d/%d] %d ok, %d running, %s", p->done, p->total, p->ok, busy, eta);
}

/* ---- drawing ------------------------------------------------------------------------------- */

/* Terminal: the block (the worker lines, then the status line), after `above` (a line to keep
 * above it, or NULL). */
static void draw(struct progress *p, const char *above, double now)
{
	int n = 0, rows = p->nworkers + 1;
	char **text = xcalloc((size_t)rows, sizeof(*text));

	for (int w = 0; w < p->nworkers; w++) {
		text[n] = xmalloc(2 * PROGRESS_TEXT_MAX);
		progress_worker_text(p, w, now, text[n++], 2 * PROGRESS_TEXT_MAX);
	}
	text[n] = xmalloc(256);
	progress_status_text(p, now, text[n++], 256);
	/* a line as wide as the terminal would wrap and the next redraw would miss a row: cut to
	 * cols - 4 bytes, so with the "..." of a cut it stays within cols - 1 columns */
	log_block(p->drawn, above, (const char *const *)text, n,
		  p->cols > 8 ? (size_t)p->cols - 4 : 4);
	p->drawn = n;
	p->t_drawn = now;
	for (int i = 0; i < n; i++)
		free(text[i]);
	free(text);
}

/* Without a terminal: worker w's line, plain, with the counts and the ETA. */
static void print_plain(struct progress *p, int w, double now)
{
	char line[2 * PROGRESS_TEXT_MAX], eta[64];

	progress_worker_text(p, w, now, line, sizeof(line));
	eta_text(p, now, eta, sizeof(eta));
	log_progress(LOG_NEWLINE, "[%d/%d] %s, %s", p->done, p->total, line, eta);
	p->slot[w].t_printed = now;
	snprintf(p->slot[w].printed_phase, sizeof(p->slot[w].printed_phase), "%s",
		 p->slot[w].phase);
}

/* A line that stays: above the block on a terminal, appended elsewhere. */
static void print_kept(struct progress *p, const char *line, double now)
{
	if (p->tty)
		draw(p, line, now);
	else
		log_progress(LOG_NEWLINE, "%s", line);
}

void progress_tick(struct progress *p, double now)
{
	if (p->tty && now - p->t_drawn >= PROGRESS_REDRAW)
		draw(p, NULL, now);
}

void progress_end(struct progress *p)
{
	if (p->tty && p->drawn)
		log_block(p->drawn, NULL, NULL, 0, 4);
	p->drawn = 0;
}

/* ---- events -------------------------------------------------------------------------------- */

/* A task of worker slot s, of cell `cell`, ended: it is done, and its time counts for its
 * cell's estimate if the board saw it start. */
static void task_done(struct progress *p, struct progress_slot *s, int32_t cell, int ok, double now)
{
	if (s->busy) {
		cell = s->cell;
		p->sum[cell] += now - s->t_start;
		p->n[cell]++;
	}
	if (cell >= 0 && (size_t)cell < p->ncells && p->pending[cell] > 0)
		p->pending[cell]--;
	s->busy = 0;
	p->done++;
	p->ok += ok != 0;
}

void progress_apply(struct progress *p, struct progress_event *ev, double now)
{
	struct progress_slot *s;
	char line[PROGRESS_TEXT_MAX + 32];

	if (ev->worker < 0 || ev->worker >= p->nworkers)
		return;
	s = &p->slot[ev->worker];
	ev->text[sizeof(ev->text) - 1] = '\0';
	switch (ev->kind) {
	case PROGRESS_START:
		if (ev->cell < 0 || (size_t)ev->cell >= p->ncells)
			return;
		*s = (struct progress_slot){ .busy = 1, .cell = ev->cell, .t_start = ev->t };
		s->iops[0] = s->iops[1] = -1;
		snprintf(s->head, sizeof(s->head), "%s", ev->text);
		break;
	case PROGRESS_UPDATE:
		if (!s->busy)
			return;
		/* a cut inside a character is shown as '?' by the sanitiser */
		snprintf(s->phase, sizeof(s->phase), "%.*s", (int)sizeof(s->phase) - 1, ev->text);
		s->iops[0] = ev->iops[0];
		s->iops[1] = ev->iops[1];
		if (!p->tty && (strcmp(s->phase, s->printed_phase) ||
				now - s->t_printed >= PROGRESS_PLAIN_EVERY))
			print_plain(p, ev->worker, now);
		break;
	case PROGRESS_LINE:
		snprintf(line, sizeof(line), "[%d/%d] %s", p->done + 1, p->total, ev->text);
		print_kept(p, line, now);
		return;
	case PROGRESS_DONE:
		task_done(p, s, ev->cell, ev->ok, now);
		break;
	case PROGRESS_NOTE:
		print_kept(p, ev->text, now);
		return;
	case PROGRESS_SKIP:
		if (ev->cell >= 0 && (size_t)ev->cell < p->ncells && p->pending[ev->cell] > 0)
			p->pending[ev->cell]--;
		p->done++;
		p->ok += ev->ok != 0;
		return;
	default:
		return;
	}
	if (p->tty)
		draw(p, NULL, now);
}

void progress_post(struct progress *p, struct progress_event *ev)
{
	ev->worker = p->self;
	if (p->fd < 0) {
		progress_apply(p, ev, now_monotonic());
		return;
	}
	/* One write of less than PIPE_BUF: atomic. A parent that went away costs the lines. */
	while (write(p->fd, ev, sizeof(*ev)) < 0 && errno == EINTR)
		;
}

/* log.c's warnings and information while the block is on the terminal: in a worker posted to
 * the parent, in the parent kept above the block. */
static void note_sink(const char *line, void *arg)
{
	struct progress *p = arg;
	struct progress_event ev = { .kind = PROGRESS_NOTE };

	snprintf(ev.text, sizeof(ev.text), "%.*s", (int)sizeof(ev.text) - 1, line);
	progress_post(p, &ev);
}
