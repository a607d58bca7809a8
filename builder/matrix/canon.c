/* The canonical cell configuration (builder/matrix/canon.h): one walk over the configuration guided
 * by the schema table (which keys are sizes and durations), the workload's options by the engine's
 * option table (guest/engine/options.h). */
#include "canon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "guest/engine/options.h"
#include "guest/units.h"
#include "schema.h"

/* Sizes: "k" small, the rest capital, as the matrices have always written them. */
static json_t *size_json(uint64_t bytes)
{
	static const char suffixes[] = "kMGTP";
	char buf[32];
	int i = -1;

	while (bytes != 0 && bytes % 1024 == 0 && i < 4) {
		bytes /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, sizeof(buf), "%llu%c", (unsigned long long)bytes, suffixes[i]);
	return json_string(buf);
}

static json_t *duration_json(uint64_t usec)
{
	char buf[32];

	if (usec % 1000000 == 0)
		snprintf(buf, sizeof(buf), "%llus", (unsigned long long)(usec / 1000000));
	else if (usec % 1000 == 0)
		snprintf(buf, sizeof(buf), "%llums", (unsigned long long)(usec / 1000));
	else
		snprintf(buf, sizeof(buf), "%lluus", (unsigned long long)usec);
	return json_string(buf);
}

/* A size or duration of the schema: canonical if it parses, else as it is. */
static json_t *schema_value(const struct schema_key *sk, json_t *v)
{
	const char *s = json_string_value(v);
	uint64_t u;

	if (s && sk->type == SCHEMA_SIZE && units_parse_size(s, &u) == 0)
		return size_json(u);
	if (s && sk->type == SCHEMA_DURATION && units_parse_duration(s, &u) == 0)
		return duration_json(u);
	return json_incref(v);
}

/* The options every fio job states, default or not: the I/O pattern and the block size, the
 * two things fio's own job line names first. They are always in the canonical form of a job in
 * fio mode (filled with the default when absent); every other option at its default is left
 * out (mode=fio too, so a "mode" left in means iozone). That is how the matrices
 * written before canonical ids spelled them, so most of their ids stay. */
static const char *const always_stated[] = { "rw", "bs" };

static int is_always_stated(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(always_stated); i++)
		if (!strcmp(always_stated[i], name))
			return 1;
	return 0;
}

/* The canonical JSON of a parsed option; `v` the value as given (NULL: the default). */
static json_t *option_json(const struct engine_option_value *ov, json_t *v)
{
	json_t *c;

	switch (ov->kind) {
	case ENGINE_OPTION_SIZE:
		c = size_json(ov->u);
		break;
	case ENGINE_OPTION_DURATION:
		c = duration_json(ov->u);
		break;
	case ENGINE_OPTION_INT:
		c = json_integer(ov->i);
		break;
	case ENGINE_OPTION_BOOL:
		c = json_boolean(ov->i);
		break;
	case ENGINE_OPTION_ENUM:
		c = ov->text ? json_string(ov->text) : v ? json_incref(v) : json_null();
		break;
	default:
		c = v ? json_incref(v) : json_null();
		break;
	}
	return c;
}

/* One phase of `workload.phases` (docs/matrix.md, "Phases"): its options in their canonical
 * spelling but none left out at the engine's default, since a phase's option overrides the
 * workload's (`"iodepth": 1` in a phase of an `"iodepth": 8` workload is not the default);
 * `prefill` only when true, `measured` only when it is not the default (false for a prefill,
 * else true); an action's `duration` as a duration. What is not understood is kept. */
static json_t *phase_canon(const json_t *p)
{
	int prefill = json_is_true(json_object_get(p, "prefill"));
	json_t *out = json_object(), *v;
	const char *key;
	uint64_t usec;

	if (!json_is_object(p)) {
		json_decref(out);
		return json_incref((json_t *)p);
	}
	json_object_foreach ((json_t *)p, key, v) {
		struct engine_option_value ov;

		if (!strcmp(key, "prefill")) {
			if (!json_is_boolean(v) || prefill)
				json_object_set(out, key, v);
		} else if (!strcmp(key, "measured")) {
			if (!json_is_boolean(v) || json_is_true(v) == prefill)
				json_object_set(out, key, v);
		} else if (!strcmp(key, "duration") && json_is_string(v) &&
			   units_parse_duration(json_string_value(v), &usec) == 0) {
			json_object_set_new(out, key, duration_json(usec));
		} else if (!strcmp(key, "name") || !strcmp(key, "action") ||
			   engine_option_parse(key, v, &ov) < 0) {
			json_object_set(out, key, v);
		} else {
			json_object_set_new(out, ov.name, option_json(&ov, v));
		}
	}
	return out;
}

