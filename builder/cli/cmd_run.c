/* zbench run MATRIX: the main job. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/log.h"
#include "core/term.h"
#include "core/util.h"
#include "report/report.h"
#include "run/run.h"
#include "vm/disk.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: zbench run [options] MATRIX\n"
	    "       zbench run --resume RUNDIR\n"
	    "\n"
	    "Run every cell of MATRIX (repeats included) in a fresh VM with fresh disks and\n"
	    "write the results to a new run directory (printed on stdout at the end).\n"
	    "MATRIX may be a fio job file (FILE.fio or FILE.job): it runs in a matrix of\n"
	    "one small VM with one disk (docs/matrix.md, \"fio job files\").\n"
	    "\n"
	    "options:\n"
	    "  -o, --output DIR     run directory (default runs/<matrix name>-<UTC time>)\n"
	    "  -i, --image RECIPE   image recipe (default: the matrix's \"image\", else\n"
	    "                       %s); built if not cached. Given twice\n"
	    "                       or more (-i A -i B; or the matrix's \"images\"): every\n"
	    "                       cell runs on each image, back to back, A B then B A in\n"
	    "                       the next repeat; records name their image and side;\n"
	    "                       `zbench compare RUNDIR` compares A with B\n"
	    "                       (docs/compare.md)\n"
	    "      --cache-dir DIR  image cache (default $ZBENCH_CACHE_DIR, else\n"
	    "                       $XDG_CACHE_HOME/zbench, else ~/.cache/zbench)\n"
	    "      --accel A        auto|kvm|tcg, overrides the matrix's vm.accel; auto tries\n"
	    "                       KVM with a deadline on the guest's first output, then TCG\n"
	    "      --backend B      %s (docs/libvirt.md); default: the matrix's\n"
	    "                       \"backend\", else %s (%s with --hosts or\n"
	    "                       --libvirt-uri)\n"
	    "      --libvirt-uri URI  libvirt connection (default $ZBENCH_LIBVIRT_URI, the\n"
	    "                       matrix's \"libvirt_uri\", else qemu:///embed with its\n"
	    "                       root in the run directory)\n"
	    "      --hosts URI[=N],URI[=N]...  place cells on these libvirt hosts, at most N\n"
	    "                       at once on each (default 1); implies --backend libvirt\n"
	    "                       (docs/scale-out.md)\n"
	    "      --shared-paths   hosts of --hosts or --libvirt-uri on other machines see\n"
	    "                       the image cache and the run directory at the same paths\n"
	    "      --keep-disks     keep each cell's disk images in its directory\n"
	    "      --warm           restore cells from a warm snapshot of the booted guest\n"
	    "                       (the default; qemu backend; made on first use, kept in\n"
	    "                       the cache); a cell that cannot be restored boots, and\n"
	    "                       its record says why (docs/performance.md)\n"
	    "      --cold, --no-snapshot  boot every cell\n"
	    "      --limits-from-start  keep the disks' I/O limits (throttle) while the\n"
	    "                       guest sets up too; by default they are lifted for the\n"
	    "                       pool, the datasets and prefill phases and given back\n"
	    "                       before the first phase that is not an unmeasured\n"
	    "                       prefill (qemu backend, one cell at a time;\n"
	    "                       docs/disks.md)\n"
	    "      --allow-device PATH  let disks[].device use this host block device\n"
	    "                       (repeatable); its contents are destroyed. Devices that\n"
	    "                       are mounted, held, open or in a host pool are refused\n"
	    "                       anyway (docs/disks.md)\n"
	    "  -j, --jobs N         run N cells at once, each VM pinned to its own host cores;\n"
	    "                       refused if a disk is not throttled (the cells would\n"
	    "                       disturb each other) unless --allow-interference\n"
	    "      --allow-interference  let -j run cells whose disks are not throttled\n"
	    "      --shard I/N      run only the I-th of N deterministic slices of the cells\n"
	    "                       (by cell id: stable under resume); join with zbench merge\n"
	    "      --resume RUNDIR  finish a run that was interrupted or killed: cells with a\n"
	    "                       record are not run again, what the run left behind (QEMU\n"
	    "                       processes, disk images) is removed; same matrix and image\n"
	    "  -q, --quiet          no progress lines or run information on stderr (warnings\n"
	    "                       and errors still); the run directory still on stdout\n"
	    "      --no-report      do not write the report (report.md, report.html,\n"
	    "                       report.json and the cells' pages) into the run\n"
	    "                       directory at the end; `zbench report RUNDIR` does\n"
	    "      --strict         exit 1 when a measured phase did not measure the disks:\n"
	    "                       less than half of its reads reached them, or of its\n"
	    "                       writes within the timed window (named on stderr at the\n"
	    "                       end, and at the report's top, whatever the option)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Without -o the run directory is runs/<matrix name>-<UTC time>, and runs/latest\n"
	    "is a symlink to the newest one.\n"
	    "\n"
	    "exit status: 0 all cells ok, 1 some cell failed (see cells.jsonl) or, with\n"
	    "             --strict, some phase did not measure the disks,\n"
	    "             2 usage or input error, 130 interrupted\n",
	    RUN_DEFAULT_RECIPE, VM_BACKEND_CHOICES, VM_BACKEND_DEFAULT,
	    vm_backend_with(VM_CAP_HOSTS)->name);
}

/* The end of a run: every measured phase that did not measure the disks named on stderr, and
 * (with `report`) the report into the run directory (docs/reports.md). The run's outcome stands
 * whatever happens here: a report that cannot be written is a warning. Returns how many phases
 * were named. */
