#!/bin/sh
# The batch script of `zbench slurm` (builder/cli/cmd_slurm.c; docs/scale-out.md, "Slurm").
# zbench slurm copies it to RUNS/slurm/job.sh and submits it three times with sbatch; every value
# comes as an argument (no quoting into the script), the first one says which job this is:
#
#   RUNS/slurm/job.sh image ZBENCH CACHE RECIPE HASH    build the image once, before the array
#   RUNS/slurm/job.sh task ZBENCH RUNS N MATRIX CACHE RECIPE HASH [RUN OPTION...]
#                                                       array task I: shard I of N
#   RUNS/slurm/job.sh merge ZBENCH RUNS N               after every task: merge, then report
#
# Paths are absolute and must be the same on every node (a shared file system). Exit status: the
# zbench command's, or 2 for a job that refuses to run (said on stderr, in the job's .out file).
set -u

die() {
	echo "zbench slurm: $*" >&2
	exit 2
}

node=$(hostname 2>/dev/null || echo '?')

# The image every task boots, built once: its hash must be the one computed at submission (the
# same recipe, guest binaries and zbench), or the tasks would refuse it anyway.
image() {
	zbench=$1 cache=$2 recipe=$3 hash=$4
	"$zbench" image build "$recipe" --cache-dir "$cache" || exit
	dir=$("$zbench" image path "$recipe" --cache-dir "$cache") || exit
	[ "${dir##*/}" = "$hash" ] ||
		die "on $node the image of '$recipe' is ${dir##*/}, the job was submitted for $hash" \
			"(the recipe or zbench changed since): submit again"
}

# Array task I: the shard's run, or its resumption when Slurm runs the task again (requeued after
# a preemption, a node failure or `scontrol requeue`): the shard's directory then has a manifest,
# and `zbench run --resume` runs only the cells without a record.
task() {
	zbench=$1 runs=$2 n=$3 matrix=$4 cache=$5 recipe=$6 hash=$7
	shift 7
	i=${SLURM_ARRAY_TASK_ID:-}
	[ -n "$i" ] || die "not an array task: submit it with sbatch --array=1-$n"
	# Each task runs one shard of N: an array of another size would run some shards twice or
	# never (the merge would then say which are missing, after the whole array ran).
	if [ "${SLURM_ARRAY_TASK_MIN:-}" != 1 ] || [ "${SLURM_ARRAY_TASK_MAX:-}" != "$n" ] ||
		[ "${SLURM_ARRAY_TASK_COUNT:-}" != "$n" ]; then
		die "this array has ${SLURM_ARRAY_TASK_COUNT:-?} tasks" \
			"(${SLURM_ARRAY_TASK_MIN:-?}-${SLURM_ARRAY_TASK_MAX:-?}), the run has $n shards:" \
			"submit it with --array=1-$n"
	fi
	# The node must have the image the job was submitted for, already built: a task never
	# builds one (N nodes building for minutes, or different images merged).
	dir=$("$zbench" image path "$recipe" --cache-dir "$cache" 2>/dev/null)
	case $? in
	0) [ "${dir##*/}" = "$hash" ] ||
		die "node $node makes image ${dir##*/} of '$recipe', the job was submitted for" \
			"$hash: every node needs the same zbench, guest binaries and recipes" ;;
	1) die "node $node has no image $hash of '$recipe' in '$cache': mount the cache there" \
		"at the same path, or build it on the node (zbench image build '$recipe'" \
		"--cache-dir '$cache')" ;;
	*) "$zbench" image path "$recipe" --cache-dir "$cache" >/dev/null; exit 2 ;;
	esac
	shard="$runs/shard-$i"
	echo "zbench slurm: task $i of $n on $node (job ${SLURM_JOB_ID:-?}," \
		"restart ${SLURM_RESTART_COUNT:-0})" >&2
	if [ -e "$shard/manifest.json" ]; then
		echo "zbench slurm: resuming $shard" >&2
		exec "$zbench" run --resume "$shard" --cache-dir "$cache" "$@"
	fi
	# killed before its run had a manifest: nothing of it to keep
	[ -e "$shard" ] && ! [ -e "$shard/cells.jsonl" ] && rm -rf -- "$shard"
	exec "$zbench" run --shard "$i/$n" -o "$shard" --cache-dir "$cache" "$@" "$matrix"
}

# After every task ended (afterany): the shards that have a run, merged into RUNS/merged (which
# names the shards that are missing or incomplete, exit 1), then the report of the merged run.
merge() {
	zbench=$1 runs=$2 n=$3
	set --
	i=1
	while [ "$i" -le "$n" ]; do
		[ -e "$runs/shard-$i/manifest.json" ] && set -- "$@" "$runs/shard-$i"
		i=$((i + 1))
	done
	[ $# -gt 0 ] || die "no shard of $n has a run (see $runs/slurm/task-*.out)"
	# a merge job run again (requeued, or by hand after a task was) starts from the shards
	rm -rf -- "$runs/merged"
	"$zbench" merge -o "$runs/merged" "$@"
	rc=$?
	[ "$rc" -le 1 ] || exit "$rc"
	"$zbench" report "$runs/merged" || exit
	exit "$rc"
}

what=${1:-}
[ $# -gt 0 ] && shift
case $what in
image) [ $# -eq 4 ] || die "job.sh image: 4 arguments, got $#"; image "$@" ;;
task) [ $# -ge 7 ] || die "job.sh task: 7 arguments or more, got $#"; task "$@" ;;
merge) [ $# -eq 3 ] || die "job.sh merge: 3 arguments, got $#"; merge "$@" ;;
*) die "job.sh: image, task or merge, not '$what'" ;;
esac
