/* Which program runs a cell's workload: our zbench-engine (the default) or Debian's fio, chosen
 * by the configuration's "engine" key (docs/engine.md, "Real fio in the guest"). The host's
 * share: saying in each record which engine ran (whether the image has fio is one of the
 * needs in builder/run/image_needs.c). */
#ifndef ZB_WORKLOAD_ENGINE_H
#define ZB_WORKLOAD_ENGINE_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"
#include "image/image.h"
#include "matrix.h"

/* The engine a configuration asks for: "zbench" (also when absent) or "fio". Static. */
const char *workload_engine_name(const json_t *config);

/* The record's "engine": {"name", "version"}, the version as the result's "fio version" says
 * it (a guest's string: type-checked and clipped), or NULL when there is no result. */
json_t *workload_engine_record(const json_t *config, const json_t *fio);

#endif