static json_t *phases_canon(const json_t *phases)
{
	json_t *out = json_array(), *p;
	size_t i;

	json_array_foreach (phases, i, p)
		json_array_append_new(out, phase_canon(p));
	return out;
}

/* The workload object: each option under its own name and in its canonical spelling, defaults
 * left out but for always_stated; its phases by phase_canon(). An option the engine does not know
 * (or a value it refuses) is kept as it is. */
static json_t *workload_canon(const json_t *w)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach ((json_t *)w, key, v) {
		struct engine_option_value ov;

		if (!strcmp(key, "phases") && json_is_array(v))
			json_object_set_new(out, key, phases_canon(v));
		else if (engine_option_parse(key, v, &ov) < 0)
			json_object_set(out, key, v);
		else if (!ov.is_default || is_always_stated(ov.name))
			json_object_set_new(out, ov.name, option_json(&ov, v));
	}
	/* an iozone-mode job has neither (its record sizes are its own options) */
	for (size_t i = 0; !json_object_get(out, "mode") && i < ARRAY_SIZE(always_stated); i++) {
		struct engine_option_value ov;

		if (!json_object_get(out, always_stated[i]) &&
		    engine_option_parse(always_stated[i], NULL, &ov) == 0)
			json_object_set_new(out, ov.name, option_json(&ov, NULL));
	}
	return out;
}

static json_t *walk(const struct schema_key *sk, json_t *v);

/* Whether v is what the absence of key `sk` means (its `absent`). */
static int is_absent_value(const struct schema_key *sk, const json_t *v)
{
	json_t *a;
	int eq;

	if (!sk || !sk->absent)
		return 0;
	a = json_loads(sk->absent, JSON_DECODE_ANY, NULL);
	eq = a && json_equal(a, (json_t *)v);
	json_decref(a);
	return eq;
}

static json_t *walk_object(const struct schema_key *sk, json_t *v)
{
	json_t *out = json_object(), *m;
	const char *key;

	json_object_foreach (v, key, m) {
		const struct schema_key *c = schema_child(&schema_config, sk, key);

		if (is_absent_value(c, m))
			continue;
		json_object_set_new(out, key, c ? walk(c, m) : json_incref(m));
	}
	return out;
}

static json_t *walk(const struct schema_key *sk, json_t *v)
{
	if (!strcmp(sk->path, "workload") && json_is_object(v))
		return workload_canon(v);
	if (sk->type == SCHEMA_OBJECT && json_is_object(v))
		return walk_object(sk, v);
	if (sk->type == SCHEMA_ARRAY && json_is_array(v)) {
		const struct schema_key *item = schema_item(&schema_config, sk);
		json_t *out = json_array(), *e;
		size_t i;

		json_array_foreach (v, i, e)
			json_array_append_new(out, item ? walk(item, e) : json_incref(e));
		return out;
	}
	return schema_value(sk, v);
}

json_t *canon_config(const json_t *config)
{
	const struct schema_key *root = schema_find(&schema_config, "");
	json_t *out;

	if (!root || !json_is_object(config))
		return json_deep_copy(config);
	out = walk(root, (json_t *)config);
	/* Deadlines are not identity: every configuration gets the default ones. */
	json_object_set_new(out, "timeouts", json_object());
	schema_fill_defaults(&schema_config, schema_find(&schema_config, "timeouts"),
			     json_object_get(out, "timeouts"));
	return out;
}

void canon_cell_id(const json_t *config, char id[17])
{
	json_t *c = canon_config(config);
	char *dump = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	char hex[65];

	sha256_hex(dump ? dump : "", dump ? strlen(dump) : 0, hex);
	memcpy(id, hex, 16);
	id[16] = '\0';
	free(dump);
	json_decref(c);
}
