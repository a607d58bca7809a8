/* The matrix keys of a disk's attributes, beside the disk models (disk_models.c) and buses
 * (disk_bus.h) they describe: a disk and a disk model share them (disks[].X and
 * disk_models.NAME.X). The schema (builder/matrix/schema_keys.c) expands DISK_ATTR_KEYS under
 * both prefixes; choices come from the tables (DISK_BUS_CHOICES), not from a list typed here.
 * A new attribute is one entry here and its reader in disk.c / disk_models.c. */
#ifndef ZB_DISK_KEYS_H
#define ZB_DISK_KEYS_H

#include "core/disk_bus.h"

/* struct schema_key entries under prefix P ("disks[]."), bus default BUSDEF (a JSON text or
 * NULL). The checks they name are the schema's (schema_int.h). */
#define DISK_ATTR_KEYS(P, BUSDEF)                                                                  \
	{ .path = P "bus",                                                                         \
	  .type = SCHEMA_ENUM,                                                                     \
	  .choices = DISK_BUS_CHOICES,                                                             \
	  .def = BUSDEF,                                                                           \
	  .help = "controller the guest sees the disk on (default virtio-blk); sata, usb2 and "    \
		  "usb3 need an image whose kernel has them (docs/disks.md)" },                    \
	    { .path = P "logical_block_size",                                                      \
	      .type = SCHEMA_INT,                                                                  \
	      .choices = "512|4096",                                                               \
	      .help = "sector size the guest sees" },                                              \
	    { .path = P "physical_block_size",                                                     \
	      .type = SCHEMA_INT,                                                                  \
	      .choices = "512|4096",                                                               \
	      .help = "physical sector size the guest sees (>= logical)" },                        \
	    { .path = P "rotational",                                                              \
	      .type = SCHEMA_BOOL,                                                                 \
	      .help = "whether the guest sees a spinning disk (virtio-blk: always true; nvme: "    \
		      "always false)" },                                                           \
	    { .path = P "rotation_rate",                                                           \
	      .type = SCHEMA_INT,                                                                  \
	      .min = 1,                                                                            \
	      .max = 65534,                                                                        \
	      .check = schema_check_rotation_rate,                                                 \
	      .help =                                                                              \
		  "rpm the disk reports (virtio-scsi): 1 = solid state, 1025..65534 = rotating" }, \
	    { .path = P "write_cache",                                                             \
	      .type = SCHEMA_BOOL,                                                                 \
	      .help = "volatile write cache the guest sees (QEMU write-cache); default on" },      \
	    { .path = P "discard",                                                                 \
	      .type = SCHEMA_BOOL,                                                                 \
	      .help = "pass TRIM/UNMAP through to the image (default on)" },                       \
	    { .path = P "throttle",                                                                \
	      .type = SCHEMA_OBJECT,                                                               \
	      .help =                                                                              \
		  "QEMU I/O limits (a throttle group per disk): what makes CI numbers stable" },   \
	    { .path = P "throttle.iops",                                                           \
	      .type = SCHEMA_INT,                                                                  \
	      .min = 1,                                                                            \
	      .max = 100000000,                                                                    \
	      .help = "I/Os per second, reads and writes together" },                              \
	    { .path = P "throttle.bps",                                                            \
	      .type = SCHEMA_SIZE,                                                                 \
	      .min = 4096,                                                                         \
	      .help = "bytes per second, reads and writes together (\"100M\")" },                  \
	    { .path = P "throttle.iops_burst",                                                     \
	      .type = SCHEMA_INT,                                                                  \
	      .min = 1,                                                                            \
	      .max = 100000000,                                                                    \
	      .help = "I/Os per second allowed during a burst (> iops)" },                         \
	    { .path = P "throttle.bps_burst",                                                      \
	      .type = SCHEMA_SIZE,                                                                 \
	      .min = 4096,                                                                         \
	      .help = "bytes per second allowed during a burst (> bps)" },                         \
	{                                                                                          \
		.path = P "throttle.burst_length", .type = SCHEMA_DURATION, .min = 1,              \
		.help = "how long a burst may last (default 1s)"                                   \
	}

/* The keys only a disk has: the model it names and its figures (disks[].model_params.NAME: the
 * disk-model table's figures, checked against it by schema_check_model_param()). */
#define DISK_MODEL_KEYS(P)                                                                         \
	{ .path = P "model",                                                                       \
	  .type = SCHEMA_STRING,                                                                   \
	  .check = schema_check_ident,                                                             \
	  .typename = "model name",                                                                \
	  .help = "a disk model: built in (a service-time model: docs/disks.md), whose bus and "   \
		  "geometry fill what the disk leaves out and whose figures go to model_params, "  \
		  "or the matrix's own disk_models (attributes only)" },                           \
	    { .path = P "model_params",                                                            \
	      .type = SCHEMA_OBJECT,                                                               \
	      .help = "figures of a built-in model, overriding its row (resolved: every figure "   \
		      "of the model)" },                                                           \
	{                                                                                          \
		.path = P "model_params.*", .type = SCHEMA_ANY, .check = schema_check_model_param,   \
		.typename = "number",                                                              \
		.help = "one figure by name (rpm, seek_avg_ms, cache_mb, write_cache, ...: "       \
			"docs/disks.md), within its range"                                         \
	}

#endif
