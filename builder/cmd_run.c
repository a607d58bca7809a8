/* zbench run MATRIX: the main job. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "disk.h"
#include "log.h"
#include "report.h"
#include "run.h"
#include "term.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: zbench run [options] MATRIX\n"
	    "       zbench run --resume RUNDIR\n"
	    "\n"
	    "Run every cell of MATRIX (repeats included) in a fresh VM with fresh disks and\n"
	    "write the results to a new run directory (printed on stdout at the end).\n"
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
	    "      --backend B      qemu or libvirt (docs/libvirt.md); default: the matrix's\n"
	    "                       \"backend\", else qemu (libvirt with --hosts or\n"
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
	    "      --cold, --no-snapshot  boot every cell; without it the qemu backend\n"
	    "                       restores cells from a warm snapshot of the booted guest\n"
	    "                       (docs/performance.md)\n"
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
	    "  -h, --help           this text\n"
	    "\n"
	    "Without -o the run directory is runs/<matrix name>-<UTC time>, and runs/latest\n"
	    "is a symlink to the newest one.\n"
	    "\n"
	    "exit status: 0 all cells ok, 1 some cell failed (see cells.jsonl),\n"
	    "             2 usage or input error, 130 interrupted\n",
	    RUN_DEFAULT_RECIPE);
}

/* The report of the run into its own directory (docs/reports.md). The run's outcome stands
 * whatever happens here: a report that cannot be written is a warning. */
static void end_of_run_report(const char *dir)
{
	struct zb_error err = { 0 };
	struct report_run run;

	if (report_run_load(dir, &run, &err) < 0) {
		fprintf(stderr, "zbench: warning: no report: %s\n", TERM(err.msg));
		return;
	}
	results_skipped_print(&run.skipped, stderr);
	if (report_write(&run, dir, REPORT_JSON, &err) < 0)
		fprintf(stderr, "zbench: warning: no report: %s\n", TERM(err.msg));
	else
		fprintf(stderr, "zbench: report in %s/report.html (and report.md, report.json)\n",
			TERM(dir));
	report_run_release(&run);
}

int cmd_run(int argc, char **argv)
{
	enum {
		OPT_CACHE = 256,
		OPT_ACCEL,
		OPT_KEEP,
		OPT_RESUME,
		OPT_ALLOW_DEVICE,
		OPT_BACKEND,
		OPT_LIBVIRT_URI,
		OPT_SHARD,
		OPT_INTERFERENCE,
		OPT_HOSTS,
		OPT_SHARED_PATHS,
		OPT_NO_REPORT,
		OPT_COLD
	};
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "image", required_argument, NULL, 'i' },
		{ "cache-dir", required_argument, NULL, OPT_CACHE },
		{ "accel", required_argument, NULL, OPT_ACCEL },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "libvirt-uri", required_argument, NULL, OPT_LIBVIRT_URI },
		{ "keep-disks", no_argument, NULL, OPT_KEEP },
		{ "cold", no_argument, NULL, OPT_COLD },
		{ "no-snapshot", no_argument, NULL, OPT_COLD },
		{ "allow-device", required_argument, NULL, OPT_ALLOW_DEVICE },
		{ "resume", required_argument, NULL, OPT_RESUME },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "jobs", required_argument, NULL, 'j' },
		{ "allow-interference", no_argument, NULL, OPT_INTERFERENCE },
		{ "hosts", required_argument, NULL, OPT_HOSTS },
		{ "shared-paths", no_argument, NULL, OPT_SHARED_PATHS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "no-report", no_argument, NULL, OPT_NO_REPORT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_options o = { 0 };
	struct zb_error err = { 0 };
	char *dir = NULL;
	int c, rc, report = 1;

	while ((c = getopt_long(argc, argv, "o:i:j:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.out_dir = optarg;
			break;
		case 'i':
			if (o.n_recipes == RUN_MAX_IMAGES) {
				fprintf(stderr, "zbench run: at most %d images (-i)\n",
					RUN_MAX_IMAGES);
				return 2;
			}
			o.recipes[o.n_recipes++] = optarg;
			o.recipe_path = o.recipes[0];
			break;
		case OPT_CACHE:
			o.cache_dir = optarg;
			break;
		case OPT_ACCEL:
			if (strcmp(optarg, "auto") && strcmp(optarg, "kvm") &&
			    strcmp(optarg, "tcg")) {
				fprintf(stderr, "zbench run: --accel must be auto, kvm or tcg\n");
				return 2;
			}
			o.accel = optarg;
			break;
		case OPT_ALLOW_DEVICE:
			passthrough_allow(optarg);
			break;
		case OPT_BACKEND:
			o.backend = optarg; /* run_matrix() rejects an unknown one */
			break;
		case OPT_LIBVIRT_URI:
			o.libvirt_uri = optarg; /* checked by run_matrix() */
			break;
		case OPT_HOSTS:
			o.hosts = optarg; /* parsed and checked by run_matrix() */
			break;
		case OPT_SHARED_PATHS:
			o.shared_paths = 1;
			break;
		case OPT_NO_REPORT:
			report = 0;
			break;
		case OPT_KEEP:
			o.keep_disks = 1;
			break;
		case OPT_COLD:
			o.cold = 1;
			break;
		case OPT_RESUME:
			o.resume_dir = optarg;
			break;
		case 'j':
			o.jobs = atoi(optarg);
			if (o.jobs < 1 || o.jobs > 64) {
				fprintf(stderr, "zbench run: -j wants 1 to 64, got '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_INTERFERENCE:
			o.allow_interference = 1;
			break;
		case OPT_SHARD:
			if (sscanf(optarg, "%d/%d%c", &o.shard_index, &o.shard_count,
				   (char[1]){ 0 }) != 2 ||
			    o.shard_count < 1 || o.shard_index < 1 ||
			    o.shard_index > o.shard_count) {
				fprintf(stderr,
					"zbench run: --shard wants I/N with 1 <= I <= N, "
					"got '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'q':
			log_set_quiet(1);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.resume_dir ? optind != argc : optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (!o.resume_dir)
		o.matrix_path = argv[optind];
	o.dir_out = &dir;
	rc = run_matrix(&o, &err);
	if (rc < 0) {
		die_message(err.msg);
		return 2;
	}
	if (report && dir && rc != 130)
		end_of_run_report(dir);
	free(dir);
	return rc;
}
