/* The host's side of the guest channel (docs/protocol.md): every message a guest sends, checked
 * against one table of message types (each with its required fields and their JSON types) and
 * folded by that type's handler into the cell's state, which the runner reads once the VM is
 * gone. Everything from the guest is untrusted: a message is parsed strictly, its required
 * fields are checked before its handler runs, and what it may add to the state is bounded. */
#ifndef ZB_CHANNEL_H
#define ZB_CHANNEL_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"
#include "guest/proto.h"
#include "outcome.h"

/* What a guest can make the host keep, each with a byte budget per cell (docs/protocol.md). A
 * message costs its payload bytes plus what jansson spends holding it (channel.c, json_cost), so
 * a budget bounds both the host's memory and the record's size. A stream over its budget keeps
 * what it has and drops the rest (the deadlines still see every message), and the record names
 * it in "truncated". Messages kept one at a time have a budget for the one kept. */
enum guest_stream {
	STREAM_SAMPLES,		  /* "sample" messages */
	STREAM_TELEMETRY,	  /* per-interval "telemetry" messages */
	STREAM_TELEMETRY_SUMMARY, /* the kept telemetry summary (one at a time) */
	STREAM_PHASES,		  /* distinct phase names */
	STREAM_EFFECTIVE,	  /* the kept "effective" message (one at a time) */
	STREAM_RESULT,		  /* the kept "result" (one at a time; a larger one is refused) */
	STREAM_ERROR,		  /* the kept "error" (one at a time; a larger one is clipped) */
	STREAM_PHASE_RESULTS,	  /* "phase_result" messages (a workload's phases) */
	STREAM_CONSOLE,		  /* console.log (console.c) */
	STREAM_COUNT
};

#define GUEST_BUDGET_SAMPLES	       (16u << 20)  /* ~1.7 KiB a second: 2.7 hours */
#define GUEST_BUDGET_TELEMETRY	       (128u << 20) /* ~3.6 KiB a second a disk: 1 hour of 8 */
#define GUEST_BUDGET_TELEMETRY_SUMMARY (4u << 20)
#define GUEST_BUDGET_PHASES	       (16u << 10)
#define GUEST_BUDGET_EFFECTIVE	       (8u << 20)
#define GUEST_BUDGET_RESULT	       (16u << 20) /* a 1 MiB fio result with json+ bins: ~10 MiB */
#define GUEST_BUDGET_ERROR	       (256u << 10)
#define GUEST_BUDGET_PHASE_RESULTS     (32u << 20) /* a few phases of ~100 KiB each, held */
#define GUEST_BUDGET_CONSOLE	       (8u << 20)  /* of console.log on the host's disk */
#define GUEST_HELLO_FIELD_MAX	       256	   /* the hello's agent and kernel, kept clipped */

/* What one attempt at a cell learned from its guest, and the verdict so far. The runner owns it
 * (cell_state_init/cell_state_release); the channel and the runner's deadlines fill it. */
struct cell_state {
	double t_start;		       /* VM start (host monotonic clock) */
	double t_last_msg, t_hello;    /* the last message; the hello */
	double t_workload, t_progress; /* workload phase start; last sample whose counters moved */
	double progress_mark;	       /* the sum of the counters in the last sample */
	/* Live read and write IOPS between the last two samples of one engine run (< 0: not
	 * known yet), for the progress line; and that last sample's time and I/O counters. */
	double live_iops[2];
	double live_t, live_ios[2];
	int live_have;
	int said_hello, got_bye;
	double t_limits;   /* the guest asked for its disks' limits (0: not yet) */
	json_t *phases;	   /* name -> seconds since VM start (host clock) */
	json_t *effective; /* the "effective" message */
	json_t *hello;	   /* the hello's agent and kernel */
	json_t *fio;	   /* the result */
	json_t *samples;
	json_t *telemetry, *telemetry_summary; /* "telemetry" messages; created on the first */
	json_t *error;			       /* the agent's "error" message */
	json_t *target;			       /* the result's target space figures, or NULL */
	json_t *phase_results;	   /* "phase_result" messages in order (docs/results.md); or NULL */
	enum cell_outcome outcome; /* OUTCOME_NONE until a verdict */
	char *detail;		   /* a one-line explanation for non-ok outcomes */
	char *current_phase;
	int broken; /* the guest broke the protocol: nothing more it says can be trusted */
	size_t
	    budget[STREAM_COUNT]; /* bytes each stream may keep (cell_state_init: the defaults) */
	size_t spent[STREAM_COUNT];
	unsigned truncated; /* a bit (1 << stream) per stream that hit its budget */
};

/* Start a cell's state (t_start is set by the runner when the VM starts). */
void cell_state_init(struct cell_state *st);
void cell_state_release(struct cell_state *st);

/* Note that a stream hit its budget (the record's "truncated" names it). */
void cell_state_truncate(struct cell_state *st, enum guest_stream s);

/* The verdict: the first one stands (later calls do nothing). */
void cell_verdict(struct cell_state *st, enum cell_outcome outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One channel: the frame decoder, the state it fills and what it calls back. */
struct channel {
	struct proto_decoder dec;
	struct cell_state *st;
	/* Called once, on the guest's hello: the runner answers with the job. Returns < 0 with
	 * err set for a host-side failure (the channel then sets `fatal` and stops). */
	int (*on_hello)(void *arg, struct zb_error *err);
	/* Called on the guest's first "limits" (its setup is over, docs/disks.md): the runner
	 * gives the disks their I/O limits back and answers "limits". Same return as on_hello. */
	int (*on_limits)(void *arg, struct zb_error *err);
	void *arg;
	struct zb_error *err;
	int fatal; /* a host-side failure while handling a frame */
};

/* A channel filling `st`, taking payloads of at most max_payload bytes (PROTO_MAX_PAYLOAD). The
 * caller sets on_hello, arg and err. */
void channel_init(struct channel *ch, struct cell_state *st, size_t max_payload);
void channel_release(struct channel *ch);

/* Feed bytes read from the guest's port. Returns 0, or < 0 once the stream has stopped: the
 * guest broke the protocol (st->broken, the verdict says why) or a host-side hook failed
 * (fatal, err set). Bytes fed after that are ignored. */
int channel_feed(struct channel *ch, const char *buf, size_t len);

/* One complete frame from the guest (a proto_frame_fn: arg is the struct channel), as
 * channel_feed hands them on. Returns 0, or < 0 as channel_feed. */
int channel_frame(void *arg, const char *payload, size_t len);

/* Put what the guest said into a cell record: phases, guest, effective, fio, target, witness
 * (what the result measured, builder/matrix/phases.h), phase_results (each with its witness),
 * samples, telemetry, telemetry_summary, error, truncated (each only when there is something). */
void cell_state_record(const struct cell_state *st, json_t *rec);

#endif
