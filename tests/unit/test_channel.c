/* The guest channel's host side (builder/run/channel.c): a session as the agent sends it, and every
 * way a guest can break the protocol, through the real decoder, dispatch and cell state. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "run/channel.h"
#include "run/outcome.h"

static int hellos, limits;

static int count_hello(void *arg, struct zb_error *err)
{
	hellos++;
	return 0;
}

static int count_limits(void *arg, struct zb_error *err)
{
	limits++;
	return 0;
}

static int fail_hello(void *arg, struct zb_error *err)
{
	return error_set(err, EPIPE, "sending the job: broken pipe");
}

/* Frame one payload and feed it; returns channel_feed's result. */
static int send(struct channel *ch, const char *payload)
{
	char head[24];
	int rc;

	snprintf(head, sizeof(head), "%zu:", strlen(payload));
	rc = channel_feed(ch, head, strlen(head));
	if (rc == 0)
		rc = channel_feed(ch, payload, strlen(payload));
	if (rc == 0)
		rc = channel_feed(ch, "\n", 1);
	return rc;
}

struct session {
	struct cell_state st;
	struct channel ch;
	struct zb_error err;
};

static void session_start(struct session *s)
{
	cell_state_init(&s->st);
	channel_init(&s->ch, &s->st, PROTO_MAX_PAYLOAD);
	s->ch.on_hello = count_hello;
	s->ch.on_limits = count_limits;
	s->ch.err = &s->err;
}

static void session_end(struct session *s)
{
	channel_release(&s->ch);
	cell_state_release(&s->st);
}

#define HELLO "{\"v\":1,\"type\":\"hello\",\"agent\":\"0.1\",\"proto\":1,\"kernel\":\"6.1\"}"

/* The messages of a real cell, in the agent's order (guest/agent.c). */
static void test_session(void)
{
	static const char *const msgs[] = {
		HELLO,
		"{\"v\":1,\"type\":\"phase\",\"name\":\"pool\",\"t\":1.5}",
		"{\"v\":1,\"type\":\"heartbeat\",\"step\":\"pool\",\"t\":2}",
		"{\"v\":1,\"type\":\"effective\",\"pool\":{},\"target\":{},\"t\":3}",
		"{\"v\":1,\"type\":\"phase\",\"name\":\"workload\",\"t\":4}",
		"{\"v\":1,\"type\":\"limits\",\"t\":4.1}",
		"{\"v\":1,\"type\":\"sample\",\"t\":5,\"phase\":\"run\",\"read_ios\":10,"
		"\"write_ios\":5,\"read_bytes\":40960,\"write_bytes\":20480,\"errors\":0,"
		"\"layout_bytes\":0}",
		"{\"v\":1,\"type\":\"telemetry\",\"interval\":1.0,\"disks\":{},\"t\":5}",
		"{\"v\":1,\"type\":\"telemetry\",\"summary\":true,\"interval\":5.0,\"t\":9}",
		"{\"v\":1,\"type\":\"result\",\"fio\":{\"jobs\":[]},\"t\":10}",
		"{\"v\":1,\"type\":\"bye\",\"t\":11}",
	};
	struct session s;
	json_t *rec = json_object();

	hellos = limits = 0;
	session_start(&s);
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		CHECK(send(&s.ch, msgs[i]) == 0);
	CHECK(hellos == 1);
	/* "limits": the runner's hook runs (it answers), the time is kept, once */
	CHECK(limits == 1 && s.st.t_limits > 0);
	CHECK(send(&s.ch, "{\"v\":1,\"type\":\"limits\",\"t\":4.2}") == 0);
	CHECK(limits == 2 && json_object_get(s.st.phases, "limits"));
	CHECK(s.st.said_hello && s.st.got_bye && !s.st.broken);
	CHECK(s.st.outcome == OUTCOME_NONE);
	CHECK(s.st.fio && json_array_size(s.st.samples) == 1);
	CHECK(json_array_size(s.st.telemetry) == 1);
	CHECK(s.st.telemetry_summary && !json_object_get(s.st.telemetry_summary, "summary"));
	CHECK(s.st.t_workload > 0 && s.st.progress_mark == 15);
	CHECK_STR(s.st.current_phase, "workload");
	/* the envelope is the channel's */
	CHECK(!json_object_get(json_array_get(s.st.samples, 0), "type"));
	CHECK(!json_object_get(s.st.effective, "v"));
	cell_state_record(&s.st, rec);
	CHECK(json_object_get(json_object_get(rec, "phases"), "pool") != NULL);
	CHECK(json_object_get(json_object_get(rec, "phases"), "result") != NULL);
	CHECK_STR(json_string_value(json_object_get(json_object_get(rec, "guest"), "kernel")),
		  "6.1");
	CHECK(json_object_get(rec, "samples") && json_object_get(rec, "telemetry") &&
	      json_object_get(rec, "telemetry_summary") && json_object_get(rec, "fio") &&
	      json_object_get(rec, "effective") && !json_object_get(rec, "error"));
	CHECK(!json_object_get(rec, "truncated"));
	json_decref(rec);
	session_end(&s);
}

