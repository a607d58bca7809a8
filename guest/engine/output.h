/* Rendering a finished run: fio's JSON (and json+) shape, or a short human summary. */
#ifndef ZB_ENGINE_OUTPUT_H
#define ZB_ENGINE_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "workload.h"

#define ENGINE_VERSION_STRING "zbench-engine-0.1"

/* A new result document with fio's top-level keys, in fio's order: "fio version", "timestamp",
 * "timestamp_ms", "time" (local, as ctime without the newline) and an empty "global options".
 * Shared by the fio and the iozone modes. */
json_t *output_json_root(time_t timestamp, uint64_t timestamp_ms);
/* The whole result document (a new reference). `plus`: add json+ "bins" to clat_ns. */
json_t *output_json_build(const struct workload_run *run, bool plus);
/* fio-like one-screen summary for --output-format=normal. */
void output_normal(FILE *out, const struct workload_run *run);

#endif
