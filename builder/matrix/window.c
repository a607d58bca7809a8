/* What a phase measured inside the engine's timed window (phases.h, phases_window_measured()).
 *
 * The phase's telemetry summary runs from the engine's start until it exits, so it includes what
 * the kernel wrote back while the engine sat in close() after its timed window (docs/engine.md,
 * "Why the zvol writes were fast"). Here the window comes from the engine's own per-second
 * samples (cumulative byte counters, guest clock) and the disks' bytes from the per-second
 * telemetry lines (the same clock: both stamped by the agent when it sends them), each line's
 * bytes prorated by its overlap with the window. Records are untrusted input: a figure that is
 * not a finite number in its range makes its line or sample unbelieved (skipped), never a crash
 * or a made-up share. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "phases.h"

#define TIME_MAX     1e9  /* seconds of guest clock; beyond it a "t" is not believed */
#define INTERVAL_MAX 3600 /* a telemetry line covering more than an hour is not believed */
#define KBPS_MAX     1e12 /* a disk's kB/s */
#define BYTES_MAX    1e18 /* an engine counter */
#define COVER_MIN    0.5  /* the share of the window the telemetry must cover */
#define GAP_MAX                                                                                    \
	3 /* the engine samples once a second: a longer gap in the window hides                    \
	   * when its bytes moved (fio's last status comes after close()) */

/* An interval (a, b] and the read and write bytes that moved in it. */
struct span {
	double a, b, r, w;
};

struct spans {
	struct span *v;
	size_t n, cap;
};

static void spans_add(struct spans *s, struct span x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n++] = x;
}

/* Whether o.key is a finite number in [lo, hi], into *out. */
static int num_in(const json_t *o, const char *key, double lo, double hi, double *out)
{
	const json_t *v = json_object_get(o, key);
	double d;

	if (!json_is_number(v))
		return 0;
	d = json_number_value(v);
	if (!isfinite(d) || d < lo || d > hi)
		return 0;
	*out = d;
	return 1;
}

/* A telemetry line as the interval it covers and its disks' bytes; 0 if not believable. */
static int line_span(const json_t *l, struct span *s)
{
	const json_t *disks = json_object_get(l, "disks"), *d;
	double t, iv, r = 0, w = 0, rk, wk;
	const char *k;

	if (!num_in(l, "t", -TIME_MAX, TIME_MAX, &t) ||
	    !num_in(l, "interval", 1e-6, INTERVAL_MAX, &iv) || !json_object_size(disks))
		return 0;
	json_object_foreach ((json_t *)disks, k, d) {
		if (!num_in(d, "r_kbps", 0, KBPS_MAX, &rk) ||
		    !num_in(d, "w_kbps", 0, KBPS_MAX, &wk))
			return 0;
		r += rk;
		w += wk;
	}
	*s = (struct span){ t - iv, t, r * iv * 1024, w * iv * 1024 };
	return 1;
}

/* Whether line `l` is phase `phase`'s (NULL: a workload without phases, lines without one). */
static int line_of(const json_t *l, const char *phase)
{
	const json_t *p = json_object_get(l, "phase");

	return phase ? json_is_string(p) && !strcmp(json_string_value(p), phase) : !p;
}

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return (a->a > b->a) - (a->a < b->a);
}

/* The phase's believable telemetry lines, sorted by start, into *tel; the engine's span
 * [*start, *next): from the phase's first line's start (the engine started with it) to the
 * start of the first other line after the phase's last (the next engine run's). 0 if none. */
static int phase_lines(const json_t *telemetry, const char *phase, struct spans *tel, double *start,
		       double *next)
{
	const json_t *l;
	double end = -INFINITY;
	struct span s;
	size_t i;

	*start = INFINITY;
	*next = INFINITY;
	json_array_foreach (telemetry, i, l) {
		if (line_of(l, phase) && line_span(l, &s)) {
			spans_add(tel, s);
			*start = fmin(*start, s.a);
			end = fmax(end, s.b);
		}
	}
	json_array_foreach (telemetry, i, l) {
		if (!line_of(l, phase) && line_span(l, &s) && s.a >= end)
			*next = fmin(*next, s.a);
	}
	if (tel->n)
		qsort(tel->v, tel->n, sizeof(*tel->v), span_cmp);
	return tel->n > 0;
}

/* One engine status sample: time, counters, and whether its interval was untimed work. */
struct counters {
	double t, r, w, layout;
};

