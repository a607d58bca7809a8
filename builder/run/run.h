/* Running a matrix: for every cell (and repeat), fresh disks, a fresh VM, the job over the
 * channel, the result into the run directory, the disks deleted. */
#ifndef ZB_RUN_H
#define ZB_RUN_H

#include <jansson.h>

#include "core/error.h"

/* The image recipe of a matrix that names none (and of `zbench run` without -i). */
#define RUN_DEFAULT_RECIPE "images/debian12-zfs.json"

/* The most images one run compares (-i given this often, or the matrix's "images"). */
#define RUN_MAX_IMAGES 8

struct run_options {
	const char *matrix_path;
	const char *matrix_text;   /* if set, the matrix itself (matrix_path only names it) */
	const char *matrix_sha256; /* with matrix_text: the hash of the original file, if known */
	const char *replay_image_hash; /* replay: the image the original run used (a note if not) */
	const char *recipe_path; /* image recipe; NULL: the matrix's "image", else the default */
	/* several images (-i A -i B ...; n_recipes >= 2 overrides recipe_path): each cell runs
	 * on each, back to back (docs/compare.md) */
	const char *recipes[RUN_MAX_IMAGES];
	int n_recipes;
	/* replay: recipe_path and recipes were read from this file (the run's manifest), not the
	 * command line: checked, found and built as a matrix's are (recipe_resolve.h) */
	const char *recipes_from;
	const char *cache_dir;	 /* NULL: image_cache_dir_default() */
	const char *out_dir;	 /* NULL: runs/<matrix name>-<UTC timestamp> */
	const char *accel;	 /* NULL: the matrix's vm.accel; else auto|kvm|tcg */
	const char *backend;	 /* NULL: the matrix's "backend", else qemu (libvirt with hosts) */
	const char *libvirt_uri; /* NULL: $ZBENCH_LIBVIRT_URI, the matrix's libvirt_uri, else
				  * the embedded driver */
	const char *hosts;	 /* --hosts "URI[=N],...": cells on these libvirt hosts */
	int shared_paths;	 /* remote hosts see the image cache and the run directory at
				  * the same paths (a shared file system) */
	int keep_disks;		 /* keep each cell's disk images (debugging) */
	int cold;		 /* --cold: boot every cell, no warm snapshot (vm_snapshot.h) */
	int warm;		 /* --warm: restore cells from a warm snapshot where they can be */
	int limits_from_start;	 /* --limits-from-start: the disks' I/O limits during setup too
				  * (default: lifted until the first phase that is not an
				  * unmeasured prefill, on backends that can; docs/disks.md) */
	int jobs;		 /* cells at once (-j); <= 1: one at a time */
	int allow_interference;	 /* -j with unthrottled disks: run anyway */
	int shard_index, shard_count; /* run only cells whose shard is index (1-based) of count */
	const char *resume_dir;	      /* finish this run directory instead of starting a new one */
	/* With resume_dir (compare --adaptive, docs/compare.md): run repeats 0..repeats_total-1
	 * instead of the matrix's count (more, never fewer), and only the cells named in
	 * only_cells (ids; NULL: every cell). Each added repeat runs every image back to back in
	 * the turning order of the fixed repeats, so the sides stay paired and interleaved. */
	int repeats_total;
	const char *const *only_cells;
	size_t n_only_cells;
	char **dir_out; /* if set: the run directory (malloc'd) when the run got to its end (run
			 * or interrupted); run_matrix() prints nothing on stdout, the caller
			 * prints it if its command promises it (zbench run, replay) */
};

/* Run the matrix. Returns 0 if every cell ended ok, 1 if some did not (their records say why),
 * 130 if interrupted, or < 0 with err set if the run could not start or the results could not
 * be written. */
int run_matrix(const struct run_options *o, struct zb_error *err);

/* The kernel command line's share of a cell's module parameters (config.module_params):
 * " zbench.preload=zfs MODULE.PARAM=VALUE...", so the agent loads zfs.ko while the guest boots
 * and kmod's modprobe applies the parameters (docs/performance.md). "" (the agent then loads
 * zfs after the job, with the parameters on modprobe's command line) when a value holds a
 * character the command line cannot carry as it is, or the parameters would make it too long.
 * The caller frees the result. */
char *run_module_cmdline(const json_t *module_params);

#endif
