/* Rendering a finished run: fio's JSON (and json+) shape, or a short human summary. */
#ifndef ZB_ENGINE_OUTPUT_H
#define ZB_ENGINE_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "workload.h"

#define ENGINE_VERSION_STRING "zbench-engine-0.1"

/* The whole result document (a new reference). `plus`: add json+ "bins" to clat_ns. */
json_t *output_json_build(const struct workload_run *run, bool plus);
/* fio-like one-screen summary for --output-format=normal. */
void output_normal(FILE *out, const struct workload_run *run);

#endif
