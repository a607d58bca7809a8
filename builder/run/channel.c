/* The guest channel, host side: one table of message types, one dispatch, the cell's state.
 *
 * A frame's payload goes through the same gate whatever its type: strict JSON (duplicate keys
 * rejected), an object with "v" and a known "type", hello first, then the type's required fields
 * with their JSON types. Only then does the type's handler run, and a handler reads no field
 * its entry does not require except optional ones it type-checks itself. */
#include "channel.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/version.h"
#include "matrix/phases.h"

#define PHASE_NAME_MAX 32 /* longer phase names are ignored */

static const struct {
	const char *name; /* in the record's "truncated" */
	size_t budget;
	int one; /* the budget is for the one message kept at a time, not a sum */
} streams[STREAM_COUNT] = {
	[STREAM_SAMPLES] = { "samples", GUEST_BUDGET_SAMPLES, 0 },
	[STREAM_TELEMETRY] = { "telemetry", GUEST_BUDGET_TELEMETRY, 0 },
	[STREAM_TELEMETRY_SUMMARY] = { "telemetry_summary", GUEST_BUDGET_TELEMETRY_SUMMARY, 1 },
	[STREAM_PHASES] = { "phases", GUEST_BUDGET_PHASES, 0 },
	[STREAM_EFFECTIVE] = { "effective", GUEST_BUDGET_EFFECTIVE, 1 },
	[STREAM_RESULT] = { "result", GUEST_BUDGET_RESULT, 1 },
	[STREAM_ERROR] = { "error", GUEST_BUDGET_ERROR, 1 },
	[STREAM_PHASE_RESULTS] = { "phase_results", GUEST_BUDGET_PHASE_RESULTS, 0 },
	[STREAM_CONSOLE] = { "console", GUEST_BUDGET_CONSOLE, 0 },
};

void cell_state_init(struct cell_state *st)
{
	memset(st, 0, sizeof(*st));
	st->phases = json_object();
	st->samples = json_array();
	st->live_iops[0] = st->live_iops[1] = -1;
	for (int s = 0; s < STREAM_COUNT; s++)
		st->budget[s] = streams[s].budget;
}

void cell_state_truncate(struct cell_state *st, enum guest_stream s)
{
	st->truncated |= 1u << s;
}

/* Take `cost` bytes of a stream's budget (for a stream kept one message at a time, whether the
 * message fits): 1, or 0 (the stream is then marked truncated) if they do not fit. */
static int stream_take(struct cell_state *st, enum guest_stream s, size_t cost)
{
	if (streams[s].one) {
		if (cost <= st->budget[s])
			return 1;
		cell_state_truncate(st, s);
		return 0;
	}
	if (cost > st->budget[s] - st->spent[s]) {
		cell_state_truncate(st, s);
		return 0;
	}
	st->spent[s] += cost;
	return 1;
}

/* What jansson spends holding a value, from above (measured with glibc malloc on x86-64: an
 * array of zeros 40 bytes an element, of empty objects 236, of empty strings 92; an object's
 * member about 97 bytes with a short key and a small integer). A JSON text can cost 80 times
 * its size once parsed, so budgets count this, not only the bytes received. Recursion is
 * bounded by jansson's parser depth (2048). */
static size_t json_cost(const json_t *v)
{
	size_t cost = 0, i;
	const char *key;
	json_t *m;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		cost = 256;
		json_object_foreach ((json_t *)v, key, m)
			cost += 64 + strlen(key) + json_cost(m);
		return cost;
	case JSON_ARRAY:
		cost = 144;
		json_array_foreach (v, i, m)
			cost += 16 + json_cost(m);
		return cost;
	case JSON_STRING:
		return 96 + json_string_length(v);
	case JSON_INTEGER:
	case JSON_REAL:
		return 48;
	default: /* true, false and null are shared */
		return 16;
	}
}

void cell_state_release(struct cell_state *st)
{
	json_decref(st->phases);
	json_decref(st->effective);
	json_decref(st->hello);
	json_decref(st->fio);
	json_decref(st->samples);
	json_decref(st->telemetry);
	json_decref(st->telemetry_summary);
	json_decref(st->error);
	json_decref(st->target);
	json_decref(st->phase_results);
	free(st->detail);
	free(st->current_phase);
	memset(st, 0, sizeof(*st));
}

void cell_verdict(struct cell_state *st, enum cell_outcome outcome, const char *fmt, ...)
{
	va_list ap;

	if (st->outcome != OUTCOME_NONE)
		return; /* the first verdict stands */
	st->outcome = outcome;
	va_start(ap, fmt);
	if (vasprintf(&st->detail, fmt, ap) < 0)
		st->detail = NULL;
	va_end(ap);
}

