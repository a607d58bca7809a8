/* The outcome names: the one place that spells them. */
#include "outcome.h"

#include <stddef.h>
#include <string.h>

static const char *const names[OUTCOME_COUNT] = {
	[OUTCOME_NONE] = "none",
	[OUTCOME_OK] = "ok",
	[OUTCOME_BOOT_FAIL] = "boot-fail",
	[OUTCOME_TIMEOUT] = "timeout",
	[OUTCOME_PANIC] = "panic",
	[OUTCOME_OOM] = "oom",
	[OUTCOME_AGENT_ERROR] = "agent-error",
	[OUTCOME_WORKLOAD_ERROR] = "workload-error",
	[OUTCOME_HOST_ERROR] = "host-error",
	[OUTCOME_INTERRUPTED] = "interrupted",
};

const char *outcome_name(enum cell_outcome o)
{
	return (unsigned)o < OUTCOME_COUNT ? names[o] : "none";
}

enum cell_outcome outcome_from_name(const char *name)
{
	for (int o = OUTCOME_NONE + 1; name && o < OUTCOME_COUNT; o++)
		if (!strcmp(names[o], name))
			return (enum cell_outcome)o;
	return OUTCOME_NONE;
}