/* A phased workload (docs/protocol.md): a phase_result per engine run, each kept with its
 * summary and target figures; the record gets phase_results and a witness for each, computed
 * by the host; optional fields of the wrong type are left out; a phase name restarts the
 * progress clock. */
static void test_phase_results(void)
{
	static const char *const msgs[] = {
		HELLO,
		"{\"v\":1,\"type\":\"phase\",\"name\":\"workload\",\"t\":4}",
		"{\"v\":1,\"type\":\"phase\",\"name\":\"phase fill\",\"t\":4}",
		"{\"v\":1,\"type\":\"phase_result\",\"name\":\"fill\",\"measured\":false,"
		"\"fio\":{\"jobs\":[{\"write\":{\"io_bytes\":1048576}}]},\"telemetry_summary\":"
		"{\"interval\":1,\"disks\":{\"d0\":{\"w_kbps\":2048}}},\"target\":\"x\",\"t\":6}",
		"{\"v\":1,\"type\":\"phase\",\"name\":\"phase export_import\",\"t\":7}",
		"{\"v\":1,\"type\":\"telemetry\",\"phase\":\"read\",\"interval\":1,\"disks\":"
		"{\"d0\":{\"r_kbps\":1,\"w_kbps\":0}},\"t\":8}",
		"{\"v\":1,\"type\":\"sample\",\"phase\":\"run\",\"read_ios\":1,\"write_ios\":0,"
		"\"read_bytes\":1024,\"write_bytes\":0,\"layout_bytes\":0,\"t\":8}",
		"{\"v\":1,\"type\":\"telemetry\",\"phase\":\"read\",\"interval\":1,\"disks\":"
		"{\"d0\":{\"r_kbps\":1,\"w_kbps\":0}},\"t\":9}",
		"{\"v\":1,\"type\":\"sample\",\"phase\":\"run\",\"read_ios\":2,\"write_ios\":0,"
		"\"read_bytes\":2048,\"write_bytes\":0,\"layout_bytes\":0,\"t\":9}",
		"{\"v\":1,\"type\":\"phase_result\",\"name\":\"read\",\"measured\":true,"
		"\"fio\":{\"jobs\":[{\"read\":{\"io_bytes\":1000,\"iops\":5}}]},"
		"\"telemetry_summary\":{\"interval\":1,\"disks\":{\"d0\":{\"r_kbps\":1}},"
		"\"arc\":{\"hits\":1,\"misses\":3}},\"target\":{\"compressratio\":1.25},\"t\":9}",
		"{\"v\":1,\"type\":\"telemetry\",\"summary\":true,\"interval\":1,\"disks\":{\"d0\":"
		"{\"r_kbps\":1}},\"arc\":{\"hits\":1,\"misses\":3},\"t\":9}",
		"{\"v\":1,\"type\":\"result\",\"fio\":{\"jobs\":[{\"read\":{\"io_bytes\":1000,"
		"\"iops\":5}}]},\"target\":{\"compressratio\":1.25},\"t\":10}",
	};
	struct session s;
	json_t *rec = json_object(), *pr, *w;

	session_start(&s);
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		if (i == 4)
			s.st.t_workload = 0;
		CHECK(send(&s.ch, msgs[i]) == 0);
		if (i == 4)
			CHECK(s.st.t_workload > 0); /* "phase export_import" restarted it */
	}
	CHECK(!s.st.broken && s.st.outcome == OUTCOME_NONE);
	cell_state_record(&s.st, rec);
	pr = json_object_get(rec, "phase_results");
	CHECK(json_array_size(pr) == 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(pr, 0), "name")), "fill");
	CHECK(json_is_false(json_object_get(json_array_get(pr, 0), "measured")));
	CHECK(!json_object_get(json_array_get(pr, 0), "target")); /* not an object: left out */
	w = json_object_get(json_array_get(pr, 0), "witness");
	CHECK(json_real_value(json_object_get(w, "disk_write_share")) == 2.0);
	CHECK(!json_object_get(w, "window_disk_write_share")); /* no line of its own */
	w = json_object_get(json_array_get(pr, 1), "witness");
	CHECK(json_real_value(json_object_get(w, "disk_read_share")) == 1.024);
	/* its window: (7, 9], 2 KiB at the disk, 2 KiB of the engine's */
	CHECK(json_real_value(json_object_get(w, "window_disk_read_share")) == 1.0);
	CHECK(json_real_value(json_object_get(w, "arc_hit_ratio")) == 0.25);
	CHECK(json_real_value(json_object_get(w, "compress_ratio")) == 1.25);
	/* the cell's own result and witness: the last measured phase's */
	w = json_object_get(rec, "witness");
	CHECK(json_real_value(json_object_get(w, "disk_read_share")) == 1.024);
	CHECK(json_real_value(json_object_get(w, "window_disk_read_share")) == 1.0);
	CHECK(json_real_value(json_object_get(json_object_get(rec, "target"), "compressratio")) ==
	      1.25);
	CHECK(json_object_get(json_object_get(rec, "phases"), "phase export_import") != NULL);
	json_decref(rec);
	session_end(&s);

	/* phase results beyond their budget are dropped, and the record says so */
	session_start(&s);
	s.st.budget[STREAM_PHASE_RESULTS] = 4096;
	CHECK(send(&s.ch, HELLO) == 0);
	for (int i = 0; i < 50; i++)
		CHECK(send(&s.ch, "{\"v\":1,\"type\":\"phase_result\",\"name\":\"a\","
				  "\"fio\":{\"jobs\":[]}}") == 0);
	CHECK(json_array_size(s.st.phase_results) > 0 && json_array_size(s.st.phase_results) < 50);
	CHECK(s.st.spent[STREAM_PHASE_RESULTS] <= 4096);
	rec = json_object();
	cell_state_record(&s.st, rec);
	CHECK_STR(json_string_value(json_array_get(json_object_get(rec, "truncated"), 0)),
		  "phase_results");
	json_decref(rec);
	session_end(&s);
}