static size_t end_of_run(const char *dir, int report)
{
	struct zb_error err = { 0 };
	struct report_run run;
	size_t n;
	char **w;

	if (report_run_load(dir, &run, &err) < 0) {
		fprintf(stderr, "zbench: warning: no report: %s\n", TERM(err.msg));
		return 0;
	}
	results_skipped_print(&run.skipped, stderr);
	w = report_witness_warnings(&run, &n);
	for (size_t i = 0; i < n; i++) {
		char buf[1024 + 4];

		fprintf(stderr, "zbench: warning: not measured on the disks: %s\n",
			term_text(w[i], 1024, buf, sizeof(buf)));
	}
	report_witness_warnings_free(w, n);
	if (report && report_write(&run, dir, REPORT_JSON, &err) < 0)
		fprintf(stderr, "zbench: warning: no report: %s\n", TERM(err.msg));
	else if (report)
		log_info("report in %s/report.html (and report.md, report.json)", dir);
	report_run_release(&run);
	return n;
}

/* What the command line sets: the run's options, and whether to write the report at the end. */
struct run_cli {
	struct run_options o;
	int report;
	int strict; /* a phase that did not measure the disks fails the run */
};

static int set_output(struct run_cli *c, const char *arg)
{
	c->o.out_dir = arg;
	return 0;
}

static int set_image(struct run_cli *c, const char *arg)
{
	if (c->o.n_recipes == RUN_MAX_IMAGES) {
		fprintf(stderr, "zbench run: at most %d images (-i)\n", RUN_MAX_IMAGES);
		return -1;
	}
	c->o.recipes[c->o.n_recipes++] = arg;
	c->o.recipe_path = c->o.recipes[0];
	return 0;
}

static int set_cache_dir(struct run_cli *c, const char *arg)
{
	c->o.cache_dir = arg;
	return 0;
}

static int set_accel(struct run_cli *c, const char *arg)
{
	if (strcmp(arg, "auto") && strcmp(arg, "kvm") && strcmp(arg, "tcg")) {
		fprintf(stderr, "zbench run: --accel must be auto, kvm or tcg\n");
		return -1;
	}
	c->o.accel = arg;
	return 0;
}

/* --backend, --libvirt-uri and --hosts are checked by run_matrix(), with the matrix's own. */
static int set_backend(struct run_cli *c, const char *arg)
{
	c->o.backend = arg;
	return 0;
}

static int set_libvirt_uri(struct run_cli *c, const char *arg)
{
	c->o.libvirt_uri = arg;
	return 0;
}

static int set_hosts(struct run_cli *c, const char *arg)
{
	c->o.hosts = arg;
	return 0;
}

static int set_shared_paths(struct run_cli *c, const char *arg)
{
	c->o.shared_paths = 1;
	return 0;
}

static int set_keep_disks(struct run_cli *c, const char *arg)
{
	c->o.keep_disks = 1;
	return 0;
}

static int set_cold(struct run_cli *c, const char *arg)
{
	c->o.cold = 1;
	return 0;
}

static int set_limits_from_start(struct run_cli *c, const char *arg)
{
	c->o.limits_from_start = 1;
	return 0;
}

static int set_warm(struct run_cli *c, const char *arg)
{
	c->o.warm = 1;
	return 0;
}

static int set_allow_device(struct run_cli *c, const char *arg)
{
	passthrough_allow(arg);
	return 0;
}

static int set_jobs(struct run_cli *c, const char *arg)
{
	c->o.jobs = atoi(arg);
	if (c->o.jobs < 1 || c->o.jobs > 64) {
		fprintf(stderr, "zbench run: -j wants 1 to 64, got '%s'\n", arg);
		return -1;
	}
	return 0;
}

static int set_allow_interference(struct run_cli *c, const char *arg)
{
	c->o.allow_interference = 1;
	return 0;
}

