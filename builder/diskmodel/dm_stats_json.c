/* The stats as the record's JSON (host only: the filter does not link jansson). */
#include <jansson.h>
#include <string.h>

#include "dm_stats.h"

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

json_t *dm_stats_to_json(const struct dm_stats *s)
{
	json_t *o = json_object();
	uint64_t reqs = s->reads + s->writes + s->flushes + s->trims;

	for (size_t i = 0; i < dm_stats_field_count; i++) {
		uint64_t v;

		memcpy(&v, (const char *)s + dm_stats_fields[i].offset, 8);
		json_object_set_new(o, dm_stats_fields[i].name, json_integer((json_int_t)v));
	}
	json_object_set_new(o, "mean_seek_distance",
			    json_real(ratio(s->seek_distance_sum, s->seeks)));
	json_object_set_new(o, "mean_queue_depth", json_real(ratio(s->queue_depth_sum, reqs)));
	json_object_set_new(o, "mean_service_us", json_real(ratio(s->service_ns_sum, reqs) / 1000));
	json_object_set_new(o, "mean_flush_us",
			    json_real(ratio(s->flush_ns_sum, s->flushes) / 1000));
	json_object_set_new(o, "host_cpu_us_per_request",
			    json_real(ratio(s->host_cpu_ns, reqs) / 1000));
	return o;
}
