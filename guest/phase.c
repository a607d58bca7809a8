/* Workload phases (phase.h): shared by the host and the agent. */
#include "phase.h"

#include <string.h>

static const char *const action_names[PHASE_ACTION_COUNT] = { [PHASE_ACTION_NONE] = "",
#define PHASE_ACTION_NAME_(id, name, handler, what) [PHASE_ACTION_##id] = name,
							      PHASE_ACTION_LIST(PHASE_ACTION_NAME_)
#undef PHASE_ACTION_NAME_
};

#define N_ACTIONS (sizeof(action_names) / sizeof(action_names[0]))

enum phase_action phase_action_of(const json_t *phase)
{
	const char *s = json_string_value(json_object_get(phase, "action"));

	for (size_t i = 1; s && i < N_ACTIONS; i++)
		if (!strcmp(s, action_names[i]))
			return (enum phase_action)i;
	return PHASE_ACTION_NONE;
}

const char *phase_action_name(enum phase_action a)
{
	return (size_t)a < N_ACTIONS ? action_names[a] : "";
}

bool phase_key_is_zbench(const char *key, int in_phase)
{
	static const char *const workload_keys[] = { "target",
						     "phases",
						     "allow_unwritten_reads",
						     "allow_constant_buffer",
						     "allow_buffered_writes",
						     "window" };
	static const char *const phase_keys[] = { "name",   "measured", "prefill",
						  "action", "duration", "until" };
	const char *const *k = in_phase ? phase_keys : workload_keys;
	size_t n = in_phase ? sizeof(phase_keys) / sizeof(phase_keys[0])
			    : sizeof(workload_keys) / sizeof(workload_keys[0]);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(key, k[i]))
			return true;
	return false;
}

enum phase_state phase_until_state(const json_t *phase)
{
	static const char *const names[] = { [PHASE_STATE_L2ARC_SIZE] = "l2arc_size",
					     [PHASE_STATE_L2ARC_IDLE] = "l2arc_idle",
					     [PHASE_STATE_DIRTY_WRITTEN] = "dirty_written" };
	const char *s = json_string_value(json_object_get(json_object_get(phase, "until"), "state"));

	for (size_t i = 1; s && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (enum phase_state)i;
	return PHASE_STATE_NONE;
}

bool phase_is_measured(const json_t *phase)
{
	const json_t *m = json_object_get(phase, "measured");

	if (!phase)
		return true;
	if (json_is_boolean(m))
		return json_is_true(m);
	return !phase_is_prefill(phase);
}

bool phase_is_prefill(const json_t *phase)
{
	return json_is_true(json_object_get(phase, "prefill"));
}

/* What a prefill takes from the workload's options: what the data is and where it goes. */
static bool prefill_keeps(const char *key, int target_is_dev)
{
	static const char *const kept[] = { "buffer_compress_percentage",
					    "buffer_compress_chunk",
					    "buffer_pattern",
					    "dedupe_percentage",
					    "randseed",
					    "offset",
					    "size" };
	static const char *const kept_dir[] = { "filename", "numjobs" };

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!strcmp(key, kept[i]))
			return true;
	for (size_t i = 0; !target_is_dev && i < sizeof(kept_dir) / sizeof(kept_dir[0]); i++)
		if (!strcmp(key, kept_dir[i]))
			return true;
	return false;
}

json_t *phase_engine_options(const json_t *workload, const json_t *phase, int target_is_dev)
{
	int prefill = phase_is_prefill(phase);
	json_t *out = json_object(), *v;
	const char *k;

	if (!out)
		return NULL;
	if (prefill) {
		json_object_set_new(out, "rw", json_string("write"));
		json_object_set_new(out, "bs", json_string("1m"));
		json_object_set_new(out, "end_fsync", json_true()); /* on the disks when it ends */
		if (target_is_dev) {
			json_object_set_new(out, "ioengine", json_string("libaio"));
			json_object_set_new(out, "iodepth", json_integer(8));
			json_object_set_new(out, "direct", json_true());
		}
	}
	json_object_foreach ((json_t *)workload, k, v) {
		if (phase_key_is_zbench(k, 0) || (prefill && !prefill_keeps(k, target_is_dev)))
			continue;
		json_object_set(out, k, v);
	}
	json_object_foreach ((json_t *)phase, k, v) {
		if (!phase_key_is_zbench(k, 1))
			json_object_set(out, k, v);
	}
	return out;
}
