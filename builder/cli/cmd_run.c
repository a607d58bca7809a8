/* zbench run MATRIX: the main job. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/log.h"
#include "core/term.h"
#include "core/util.h"
#include "options.h"
#include "report/report.h"
#include "run/run.h"
#include "vm/disk.h"
#include "vm/vm.h"

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

static int set_image(void *ctx, const char *arg)
{
	struct run_cli *c = ctx;

	if (c->o.n_recipes == RUN_MAX_IMAGES) {
		fprintf(stderr, "zbench run: at most %d images (-i)\n", RUN_MAX_IMAGES);
		return -1;
	}
	c->o.recipes[c->o.n_recipes++] = arg;
	c->o.recipe_path = c->o.recipes[0];
	return 0;
}

static int set_allow_device(void *ctx, const char *arg)
{
	passthrough_allow(arg);
	return 0;
}

static int set_shard(void *ctx, const char *arg)
{
	struct run_cli *c = ctx;
	struct run_options *o = &c->o;

	if (sscanf(arg, "%d/%d%c", &o->shard_index, &o->shard_count, (char[1]){ 0 }) != 2 ||
	    o->shard_count < 1 || o->shard_index < 1 || o->shard_index > o->shard_count) {
		fprintf(stderr, "zbench run: --shard wants I/N with 1 <= I <= N, got '%s'\n", arg);
		return -1;
	}
	return 0;
}

static int set_no_report(void *ctx, const char *arg)
{
	struct run_cli *c = ctx;

	c->report = 0;
	return 0;
}

/* The options of `zbench run`: parsing, --help, the man page and completion (options.h). */
static const struct cli_option run_options[] = {
	CLI_OPT_STRING('o', "output", "DIR", struct run_cli, o.out_dir,
		       "run directory (default runs/<matrix name>-<UTC time>)"),
	{ CLI_ROW_CALL('i', "image", "RECIPE", set_image,
		       "image recipe (default: the matrix's \"image\", else\n" RUN_DEFAULT_RECIPE
		       "); built if not cached. Given twice\nor more (-i A -i B; or the matrix's "
		       "\"images\"): every\ncell runs on each image, back to back, A B then B A "
		       "in\nthe next repeat; records name their image and side;\n`zbench compare "
		       "RUNDIR` compares A with B\n(docs/compare.md)"),
	  .many = 1 },
	CLI_OPT_STRING(0, "cache-dir", "DIR", struct run_cli, o.cache_dir,
		       "image cache (default $ZBENCH_CACHE_DIR, else\n$XDG_CACHE_HOME/zbench, else "
		       "~/.cache/zbench)"),
	CLI_OPT_CHOICE(
	    0, "accel", "A", VM_ACCEL_CHOICES, struct run_cli, o.accel,
	    "overrides the matrix's vm.accel; auto tries KVM with a\ndeadline on the guest's "
	    "first "
	    "output, then TCG (a failure\nremembered per host, kernel and QEMU)"),
	CLI_OPT_CHOICE(
	    0, "backend", "B", VM_BACKEND_CHOICES, struct run_cli, o.backend,
	    "the VM backend (docs/libvirt.md); default: the matrix's\n\"backend\", else the "
	    "first "
	    "of these (the one that runs VMs\non hosts with --hosts or --libvirt-uri)"),
	CLI_OPT_STRING(
	    0, "libvirt-uri", "URI", struct run_cli, o.libvirt_uri,
	    "libvirt connection (default $ZBENCH_LIBVIRT_URI, the\nmatrix's \"libvirt_uri\", "
	    "else "
	    "qemu:///embed with its\nroot in the run directory)"),
	CLI_OPT_STRING(
	    0, "hosts", "URI[=N],...", struct run_cli, o.hosts,
	    "place cells on these libvirt hosts, at most N at once\non each (default 1); implies "
	    "the libvirt backend\n(docs/scale-out.md)"),
	CLI_OPT_FLAG(0, "shared-paths", struct run_cli, o.shared_paths,
		     "hosts of --hosts or --libvirt-uri on other machines see\nthe image cache and "
		     "the run "
		     "directory at the same paths"),
	CLI_OPT_FLAG(0, "keep-disks", struct run_cli, o.keep_disks,
		     "keep each cell's disk images in its directory"),
	CLI_OPT_FLAG(
	    0, "warm", struct run_cli, o.warm,
	    "restore cells from a warm snapshot of the booted guest\n(the default; qemu backend; "
	    "made "
	    "on first use, kept in\nthe cache); a cell that cannot be restored boots, and\nits "
	    "record says why (docs/performance.md)"),
	CLI_OPT_FLAG(0, "cold", struct run_cli, o.cold, "boot every cell"),
	CLI_OPT_FLAG(0, "no-snapshot", struct run_cli, o.cold, "the same as --cold"),
	CLI_OPT_FLAG(
	    0, "limits-from-start", struct run_cli, o.limits_from_start,
	    "keep the disks' I/O limits (throttle) while the guest\nsets up too; by default "
	    "they are "
	    "lifted for the pool,\nthe datasets and prefill phases and given back "
	    "before\nthe first "
	    "phase that is not an unmeasured prefill (qemu\nbackend, one cell at a time; "
	    "docs/disks.md)"),
	{ CLI_ROW_CALL(0, "allow-device", "PATH", set_allow_device,
		       "let disks[].device use this host block device\n(repeatable); its contents "
		       "are destroyed. Devices that\nare mounted, held, open or in a host pool are "
		       "refused\nanyway (docs/disks.md)"),
	  .many = 1 },
	CLI_OPT_INT('j', "jobs", "N", 1, 64, struct run_cli, o.jobs,
		    "run N cells at once, each VM pinned to its own host cores;\nrefused if a disk "
		    "is not throttled (the cells would\ndisturb each other) unless "
		    "--allow-interference"),
	CLI_OPT_FLAG(0, "allow-interference", struct run_cli, o.allow_interference,
		     "let -j run cells whose disks are not throttled"),
	CLI_OPT_CALL(
	    0, "shard", "I/N", set_shard,
	    "run only the I-th of N deterministic slices of the cells\n(by cell id: stable under "
	    "resume); join with zbench merge"),
	CLI_OPT_STRING(
	    0, "resume", "RUNDIR", struct run_cli, o.resume_dir,
	    "finish a run that was interrupted or killed: cells with a\nrecord are not run "
	    "again, "
	    "what the run left behind (its\nVMs, disk images) is removed; same matrix and image"),
	CLI_OPT_QUIET("no progress lines or run information on stderr (warnings\nand errors "
		      "still); the run directory still on stdout"),
	CLI_OPT_CALL(0, "no-report", NULL, set_no_report,
		     "do not write the report (report.md, report.html,\nreport.json and the cells' "
		     "pages) into "
		     "the run\ndirectory at the end; `zbench report RUNDIR` does"),
	CLI_OPT_FLAG(
	    0, "strict", struct run_cli, strict,
	    "exit 1 when a measured phase did not measure the disks:\nless than half of its "
	    "reads "
	    "reached them, or of its\nwrites within the timed window (named on stderr at "
	    "the\nend, "
	    "and at the report's top, whatever the option)"),
};

