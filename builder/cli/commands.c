/* The table of `zbench` subcommands: main() dispatches through it, the documentation generator
 * (builder/cli/gen_docs.c) writes the man page and shell completion from it. */
#include "commands.h"

const struct zb_command zb_commands[] = {
	{ "run", cmd_run, "run a matrix: one fresh VM per cell, results in a run directory" },
	{ "replay", cmd_replay, "run again what a run's manifest.json recorded, into a new run" },
	{ "slurm", cmd_slurm, "run a matrix as a Slurm array job: a shard per task, then merge" },
	{ "merge", cmd_merge, "join the shards of a run (run --shard I/N) into one run directory" },
	{ "image", cmd_image, "build, locate or list guest appliance images (cached)" },
	{ "matrix", cmd_matrix, "check a matrix file and list the cells it expands to" },
	{ "doctor", cmd_doctor, "say what this host has and lacks for zbench" },
	{ "report", cmd_report, "render a run directory: Markdown, HTML with plots, JUnit" },
	{ "compare", cmd_compare, "compare two runs cell by cell: verdicts in tiers, gates" },
	{ "export", cmd_export,
	  "a run's results for other tools: fio JSON (fio-plot), CSV, JSON, Bencher, "
	  "github-action-benchmark" },
	{ "history", cmd_history,
	  "a results history in SQLite: add runs, show a metric over time" },
	{ "bisect", cmd_bisect,
	  "find the OpenZFS commit that regressed a metric: builds, A/B, gate" },
};
const size_t zb_n_commands = sizeof(zb_commands) / sizeof(zb_commands[0]);
