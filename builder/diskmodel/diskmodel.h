/* Disk service-time models: what a real drive of a class would take to serve each request.
 *
 * One table of models (dm_table.c), one row per drive, every figure a named parameter with its
 * source. A row is a class (HDD, SSD, USB stick: one `struct dm_class_ops` each, pure
 * computation in virtual time) plus its figures. dm_sched.c queues requests in virtual time and
 * gives each its completion time; the nbdkit filter (nbdkit_filter.c) waits until that moment
 * before it answers. zbench itself reads the table (matrix checks, docs, the VM's geometry).
 *
 * This folder is a floor below vm/ and run/ and is also linked into the nbdkit filter, which has
 * no builder/core: its checks answer in a caller's buffer (`why`, `whylen`), which callers turn
 * into a struct zb_error. */
#ifndef ZB_DISKMODEL_H
#define ZB_DISKMODEL_H

#include <stddef.h>
#include <stdint.h>

enum dm_class { DM_CLASS_HDD, DM_CLASS_SSD, DM_CLASS_USB, DM_CLASS_COUNT };

#define DM_HDD (1u << DM_CLASS_HDD)
#define DM_SSD (1u << DM_CLASS_SSD)
#define DM_USB (1u << DM_CLASS_USB)
#define DM_ALL (DM_HDD | DM_SSD | DM_USB)

/* X(ID, name, unit, min, max, classes, integer, help): every figure a model has. A figure
 * belongs to the classes that use it; setting another class's figure is an error. */
#define DM_PARAM_LIST(X)                                                                           \
	X(WRITE_CACHE, "write_cache", "0/1", 0, 1, DM_HDD | DM_SSD, 1,                             \
	  "the drive's volatile write cache is on (1): writes are acknowledged from it")           \
	X(CACHE_MB, "cache_mb", "MiB", 0, 65536, DM_HDD | DM_SSD, 0,                               \
	  "write cache size (HDD: DRAM buffer; SSD: DRAM/SLC buffer before NAND programs)")        \
	X(QUEUE_DEPTH, "queue_depth", "commands", 1, 32, DM_HDD | DM_USB, 1,                       \
	  "commands the drive reorders among (NCQ: 32; USB mass storage: 1)")                      \
	X(BUS_MBS, "bus_mbs", "MB/s", 1, 100000, DM_ALL, 0,                                        \
	  "interface bandwidth (SATA 600 MB/s link: about 550; USB 2.0: about 40)")                \
	X(CMD_US, "cmd_us", "us", 0, 100000, DM_ALL, 0, "controller overhead per command")         \
	X(FLUSH_US, "flush_us", "us", 0, 1000000, DM_ALL, 0,                                       \
	  "cost of a FLUSH besides the destage of what the cache holds (SSD: the FTL's commit)")   \
	X(PHYSICAL_BLOCK, "physical_block", "bytes", 512, 65536, DM_ALL, 1,                        \
	  "physical sector: a write covering part of one costs a read-modify-write")               \
	X(RPM, "rpm", "rev/min", 1000, 20000, DM_HDD, 0, "spindle speed")                          \
	X(SEEK_TRACK_MS, "seek_track_ms", "ms", 0.01, 1000, DM_HDD, 0, "track-to-track seek")      \
	X(SEEK_AVG_MS, "seek_avg_ms", "ms", 0.1, 1000, DM_HDD, 0,                                  \
	  "average seek (a third of the stroke)")                                                  \
	X(SEEK_FULL_MS, "seek_full_ms", "ms", 0.1, 1000, DM_HDD, 0, "full-stroke seek")            \
	X(XFER_OUTER_MBS, "xfer_outer_mbs", "MB/s", 1, 10000, DM_HDD, 0,                           \
	  "media transfer rate at the outer tracks (LBA 0)")                                       \
	X(XFER_INNER_MBS, "xfer_inner_mbs", "MB/s", 1, 10000, DM_HDD, 0,                           \
	  "media transfer rate at the inner tracks (last LBA)")                                    \
	X(READAHEAD_KB, "readahead_kb", "KiB", 0, 65536, DM_HDD, 0,                                \
	  "how far the drive reads on past a read while idle")                                     \
	X(RA_SEGMENTS, "ra_segments", "segments", 1, 64, DM_HDD, 1,                                \
	  "read-ahead segments (streams the drive keeps cached)")                                  \
	X(READ_US, "read_us", "us", 1, 100000, DM_SSD | DM_USB, 0,                                 \
	  "flash read of one page (array read plus its transfer off the die)")                     \
	X(PROGRAM_US, "program_us", "us", 1, 100000, DM_SSD, 0, "program of one page")             \
	X(WRITE_US, "write_us", "us", 0, 100000, DM_SSD, 0,                                        \
	  "acknowledging a write the cache takes (buffer allocation, mapping update)")             \
	X(PAGE_KB, "page_kb", "KiB", 1, 1024, DM_SSD, 0,                                           \
	  "unit a die reads or programs, and the stripe across dies")                              \
	X(CHANNELS, "channels", "channels", 1, 64, DM_SSD, 1, "flash channels")                    \
	X(DIES, "dies", "dies/channel", 1, 64, DM_SSD, 1, "dies per channel")                      \
	X(PLP, "plp", "0/1", 0, 1, DM_SSD, 1,                                                      \
	  "power-loss protection: a FLUSH costs only its command")                                 \
	X(STEADY_WA, "steady_wa", "x", 1, 20, DM_SSD, 0,                                           \
	  "write amplification once the drive has been written over (1: fresh-out-of-box)")        \
	X(WRITE_MBS, "write_mbs", "MB/s", 0.1, 10000, DM_SSD | DM_USB, 0,                          \
	  "sequential write rate (SSD: into its cache; USB: into an open erase block)")            \
	X(ERASE_BLOCK_KB, "erase_block_kb", "KiB", 4, 65536, DM_USB, 0,                            \
	  "erase block (allocation unit)")                                                         \
	X(MERGE_MS, "merge_ms", "ms", 0, 10000, DM_USB, 0,                                         \
	  "closing an erase block a write did not fill: copy the rest and erase")                  \
	X(OPEN_BLOCKS, "open_blocks", "blocks", 1, 64, DM_USB, 1,                                  \
	  "erase blocks open for writing at once")

