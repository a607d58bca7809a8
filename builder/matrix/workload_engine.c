#include "workload_engine.h"

#include <errno.h>
#include <string.h>

#define ENGINE_VERSION_MAX 64 /* characters of a recorded version */

const char *workload_engine_name(const json_t *config)
{
	const char *e = json_string_value(json_object_get(config, "engine"));

	return e && !strcmp(e, "fio") ? "fio" : "zbench";
}

json_t *workload_engine_record(const json_t *config, const json_t *fio)
{
	const char *v = json_string_value(json_object_get(fio, "fio version"));
	json_t *e;

	if (!fio)
		return NULL;
	e = json_pack("{s:s}", "name", workload_engine_name(config));
	/* the guest's words: kept only as a short printable ASCII string */
	if (v && *v && strlen(v) <= ENGINE_VERSION_MAX) {
		for (const char *p = v; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				return e;
		json_object_set_new(e, "version", json_string(v));
	}
	return e;
}