/* Each case: the messages after (or instead of) the hello, the verdict's detail. */
static const struct {
	int hello; /* send the hello first */
	const char *msg;
	const char *detail;
} broken[] = {
	{ 0, "[1,2]", "protocol: a message is not a JSON object" },
	{ 0, "{\"v\":1,\"type\":\"hello\",\"agent\":\"a\",\"agent\":\"b\",\"kernel\":\"k\"}",
	  "protocol: a message is not a JSON object" },
	{ 0, "{\"type\":\"hello\"}", "protocol: a message lacks type or version 1" },
	{ 0, "{\"v\":2,\"type\":\"hello\"}", "protocol: a message lacks type or version 1" },
	{ 0, "{\"v\":1,\"type\":7}", "protocol: a message lacks type or version 1" },
	{ 0, "{\"v\":1,\"type\":\"phase\",\"name\":\"x\"}",
	  "protocol: first message is 'phase', not hello" },
	/* unknown type */
	{ 1, "{\"v\":1,\"type\":\"reboot\"}", "protocol: unknown message type 'reboot'" },
	{ 1, HELLO, "protocol: a second hello" },
	/* missing required fields */
	{ 0, "{\"v\":1,\"type\":\"hello\",\"agent\":\"0.1\"}",
	  "protocol: a 'hello' message without 'kernel' (a string)" },
	{ 1, "{\"v\":1,\"type\":\"phase\"}",
	  "protocol: a 'phase' message without 'name' (a string)" },
	{ 1, "{\"v\":1,\"type\":\"error\",\"message\":\"m\"}",
	  "protocol: a 'error' message without 'step' (a string)" },
	{ 1, "{\"v\":1,\"type\":\"result\"}",
	  "protocol: a 'result' message without 'fio' (an object)" },
	/* wrong types */
	{ 1, "{\"v\":1,\"type\":\"sample\",\"read_ios\":\"10\",\"write_ios\":0,\"layout_bytes\":0}",
	  "protocol: a 'sample' message without 'read_ios' (a number)" },
	{ 1, "{\"v\":1,\"type\":\"phase\",\"name\":[\"pool\"]}",
	  "protocol: a 'phase' message without 'name' (a string)" },
	{ 1, "{\"v\":1,\"type\":\"error\",\"step\":1,\"message\":\"m\"}",
	  "protocol: a 'error' message without 'step' (a string)" },
	{ 1, "{\"v\":1,\"type\":\"result\",\"fio\":[]}",
	  "protocol: a 'result' message without 'fio' (an object)" },
	{ 1, "{\"v\":1,\"type\":\"result\",\"fio\":{\"jobs\":{}}}",
	  "protocol: a result without fio jobs" },
	{ 1, "{\"v\":1,\"type\":\"phase_result\",\"fio\":{\"jobs\":[]}}",
	  "protocol: a 'phase_result' message without 'name' (a string)" },
	{ 1, "{\"v\":1,\"type\":\"phase_result\",\"name\":\"a\",\"fio\":{}}",
	  "protocol: a phase_result without fio jobs" },
};