enum dm_param_id {
#define DM_X_ENUM(id, ...) DM_P_##id,
	DM_PARAM_LIST(DM_X_ENUM)
#undef DM_X_ENUM
	    DM_P_COUNT
};

struct dm_param_desc {
	const char *name, *unit;
	double min, max;
	unsigned classes; /* DM_HDD | ... */
	int integer;	  /* whole numbers only */
	const char *help;
};

extern const struct dm_param_desc dm_param_descs[DM_P_COUNT];

/* A model's figures. v[] is indexed by enum dm_param_id; unused figures of a class are 0. set has
 * bit id for each figure dm_params_set() overrode: only those are held against the disk's size
 * (a model's own cache on a disk smaller than it is scaled down to a quarter of the disk). */
struct dm_params {
	enum dm_class cls;
	double v[DM_P_COUNT];
	uint64_t set;
};

struct dm_model {
	const char *name, *description;
	enum dm_class cls;
	/* what the VM shows of the drive (builder/vm/disk_models.c reads these; its physical
	 * sector and rotation rate are figures: dm_model_physical_block(), _rotation_rate()) */
	const char *bus;
	int logical_block_size;
	double v[DM_P_COUNT];
	const char *src[DM_P_COUNT]; /* where each figure comes from */
};

extern const struct dm_model dm_models[];
extern const size_t dm_model_count;

const char *dm_class_name(enum dm_class cls);
/* What the VM shows of a model's drive, read from its figures (each written once, with its
 * source): the physical sector (physical_block; 512 without one), and the rotation rate (rpm;
 * 1, solid state in SCSI's and ATA's convention, for a class without an rpm). */