static int set_shard(struct run_cli *c, const char *arg)
{
	struct run_options *o = &c->o;

	if (sscanf(arg, "%d/%d%c", &o->shard_index, &o->shard_count, (char[1]){ 0 }) != 2 ||
	    o->shard_count < 1 || o->shard_index < 1 || o->shard_index > o->shard_count) {
		fprintf(stderr, "zbench run: --shard wants I/N with 1 <= I <= N, got '%s'\n", arg);
		return -1;
	}
	return 0;
}

static int set_resume(struct run_cli *c, const char *arg)
{
	c->o.resume_dir = arg;
	return 0;
}

static int set_quiet(struct run_cli *c, const char *arg)
{
	log_set_quiet(1);
	return 0;
}

static int set_no_report(struct run_cli *c, const char *arg)
{
	c->report = 0;
	return 0;
}

static int set_strict(struct run_cli *c, const char *arg)
{
	c->strict = 1;
	return 0;
}

/* The options of `zbench run`, as usage() describes them: long name, short letter (0: none),
 * whether it takes an argument, and what it sets (0, or -1 after saying why on stderr). */
static const struct run_flag {
	const char *name;
	char letter;
	int has_arg;
	int (*set)(struct run_cli *c, const char *arg);
} run_flags[] = {
	{ "output", 'o', 1, set_output },
	{ "image", 'i', 1, set_image },
	{ "cache-dir", 0, 1, set_cache_dir },
	{ "accel", 0, 1, set_accel },
	{ "backend", 0, 1, set_backend },
	{ "libvirt-uri", 0, 1, set_libvirt_uri },
	{ "hosts", 0, 1, set_hosts },
	{ "shared-paths", 0, 0, set_shared_paths },
	{ "keep-disks", 0, 0, set_keep_disks },
	{ "warm", 0, 0, set_warm },
	{ "cold", 0, 0, set_cold },
	{ "no-snapshot", 0, 0, set_cold },
	{ "limits-from-start", 0, 0, set_limits_from_start },
	{ "allow-device", 0, 1, set_allow_device },
	{ "jobs", 'j', 1, set_jobs },
	{ "allow-interference", 0, 0, set_allow_interference },
	{ "shard", 0, 1, set_shard },
	{ "resume", 0, 1, set_resume },
	{ "quiet", 'q', 0, set_quiet },
	{ "no-report", 0, 0, set_no_report },
	{ "strict", 0, 0, set_strict },
};

#define RUN_FLAG_LONG 256 /* getopt's value for row k without a letter: RUN_FLAG_LONG + k */

/* Parse argv into `c` from the table: 0, 1 for --help (printed), or 2 (a usage error, said). */
static int parse_args(int argc, char **argv, struct run_cli *c)
{
	struct option longopts[ARRAY_SIZE(run_flags) + 2] = { { 0 } };
	char shortopts[2 * ARRAY_SIZE(run_flags) + 2] = "h";
	size_t ns = 1;
	int v;

	for (size_t k = 0; k < ARRAY_SIZE(run_flags); k++) {
		const struct run_flag *f = &run_flags[k];

		longopts[k] =
		    (struct option){ f->name, f->has_arg ? required_argument : no_argument, NULL,
				     f->letter ? f->letter : RUN_FLAG_LONG + (int)k };
		if (f->letter) {
			shortopts[ns++] = f->letter;
			if (f->has_arg)
				shortopts[ns++] = ':';
		}
	}
	longopts[ARRAY_SIZE(run_flags)] = (struct option){ "help", no_argument, NULL, 'h' };
	while ((v = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct run_flag *f = NULL;

		if (v == 'h') {
			usage(stdout);
			return 1;
		}
		for (size_t k = 0; k < ARRAY_SIZE(run_flags) && !f; k++)
			if (v ==
			    (run_flags[k].letter ? run_flags[k].letter : RUN_FLAG_LONG + (int)k))
				f = &run_flags[k];
		if (!f) {
			usage(stderr);
			return 2;
		}
		if (f->set(c, optarg) < 0)
			return 2;
	}
	if (c->o.resume_dir ? optind != argc : optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (!c->o.resume_dir)
		c->o.matrix_path = argv[optind];
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_cli c = { .report = 1 };
	struct zb_error err = { 0 };
	char *dir = NULL;
	int rc = parse_args(argc, argv, &c);

	if (rc)
		return rc == 1 ? 0 : rc;
	c.o.dir_out = &dir;
	rc = run_matrix(&c.o, &err);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	if (dir)
		printf("%s\n", dir); /* the run directory on stdout: scripts take it from there */
	if (dir && rc != 130 && end_of_run(dir, c.report) > 0 && c.strict && rc == 0) {
		fprintf(stderr, "zbench: --strict: some measured phases did not measure the disks "
				"(warnings above)\n");
		rc = 1;
	}
	free(dir);
	return rc;
}