static int sample_of(const json_t *o, struct counters *c, int *untimed, int *done)
{
	const json_t *ph = json_object_get(o, "phase");
	const char *p = json_string_value(ph);

	c->layout = 0;
	if (!json_is_object(o) || (ph && !p) || !num_in(o, "t", -TIME_MAX, TIME_MAX, &c->t) ||
	    !num_in(o, "read_bytes", 0, BYTES_MAX, &c->r) ||
	    !num_in(o, "write_bytes", 0, BYTES_MAX, &c->w))
		return 0;
	if (json_object_get(o, "layout_bytes") &&
	    !num_in(o, "layout_bytes", 0, BYTES_MAX, &c->layout))
		return 0;
	/* the engine names its phase "layout" while it lays files out; "ramp" is not timed */
	*untimed = p && (!strcmp(p, "layout") || !strcmp(p, "ramp"));
	*done = p && !strcmp(p, "done"); /* the engine's last line: what follows is another run's */
	return 1;
}

/* The engine's timed window among `samples` in [start, next): the sample intervals from the
 * first in which its counters moved to the last, after the last untimed interval (layout or
 * ramp, or one in which the layout counter moved) and the last counter reset (fio starts its
 * counters over after ramp_time; a new engine run starts at 0), up to the engine's "done" line
 * (a phase without telemetry lines of its own runs before the next one's). Into *eng; its count. */
static size_t engine_window(const json_t *samples, double start, double next, struct spans *eng)
{
	struct counters prev = { start, 0, 0, 0 }, c;
	size_t i, first = 0, last = 0; /* the moving spans are eng[first, last) */
	const json_t *o;
	int untimed, done = 0;

	json_array_foreach (samples, i, o) {
		if (done)
			break;
		if (!sample_of(o, &c, &untimed, &done) || c.t < prev.t || c.t < start ||
		    c.t >= next) {
			done = 0;
			continue;
		}
		if (untimed || c.layout != prev.layout || c.r < prev.r || c.w < prev.w) {
			eng->n = first = last = 0;
			prev = c;
			continue;
		}
		if (c.t == prev.t)
			continue;
		spans_add(eng, (struct span){ prev.t, c.t, c.r - prev.r, c.w - prev.w });
		if (c.r > prev.r || c.w > prev.w) {
			if (first == last)
				first = eng->n - 1;
			last = eng->n;
		}
		prev = c;
	}
	if (first < last)
		memmove(eng->v, eng->v + first, (last - first) * sizeof(*eng->v));
	eng->n = last - first;
	for (i = 0; i < eng->n; i++)
		if (eng->v[i].b - eng->v[i].a > GAP_MAX)
			eng->n = 0;
	return eng->n;
}

static double overlap(double a, double b, double c, double d)
{
	return fmax(0, fmin(b, d) - fmax(a, c));
}

/* The shares over the part of the window the lines cover: the lines' bytes prorated to the
 * window, the engine's bytes of each sample interval prorated to the lines' cover of it. */
static void window_shares(json_t *witness, const struct spans *tel, const struct spans *eng)
{
	double ws = eng->v[0].a, we = eng->v[eng->n - 1].b;
	double dr = 0, dw = 0, er = 0, ew = 0, covered = 0;
	size_t j = 0;

	for (size_t k = 0; k < tel->n; k++) {
		const struct span *l = &tel->v[k];
		double f = overlap(l->a, l->b, ws, we) / (l->b - l->a);

		dr += l->r * f;
		dw += l->w * f;
	}
	for (size_t i = 0; i < eng->n; i++) {
		const struct span *e = &eng->v[i];
		double cov = 0, len = e->b - e->a;

		/* lines are sorted by start and the engine's spans follow each other */
		while (j < tel->n && tel->v[j].b <= e->a)
			j++;
		for (size_t k = j; k < tel->n && tel->v[k].a < e->b; k++)
			cov += overlap(e->a, e->b, tel->v[k].a, tel->v[k].b);
		cov = fmin(cov, len);
		er += e->r * cov / len;
		ew += e->w * cov / len;
		covered += cov;
	}
	if (!(covered >= COVER_MIN * (we - ws)) || !isfinite(dr + dw))
		return;
	phases_set_ratio(witness, "window_disk_read_share", dr, er);
	phases_set_ratio(witness, "window_disk_write_share", dw, ew);
	json_object_set_new(witness, "window_seconds", json_real(covered));
}

void phases_window_measured(json_t *witness, const json_t *telemetry, const json_t *samples,
			    const char *phase)
{
	struct spans tel = { 0 }, eng = { 0 };
	double start, next;

	if (json_is_array(telemetry) && json_is_array(samples) &&
	    phase_lines(telemetry, phase, &tel, &start, &next) &&
	    engine_window(samples, start, next, &eng))
		window_shares(witness, &tel, &eng);
	free(tel.v);
	free(eng.v);
}