static void test_broken(void)
{
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		struct session s;

		session_start(&s);
		if (broken[i].hello)
			CHECK(send(&s.ch, HELLO) == 0);
		CHECK(send(&s.ch, broken[i].msg) < 0);
		CHECK(s.st.broken && !s.ch.fatal);
		CHECK(s.st.outcome == OUTCOME_AGENT_ERROR);
		CHECK_STR(s.st.detail, broken[i].detail);
		/* nothing more is read from a broken stream */
		CHECK(send(&s.ch, "{\"v\":1,\"type\":\"bye\"}") < 0 && !s.st.got_bye);
		session_end(&s);
	}
}

/* Framing errors break the stream the same way. */
static void test_framing(void)
{
	struct session s;

	session_start(&s);
	CHECK(channel_feed(&s.ch, "999999999:", 10) < 0);
	CHECK(s.st.broken && s.st.outcome == OUTCOME_AGENT_ERROR);
	CHECK_STR(s.st.detail, "protocol: frame is larger than the maximum message size");
	session_end(&s);
	session_start(&s);
	CHECK(channel_feed(&s.ch, "2:{}x", 5) < 0);
	CHECK_STR(s.st.detail,
		  "protocol: frame is not closed by a newline (truncated or too long)");
	session_end(&s);
}

/* The agent's error: the verdict names the step; the workload's is a workload-error; a detail
 * cut to its bound stays valid UTF-8 (else the record could not hold it). */
