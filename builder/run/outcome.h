/* How one attempt at a cell ended: the outcome classes of DESIGN.md, as recorded in a cell
 * record's "outcome" (docs/results.md). One name table (outcome.c) says how each is spelled. */
#ifndef ZB_OUTCOME_H
#define ZB_OUTCOME_H

enum cell_outcome {
	OUTCOME_NONE = 0,	/* no verdict yet (never recorded) */
	OUTCOME_OK,		/* the workload's result came back */
	OUTCOME_BOOT_FAIL,	/* no hello within the boot deadline, or no output at all */
	OUTCOME_TIMEOUT,	/* a heartbeat, progress or overall deadline passed */
	OUTCOME_PANIC,		/* the guest kernel panicked (its console says so) */
	OUTCOME_OOM,		/* the guest ran out of memory before a result */
	OUTCOME_AGENT_ERROR,	/* a step of the agent failed, or the guest broke the protocol */
	OUTCOME_WORKLOAD_ERROR, /* the workload step failed */
	OUTCOME_HOST_ERROR,	/* zbench itself failed for this cell */
	OUTCOME_INTERRUPTED,	/* stopped by a signal: not a verdict, never recorded */
	OUTCOME_COUNT
};

/* The record's spelling of an outcome ("ok", "boot-fail", ...); "none" for OUTCOME_NONE. */
const char *outcome_name(enum cell_outcome o);
/* The outcome a record's name stands for, or OUTCOME_NONE for a name that is none of them. */
enum cell_outcome outcome_from_name(const char *name);

#endif