int dm_model_physical_block(const struct dm_model *m);
int dm_model_rotation_rate(const struct dm_model *m);
const struct dm_model *dm_model_find(const char *name);
const struct dm_param_desc *dm_param_find(const char *name, enum dm_param_id *id);

/* The model's figures as a starting point for overrides. */
void dm_params_from_model(struct dm_params *p, const struct dm_model *m);
/* Override one figure: < 0 with a reason in why for an unknown name, another class's figure, a
 * value that is not a number, a fraction for a whole-number figure, or a value out of range. */
int dm_params_set(struct dm_params *p, const char *name, const char *value, char *why,
		  size_t whylen);
/* The figures together, for a disk of disk_bytes (0: size unknown): the seek curve rises, the
 * inner tracks are not faster than the outer, an overridden cache fits on the disk, ... < 0 with
 * a reason. */
int dm_params_check(const struct dm_params *p, uint64_t disk_bytes, char *why, size_t whylen);

/* --- requests and the virtual-time queue (dm_sched.c) ------------------------------------- */

enum dm_op {
	DM_OP_READ,
	DM_OP_WRITE,
	DM_OP_FLUSH,
	DM_OP_TRIM, /* trims and zeroes: metadata-only on every class modelled */
	DM_OP_ZERO,
};

#define DM_REQ_FUA (1u << 0)

/* One request. The caller fills arrival..flags and keeps the struct alive until done is set. */
struct dm_req {
	uint64_t arrival; /* virtual ns, nondecreasing over submissions */
	uint64_t offset;
	uint32_t len;
	uint8_t op, flags;
	/* out */
	uint8_t done_set;
	uint64_t start, done; /* when service began and when it completes (virtual ns) */
};

struct dm_disk;
struct dm_stats;

/* A modelled disk: its class, figures, state and counters. Everything below is pure: the same
 * stream of (arrival, op, offset, len, flags) gives the same completion times anywhere. */
struct dm_disk *dm_disk_new(const struct dm_params *p, uint64_t disk_bytes, char *why,
			    size_t whylen);
void dm_disk_free(struct dm_disk *d);
const struct dm_stats *dm_disk_stats(const struct dm_disk *d);

/* Queue r (its arrival must not precede an earlier submission's). Its completion may be known at
 * once (r->done_set) or only after dm_disk_advance() passed the moment its service starts. < 0
 * if the queue is full. */
int dm_disk_submit(struct dm_disk *d, struct dm_req *r);
/* Decide everything that starts before now (all requests arriving before now were submitted). */
void dm_disk_advance(struct dm_disk *d, uint64_t now);
/* When dm_disk_advance() can next decide something (UINT64_MAX: nothing pending). */
uint64_t dm_disk_next_event(const struct dm_disk *d);

/* --- a closed-loop load in virtual time (dm_sim.c), fio-like ------------------------------ */

/* qd requests kept in flight; each completion is followed, host_gap_ns later, by the next
 * request of its slot (with fsync, a FLUSH after each write). Offsets are bs-aligned in
 * [0, span), random (a fixed xorshift sequence from seed) or sequential (one shared cursor). */
struct dm_sim_load {
	uint8_t op; /* DM_OP_READ or DM_OP_WRITE */
	int random, fsync;
	uint32_t bs;
	unsigned qd;
	uint64_t span, count, host_gap_ns, seed;
};

struct dm_sim_result {
	uint64_t ops, ns;	 /* requests of the load (not the flushes) and the virtual time */
	double iops, mbs;	 /* per second; MB = 10^6 bytes */
	double lat_us, flush_us; /* mean latency of the requests and of the flushes */
};

/* Run the load on a fresh disk of disk_bytes with figures p; < 0 with a reason. */
int dm_sim_run(const struct dm_params *p, uint64_t disk_bytes, const struct dm_sim_load *l,
	       struct dm_sim_result *out, char *why, size_t whylen);

#endif