static void test_error(void)
{
	char msg[1200];
	struct session s;
	size_t n;

	session_start(&s);
	CHECK(send(&s.ch, HELLO) == 0);
	CHECK(send(&s.ch, "{\"v\":1,\"type\":\"error\",\"step\":\"workload\",\"message\":\"engine "
			  "died\",\"output\":null}") == 0);
	CHECK(s.st.outcome == OUTCOME_WORKLOAD_ERROR);
	CHECK_STR(s.st.detail, "step 'workload': engine died");
	CHECK(!s.st.broken && s.st.error && !json_object_get(s.st.error, "type"));
	session_end(&s);

	session_start(&s);
	CHECK(send(&s.ch, HELLO) == 0);
	n = (size_t)snprintf(msg, sizeof(msg),
			     "{\"v\":1,\"type\":\"error\",\"step\":\"pool\","
			     "\"message\":\"");
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "\xc3\xa9"); /* é: 2 bytes */
	snprintf(msg + n, sizeof(msg) - n, "\"}");
	CHECK(send(&s.ch, msg) == 0);
	CHECK(s.st.outcome == OUTCOME_AGENT_ERROR);
	{
		json_t *d = json_string(s.st.detail);

		CHECK(d != NULL); /* valid UTF-8 */
		CHECK(strlen(s.st.detail) == strlen("step 'pool': ") + 400);
		json_decref(d);
	}
	session_end(&s);
}

/* A host-side failure answering the hello is fatal, not the guest's fault. */
static void test_hello_hook_fails(void)
{
	struct session s;

	session_start(&s);
	s.ch.on_hello = fail_hello;
	CHECK(send(&s.ch, HELLO) < 0);
	CHECK(s.ch.fatal && !s.st.broken && s.st.outcome == OUTCOME_NONE);
	CHECK(strstr(s.err.msg, "broken pipe") != NULL);
	session_end(&s);

	/* so does a failing "limits" hook (the disks' limits could not be given back) */
	session_start(&s);
	s.ch.on_limits = fail_hello;
	CHECK(send(&s.ch, HELLO) == 0);
	CHECK(send(&s.ch, "{\"v\":1,\"type\":\"limits\"}") < 0);
	CHECK(s.ch.fatal && !s.st.broken);
	session_end(&s);
}

/* A frame of about `size` bytes: `head` (a message's opening, up to its last field), then a
 * padding field of the given JSON shape. */
static char *big_msg(const char *head, size_t size, const char *shape)
{
	char *m = malloc(size + 64);
	size_t n = (size_t)snprintf(m, size + 64, "%s,\"pad\":", head);

	if (!strcmp(shape, "string")) {
		m[n++] = '"';
		while (n < size - 2)
			m[n++] = 'x';
		m[n++] = '"';
	} else { /* an array of zeros: the most jansson spends per byte of JSON */
		m[n++] = '[';
		while (n < size - 3) {
			m[n++] = '0';
			m[n++] = ',';
		}
		m[n++] = '0';
		m[n++] = ']';
	}
	m[n++] = '}';
	m[n] = '\0';
	return m;
}

static size_t dumped_size(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	size_t n = s ? strlen(s) : 0;

	free(s);
	return n;
}

/* A guest that floods every stream: the state (and so the record) stays within the budgets
 * and says which streams were cut; the sample deadline still sees progress. */