/* `zbench run --resume RUNDIR` takes no MATRIX: the run directory has it. */
static const struct cli_form run_forms[] = {
	{ .option = "resume" },
};

static int run_main(void *ctx, int argc, char **argv);

const struct cli_command cmd_run_command = {
	.name = "run",
	.about = "Run every cell of MATRIX (repeats included) in a fresh VM with fresh disks and\n"
		 "write the results to a new run directory (printed on stdout at the end).\n"
		 "MATRIX may be a fio job file (FILE.fio or FILE.job): it runs in a matrix of\n"
		 "one small VM with one disk (docs/matrix.md, \"fio job files\").",
	CLI_OPTIONS(run_options),
	.epilog = "Without -o the run directory is runs/<matrix name>-<UTC time>, and runs/latest\n"
		  "is a symlink to the newest one.\n"
		  "\n"
		  "exit status: 0 all cells ok, 1 some cell failed (see cells.jsonl) or, with\n"
		  "             --strict, some phase did not measure the disks,\n"
		  "             2 usage or input error, 130 interrupted",
	CLI_ARGS("MATRIX", 1, 1),
	CLI_FORMS(run_forms),
	.run = run_main,
};

static int run_main(void *ctx, int argc, char **argv)
{
	struct run_cli *c = ctx;
	struct zb_error err = { 0 };
	char *dir = NULL;
	int rc;

	if (!c->o.resume_dir)
		c->o.matrix_path = argv[0];
	c->o.dir_out = &dir;
	rc = run_matrix(&c->o, &err);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	if (dir)
		printf("%s\n", dir); /* the run directory on stdout: scripts take it from there */
	if (dir && rc != 130 && end_of_run(dir, c->report) > 0 && c->strict && rc == 0) {
		fprintf(stderr, "zbench: --strict: some measured phases did not measure the disks "
				"(warnings above)\n");
		rc = 1;
	}
	free(dir);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_cli c = { .report = 1 };

	return cli_run(&cmd_run_command, argc, argv, &c);
}