/* A protocol violation: recorded as an agent-error, and the stream is not trusted any more (the
 * runner stops the VM without waiting for a power-off). Returns -1. */
static int protocol_error(struct cell_state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int protocol_error(struct cell_state *st, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	cell_verdict(st, OUTCOME_AGENT_ERROR, "protocol: %s", why);
	st->broken = 1;
	return -1;
}

/* How many bytes of the UTF-8 string s to print so that at most `max` are taken and no
 * character is cut (guest strings are valid UTF-8: jansson checked them; the detail must stay
 * valid UTF-8 or the record could not hold it). */
static int utf8_prefix(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return (int)n;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return (int)max;
}

/* The envelope ("type", "v") is the channel's, not the record's. */
static void strip_envelope(json_t *msg)
{
	json_object_del(msg, "type");
	json_object_del(msg, "v");
}

/* The string s as JSON, at most `max` bytes of it: its head, or with tail set its end; never
 * cutting a UTF-8 character. */
static json_t *string_clipped(const char *s, size_t max, int tail)
{
	size_t n = strlen(s), from = 0;

	if (n <= max)
		return json_string(s);
	if (!tail)
		return json_stringn(s, (size_t)utf8_prefix(s, max));
	from = n - max;
	while (from < n && ((unsigned char)s[from] & 0xc0) == 0x80)
		from++;
	return json_stringn(s + from, n - from);
}

/* ---- the message types --------------------------------------------------------------------- */

/* msg's member `key` when it is an object (borrowed), else NULL: an optional field a handler
 * type-checks itself. */
static json_t *optional_object(const json_t *msg, const char *key)
{
	json_t *v = json_object_get(msg, key);

	return json_is_object(v) ? v : NULL;
}

/* The shortest and longest gap between two samples that gives a live rate: the engine samples
 * once a second; a gap outside these is a clock that jumped or a sample that went missing. */
#define LIVE_GAP_MIN 0.1
#define LIVE_GAP_MAX 60.0

/* No live rate until the next two samples (a new engine run: its counters start over). */
static void live_reset(struct cell_state *st)
{
	st->live_have = 0;
	st->live_iops[0] = st->live_iops[1] = -1;
}

/* The live IOPS from this sample and the one before: the counters are cumulative over one
 * engine run, `t` the guest's clock (absent: the host's arrival time). A counter that went
 * back, a gap out of range or a rate that is not finite and non-negative gives no rate and
 * starts over from this sample, so what the guest sends can only ever show as a plain number
 * or nothing. */
static void live_sample(struct cell_state *st, const json_t *msg, double now)
{
	json_t *tj = json_object_get(msg, "t");
	double t = json_is_number(tj) ? json_number_value(tj) : now;
	double ios[2] = { json_number_value(json_object_get(msg, "read_ios")),
			  json_number_value(json_object_get(msg, "write_ios")) };
	double gap = t - st->live_t, rate[2];
	int ok = st->live_have && gap >= LIVE_GAP_MIN && gap <= LIVE_GAP_MAX;

	for (int d = 0; d < 2 && ok; d++) {
		rate[d] = (ios[d] - st->live_ios[d]) / gap;
		ok = isfinite(rate[d]) && rate[d] >= 0;
	}
	if (ok) {
		st->live_iops[0] = rate[0];
		st->live_iops[1] = rate[1];
	} else {
		live_reset(st);
	}
	st->live_have = isfinite(t) && isfinite(ios[0]) && isfinite(ios[1]);
	st->live_t = t;
	st->live_ios[0] = ios[0];
	st->live_ios[1] = ios[1];
}

static int on_hello(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;

	if (st->said_hello)
		return protocol_error(st, "a second hello");
	st->said_hello = 1;
	st->t_hello = now;
	/* the record keeps these two, clipped */
	st->hello = json_pack("{s:o, s:o}", "agent",
			      string_clipped(json_string_value(json_object_get(msg, "agent")),
					     GUEST_HELLO_FIELD_MAX, 0),
			      "kernel",
			      string_clipped(json_string_value(json_object_get(msg, "kernel")),
					     GUEST_HELLO_FIELD_MAX, 0));
	json_object_set_new(st->phases, "hello", json_real(now - st->t_start));
	if (ch->on_hello && ch->on_hello(ch->arg, ch->err) < 0) {
		ch->fatal = 1;
		return -1;
	}
	return 0;
}

static int on_phase(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;
	const char *name = json_string_value(json_object_get(msg, "name"));

	if (strlen(name) >= PHASE_NAME_MAX)
		return 0;
	/* the workload, and each of its phases (an action has no samples), restart the progress
	 * clock */
	if (!strcmp(name, "workload") || !strncmp(name, "phase ", 6)) {
		st->t_workload = now;
		live_reset(st);
	}
	/* a new name costs a member of the phases object and its number */
	if (json_object_get(st->phases, name) ||
	    stream_take(st, STREAM_PHASES, 64 + strlen(name) + 48))
		json_object_set_new(st->phases, name, json_real(now - st->t_start));
	free(st->current_phase);
	st->current_phase = xstrdup(name);
	return 0;
}

static int on_sample(struct channel *ch, json_t *msg, size_t cost, double now)
{
	static const char *const counters[] = { "read_ios", "write_ios", "layout_bytes" };
	struct cell_state *st = ch->st;
	double mark = 0;

	for (size_t i = 0; i < ARRAY_SIZE(counters); i++)
		mark += json_number_value(json_object_get(msg, counters[i]));
	live_sample(st, msg, now);
	if (mark != st->progress_mark) {
		st->progress_mark = mark;
		st->t_progress = now;
	}
	if (stream_take(st, STREAM_SAMPLES, cost)) {
		strip_envelope(msg);
		json_array_append(st->samples, msg);
	}
	return 0;
}

/* Per-second figures, within their budget; the one summary (per-disk figures over the whole
 * workload) is kept apart. */
static int on_telemetry(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;

	strip_envelope(msg);
	if (json_is_true(json_object_get(msg, "summary"))) {
		if (!stream_take(st, STREAM_TELEMETRY_SUMMARY, cost))
			return 0;
		json_object_del(msg, "summary");
		json_decref(st->telemetry_summary);
		st->telemetry_summary = json_incref(msg);
		return 0;
	}
	if (!stream_take(st, STREAM_TELEMETRY, cost))
		return 0;
	if (!st->telemetry)
		st->telemetry = json_array();
	json_array_append(st->telemetry, msg);
	return 0;
}

static int on_effective(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;

	if (!stream_take(st, STREAM_EFFECTIVE, cost))
		return 0;
	json_decref(st->effective);
	st->effective = json_incref(msg);
	strip_envelope(st->effective);
	return 0;
}

static int on_result(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;
	json_t *fio = json_object_get(msg, "fio");

	if (!json_is_array(json_object_get(fio, "jobs")))
		return protocol_error(st, "a result without fio jobs");
	/* refused rather than dropped: without it the cell could only look like a failure */
	if (!stream_take(st, STREAM_RESULT, cost))
		return protocol_error(st,
				      "a result too large to keep (%zu bytes held, at most %zu)",
				      cost, st->budget[STREAM_RESULT]);
	json_decref(st->fio);
	st->fio = json_incref(fio);
	json_decref(st->target);
	st->target = json_incref(optional_object(msg, "target"));
	json_object_set_new(st->phases, "result", json_real(now - st->t_start));
	return 0;
}

/* One phase of a phased workload: its name (clipped), whether it is measured, its fio result,
 * its telemetry summary and the target's space figures (each kept only when an object). */
static int on_phase_result(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;
	json_t *fio = json_object_get(msg, "fio"), *p;

	if (!json_is_array(json_object_get(fio, "jobs")))
		return protocol_error(st, "a phase_result without fio jobs");
	if (!stream_take(st, STREAM_PHASE_RESULTS, cost))
		return 0;
	p = json_pack(
	    "{s:o, s:b, s:O}", "name",
	    string_clipped(json_string_value(json_object_get(msg, "name")), PHASE_NAME_MAX, 0),
	    "measured", json_is_true(json_object_get(msg, "measured")), "fio", fio);
	if (optional_object(msg, "telemetry_summary"))
		json_object_set(p, "telemetry_summary", optional_object(msg, "telemetry_summary"));
	if (optional_object(msg, "target"))
		json_object_set(p, "target", optional_object(msg, "target"));
	/* what a wait for a state reached (guest/phase.h): kept as sent, within the budget */
	if (optional_object(msg, "until"))
		json_object_set(p, "until", optional_object(msg, "until"));
	if (!st->phase_results)
		st->phase_results = json_array();
	json_array_append_new(st->phase_results, p);
	return 0;
}

/* An error message too large to keep whole: its step, its message's first KiB, its output's
 * last 16 KiB (where a failing command says why) and its time. */
static json_t *error_clipped(const json_t *msg)
{
	const char *output = json_string_value(json_object_get(msg, "output"));
	json_t *t = json_object_get(msg, "t");
	json_t *e = json_object();

	json_object_set_new(e, "step",
			    string_clipped(json_string_value(json_object_get(msg, "step")), 64, 0));
	json_object_set_new(
	    e, "message",
	    string_clipped(json_string_value(json_object_get(msg, "message")), 1024, 0));
	if (output)
		json_object_set_new(e, "output", string_clipped(output, 16 << 10, 1));
	if (json_is_number(t))
		json_object_set(e, "t", t);
	return e;
}

static int on_error(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;
	const char *step = json_string_value(json_object_get(msg, "step"));
	const char *text = json_string_value(json_object_get(msg, "message"));

	json_decref(st->error);
	if (stream_take(st, STREAM_ERROR, cost)) {
		st->error = json_incref(msg);
		strip_envelope(st->error);
	} else {
		st->error = error_clipped(msg);
	}
	cell_verdict(st, !strcmp(step, "workload") ? OUTCOME_WORKLOAD_ERROR : OUTCOME_AGENT_ERROR,
		     "step '%.*s': %.*s", utf8_prefix(step, 32), step, utf8_prefix(text, 400),
		     text);
	return 0;
}

/* The guest's setup is over: its disks get their limits before it measures. Asked once; a
 * second ask is answered again (the limits stay as they are). */
static int on_limits(struct channel *ch, json_t *msg, size_t cost, double now)
{
	struct cell_state *st = ch->st;

	if (!st->t_limits) {
		st->t_limits = now;
		json_object_set_new(st->phases, "limits", json_real(now - st->t_start));
	}
	if (ch->on_limits && ch->on_limits(ch->arg, ch->err) < 0) {
		ch->fatal = 1;
		return -1;
	}
	return 0;
}

static int on_bye(struct channel *ch, json_t *msg, size_t cost, double now)
{
	ch->st->got_bye = 1;
	return 0;
}

static int on_heartbeat(struct channel *ch, json_t *msg, size_t cost, double now)
{
	return 0;
}

enum field_type { FIELD_STRING, FIELD_NUMBER, FIELD_OBJECT };

struct msg_field {
	const char *name;
	enum field_type type;
};

#define MSG_FIELDS_MAX 3

/* One message type from the guest. `required` lists the fields its handler relies on, with
 * their types (the list ends at the first NULL name); `handle` runs only once they are there,
 * gets the parsed message (it may keep a reference) and what keeping all of it would cost
 * (json_cost plus the payload's bytes), and returns 0, or < 0 after a protocol error or a
 * host-side failure. */
struct msg_type {
	const char *type;
	struct msg_field required[MSG_FIELDS_MAX];
	int (*handle)(struct channel *ch, json_t *msg, size_t cost, double now);
};

static const struct msg_type msg_types[] = {
	{ "hello", { { "agent", FIELD_STRING }, { "kernel", FIELD_STRING } }, on_hello },
	{ "phase", { { "name", FIELD_STRING } }, on_phase },
	{ "heartbeat", { { NULL } }, on_heartbeat },
	{ "sample",
	  { { "read_ios", FIELD_NUMBER },
	    { "write_ios", FIELD_NUMBER },
	    { "layout_bytes", FIELD_NUMBER } },
	  on_sample },
	{ "telemetry", { { NULL } }, on_telemetry },
	{ "effective", { { NULL } }, on_effective },
	{ "result", { { "fio", FIELD_OBJECT } }, on_result },
	{ "phase_result", { { "name", FIELD_STRING }, { "fio", FIELD_OBJECT } }, on_phase_result },
	{ "error", { { "step", FIELD_STRING }, { "message", FIELD_STRING } }, on_error },
	{ "limits", { { NULL } }, on_limits },
	{ "bye", { { NULL } }, on_bye },
};

static const char *const field_type_names[] = {
	[FIELD_STRING] = "a string",
	[FIELD_NUMBER] = "a number",
	[FIELD_OBJECT] = "an object",
};

static int field_has_type(const json_t *v, enum field_type t)
{
	switch (t) {
	case FIELD_STRING:
		return json_is_string(v);
	case FIELD_NUMBER:
		return json_is_number(v);
	case FIELD_OBJECT:
		return json_is_object(v);
	}
	return 0;
}

static const struct msg_type *msg_type_find(const char *type)
{
	for (size_t i = 0; i < ARRAY_SIZE(msg_types); i++)
		if (!strcmp(msg_types[i].type, type))
			return &msg_types[i];
	return NULL;
}

/* The gate a message of `type` passes before its handler: hello first, a known type, its
 * required fields. Returns the message's type, or NULL after a protocol error. */
static const struct msg_type *msg_check(struct cell_state *st, const char *type, const json_t *msg)
{
	const struct msg_type *mt;

	if (!st->said_hello && strcmp(type, "hello")) {
		protocol_error(st, "first message is '%.*s', not hello", utf8_prefix(type, 32),
			       type);
		return NULL;
	}
	mt = msg_type_find(type);
	if (!mt) {
		protocol_error(st, "unknown message type '%.*s'", utf8_prefix(type, 32), type);
		return NULL;
	}
	for (const struct msg_field *f = mt->required; f < mt->required + MSG_FIELDS_MAX && f->name;
	     f++) {
		if (!field_has_type(json_object_get(msg, f->name), f->type)) {
			protocol_error(st, "a '%s' message without '%s' (%s)", mt->type, f->name,
				       field_type_names[f->type]);
			return NULL;
		}
	}
	return mt;
}

int channel_frame(void *arg, const char *payload, size_t len)
{
	struct channel *ch = arg;
	struct cell_state *st = ch->st;
	json_t *msg = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL);
	const struct msg_type *mt;
	const char *type;
	double now = now_monotonic();
	int rc;

	if (!json_is_object(msg)) {
		json_decref(msg);
		return protocol_error(st, "a message is not a JSON object");
	}
	type = json_string_value(json_object_get(msg, "type"));
	if (!type || json_integer_value(json_object_get(msg, "v")) != ZB_PROTO_VERSION) {
		json_decref(msg);
		return protocol_error(st, "a message lacks type or version %d", ZB_PROTO_VERSION);
	}
	st->t_last_msg = now;
	mt = msg_check(st, type, msg);
	rc = mt ? mt->handle(ch, msg, len + json_cost(msg), now) : -1;
	json_decref(msg);
	return rc;
}