static void test_budgets(void)
{
	struct session s;
	json_t *rec = json_object();
	char head[128];

	session_start(&s);
	CHECK(send(&s.ch, HELLO) == 0);
	for (int i = 0; i < 24; i++) { /* 24 MiB of samples, half of them arrays */
		char *m;

		snprintf(head, sizeof(head),
			 "{\"v\":1,\"type\":\"sample\",\"read_ios\":%d,\"write_ios\":0,"
			 "\"layout_bytes\":0",
			 i + 1);
		m = big_msg(head, PROTO_MAX_PAYLOAD - 16, i % 2 ? "string" : "zeros");
		CHECK(send(&s.ch, m) == 0);
		free(m);
	}
	CHECK(s.st.progress_mark == 24); /* every sample counted for progress */
	for (int i = 0; i < 6; i++) {	 /* 6 MiB of telemetry, about 200 MiB once parsed */
		char *m = big_msg("{\"v\":1,\"type\":\"telemetry\",\"interval\":1",
				  PROTO_MAX_PAYLOAD - 16, "zeros");

		CHECK(send(&s.ch, m) == 0);
		free(m);
	}
	for (int i = 0; i < 20000; i++) { /* 20000 phases */
		snprintf(head, sizeof(head), "{\"v\":1,\"type\":\"phase\",\"name\":\"p%05d\"}", i);
		CHECK(send(&s.ch, head) == 0);
	}
	CHECK_STR(s.st.current_phase, "p19999"); /* the deadlines still see the step */
	{
		char *m = big_msg("{\"v\":1,\"type\":\"error\",\"step\":\"pool\",\"message\":\"m\"",
				  PROTO_MAX_PAYLOAD - 16, "string");

		CHECK(send(&s.ch, m) == 0);
		free(m);
		CHECK(s.st.outcome == OUTCOME_AGENT_ERROR);
		CHECK_STR(s.st.detail, "step 'pool': m");
	}
	CHECK(!s.st.broken);
	CHECK(dumped_size(s.st.samples) <= GUEST_BUDGET_SAMPLES);
	CHECK(dumped_size(s.st.telemetry) <= GUEST_BUDGET_TELEMETRY);
	CHECK(dumped_size(s.st.phases) <= GUEST_BUDGET_PHASES);
	CHECK(dumped_size(s.st.error) <= GUEST_BUDGET_ERROR);
	for (int i = 0; i < STREAM_COUNT; i++)
		CHECK(s.st.spent[i] <= s.st.budget[i]);
	CHECK(json_array_size(s.st.samples) > 0 && json_array_size(s.st.telemetry) > 0);
	CHECK_STR(json_string_value(json_object_get(s.st.error, "step")), "pool");
	cell_state_record(&s.st, rec);
	CHECK(dumped_size(json_object_get(rec, "truncated")) > 0);
	CHECK_STR(json_string_value(json_array_get(json_object_get(rec, "truncated"), 0)),
		  "samples");
	CHECK(json_array_size(json_object_get(rec, "truncated")) == 4);
	json_decref(rec);
	session_end(&s);
}

/* Messages kept one at a time: a pathological one (1 MiB of empty objects holds about 80 MiB)
 * is dropped and the previous one stays; a result is refused rather than dropped; the hello
 * keeps its agent and kernel, clipped. */
static void test_one_at_a_time(void)
{
	struct session s;
	json_t *rec = json_object(), *truncated;
	char *m, hello[600];

	session_start(&s);
	memset(hello, 'a', sizeof(hello));
	memcpy(hello, "{\"v\":1,\"type\":\"hello\",\"kernel\":\"6.1\",\"agent\":\"", 46);
	memcpy(hello + sizeof(hello) - 3, "\"}", 3);
	CHECK(send(&s.ch, hello) == 0);
	CHECK(strlen(json_string_value(json_object_get(s.st.hello, "agent"))) ==
	      GUEST_HELLO_FIELD_MAX);
	CHECK(send(&s.ch, "{\"v\":1,\"type\":\"effective\",\"pool\":{}}") == 0);
	m = big_msg("{\"v\":1,\"type\":\"effective\",\"pool\":{}", PROTO_MAX_PAYLOAD - 16, "zeros");
	CHECK(send(&s.ch, m) == 0);
	free(m);
	CHECK(s.st.effective && !json_object_get(s.st.effective, "pad")); /* the first one stays */
	m = big_msg("{\"v\":1,\"type\":\"telemetry\",\"summary\":true", PROTO_MAX_PAYLOAD - 16,
		    "zeros");
	CHECK(send(&s.ch, m) == 0);
	free(m);
	CHECK(!s.st.telemetry_summary);
	CHECK(!s.st.broken);
	cell_state_record(&s.st, rec);
	truncated = json_object_get(rec, "truncated");
	CHECK(json_array_size(truncated) == 2);
	CHECK_STR(json_string_value(json_array_get(truncated, 0)), "telemetry_summary");
	CHECK_STR(json_string_value(json_array_get(truncated, 1)), "effective");
	CHECK(dumped_size(json_object_get(rec, "guest")) < 2 * GUEST_HELLO_FIELD_MAX + 64);
	m = big_msg("{\"v\":1,\"type\":\"result\",\"fio\":{\"jobs\":[]}", PROTO_MAX_PAYLOAD - 16,
		    "zeros");
	CHECK(send(&s.ch, m) < 0);
	free(m);
	CHECK(s.st.broken && !s.st.fio && s.st.outcome == OUTCOME_AGENT_ERROR);
	CHECK(s.st.detail && !strncmp(s.st.detail, "protocol: a result too large to keep", 36));
	json_decref(rec);
	session_end(&s);
}