void channel_init(struct channel *ch, struct cell_state *st, size_t max_payload)
{
	memset(ch, 0, sizeof(*ch));
	proto_decoder_init(&ch->dec, max_payload);
	ch->st = st;
}

void channel_release(struct channel *ch)
{
	proto_decoder_release(&ch->dec);
}

int channel_feed(struct channel *ch, const char *buf, size_t len)
{
	if (ch->fatal || ch->st->broken || ch->dec.state == PROTO_ERROR)
		return -1;
	if (proto_decoder_feed(&ch->dec, buf, len, channel_frame, ch) < 0) {
		if (!ch->fatal)
			protocol_error(ch->st, "%s", ch->dec.err);
		return -1;
	}
	return 0;
}

/* The phase whose result is the cell's (the last measured one), NULL without phases: its
 * telemetry lines are the ones the cell's window witness reads. */
static const char *last_measured(const struct cell_state *st)
{
	const char *name = NULL;
	const json_t *p;
	size_t i;

	json_array_foreach (st->phase_results, i, p)
		if (json_is_true(json_object_get(p, "measured")))
			name = json_string_value(json_object_get(p, "name"));
	return name;
}

void cell_state_record(const struct cell_state *st, json_t *rec)
{
	json_object_set(rec, "phases", st->phases);
	if (st->hello)
		json_object_set(rec, "guest", st->hello);
	if (st->effective)
		json_object_set(rec, "effective", st->effective);
	if (st->fio) {
		json_t *w = phases_measured(st->fio, st->telemetry_summary, st->target);

		phases_window_measured(w, st->telemetry, st->samples, last_measured(st));
		json_object_set(rec, "fio", st->fio);
		json_object_set_new(rec, "witness", w);
	}
	if (st->target)
		json_object_set(rec, "target", st->target);
	if (st->phase_results) {
		json_t *p, *w, *copy = json_deep_copy(st->phase_results);
		size_t i;

		json_array_foreach (copy, i, p) {
			w = phases_measured(json_object_get(p, "fio"),
					    json_object_get(p, "telemetry_summary"),
					    json_object_get(p, "target"));
			phases_window_measured(w, st->telemetry, st->samples,
					       json_string_value(json_object_get(p, "name")));
			json_object_set_new(p, "witness", w);
		}
		json_object_set_new(rec, "phase_results", copy);
	}
	if (json_array_size(st->samples))
		json_object_set(rec, "samples", st->samples);
	if (json_array_size(st->telemetry))
		json_object_set(rec, "telemetry", st->telemetry);
	if (st->telemetry_summary)
		json_object_set(rec, "telemetry_summary", st->telemetry_summary);
	if (st->error)
		json_object_set(rec, "error", st->error);
	if (st->truncated) {
		json_t *names = json_array();

		for (int s = 0; s < STREAM_COUNT; s++)
			if (st->truncated & (1u << s))
				json_array_append_new(names, json_string(streams[s].name));
		json_object_set_new(rec, "truncated", names);
	}
}