/* Live IOPS for the progress line: from two consecutive samples of one engine run, by the
 * guest's `t`; nothing (< 0) before the second sample, after a new phase, when a counter goes
 * back or the gap is out of range; never a value that is not a finite non-negative number. */
#define SAMPLE(t, r, w)                                                                            \
	"{\"v\":1,\"type\":\"sample\",\"t\":" t ",\"read_ios\":" r ",\"write_ios\":" w             \
	",\"layout_bytes\":0}"
static void test_live_iops(void)
{
	static const struct {
		const char *msg;    /* a sample, or a phase message */
		double read, write; /* the live IOPS after it (-1: none) */
	} steps[] = {
		{ SAMPLE("10", "0", "0"), -1, -1 },
		{ SAMPLE("11", "1500", "20"), 1500, 20 },
		{ SAMPLE("13", "2500", "20"), 500, 0 },
		/* a new phase: its engine's counters start over */
		{ "{\"v\":1,\"type\":\"phase\",\"name\":\"phase read\"}", -1, -1 },
		{ SAMPLE("1", "100", "0"), -1, -1 },
		{ SAMPLE("2", "300", "0"), 200, 0 },
		{ SAMPLE("3", "250", "0"), -1, -1 },	      /* a counter went back */
		{ SAMPLE("4", "350", "0"), 100, 0 },	      /* from the last sample on */
		{ SAMPLE("4.01", "9e300", "0"), -1, -1 },     /* a gap of 10 ms */
		{ SAMPLE("5", "9e300", "0"), 0, 0 },	      /* from 4.01: no I/O */
		{ SAMPLE("5.5", "1.7e308", "0"), -1, -1 },    /* a rate past a double */
		{ SAMPLE("100", "1.7e308", "0"), -1, -1 },    /* a gap of 94.5 s */
		{ SAMPLE("-1e308", "1.7e308", "0"), -1, -1 }, /* the clock went back */
		{ SAMPLE("-1e308", "1.7e308", "1"), -1, -1 }, /* no time passed */
	};
	struct session s;

	session_start(&s);
	CHECK(send(&s.ch, HELLO) == 0);
	CHECK(s.st.live_iops[0] < 0 && s.st.live_iops[1] < 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int ok;

		CHECK(send(&s.ch, steps[i].msg) == 0);
		ok = steps[i].read < 0 ? s.st.live_iops[0] < 0 && s.st.live_iops[1] < 0
				       : fabs(s.st.live_iops[0] - steps[i].read) < 1e-6 &&
					     fabs(s.st.live_iops[1] - steps[i].write) < 1e-6;
		if (!ok)
			fprintf(stderr, "live iops step %zu: %g %g, want %g %g\n", i,
				s.st.live_iops[0], s.st.live_iops[1], steps[i].read,
				steps[i].write);
		CHECK(ok);
	}
	session_end(&s);
}

static void test_outcome_names(void)
{
	static const char *const names[] = {
		"ok",	       "boot-fail",	 "timeout",    "panic",	     "oom",
		"agent-error", "workload-error", "host-error", "interrupted"
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK_STR(outcome_name(outcome_from_name(names[i])), names[i]);
	CHECK(outcome_from_name("fine") == OUTCOME_NONE);
	CHECK(outcome_from_name(NULL) == OUTCOME_NONE);
	CHECK_STR(outcome_name(OUTCOME_OK), "ok");
}

int main(void)
{
	test_session();
	test_phase_results();
	test_broken();
	test_framing();
	test_error();
	test_hello_hook_fails();
	test_budgets();
	test_one_at_a_time();
	test_outcome_names();
	test_live_iops();
	return check_summary("channel");
}
