#!/bin/sh
# Integration test: `zbench slurm` against a real Slurm (Debian's slurm-wlm and munge, started
# here with a configuration of their own in a scratch folder: one node, this machine; stopped at
# the end). The 4 cells of resume.json run as an array of 2 tasks, one at a time (%1: one VM at a
# time, so the test boots one VM at a time); task 1 is cancelled with scancel in the middle of a cell
# and requeued with scontrol, and must resume its shard; the merge job must find every cell once
# and report. Then what must fail does: an array of another size than the shard count, a node
# without the image, a submission that cannot be right (no job queued).
# Needs: builder/install-deps.sh --slurm (make integration-slow runs it).
# Prints "slurm: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/check.inc
for p in munged mungekey slurmctld slurmd sbatch scontrol scancel squeue; do
	command -v "$p" >/dev/null ||
		{ echo "slurm: '$p' is missing: builder/install-deps.sh --slurm installs it"; exit 1; }
done
S=$(mktemp -d /tmp/zbench-slurm.XXXXXX)
chmod 755 "$S"
matrix=tests/integration/resume.json
export SLURM_CONF="$S/slurm.conf"
t_start=$(date +%s)

# A free TCP port from $1 up.
free_port() {
	p=$1
	while ss -Hltn "sport = :$p" | grep -q .; do p=$((p + 1)); done
	echo "$p"
}

start_slurm() {
	mkdir -p "$S/state" "$S/spool" "$S/log"
	mungekey --create --keyfile="$S/munge.key" || return 1
	munged --force --socket="$S/munge.sock" --key-file="$S/munge.key" \
		--pid-file="$S/munged.pid" --log-file="$S/log/munged.log" --seed-file="$S/munge.seed" ||
		return 1
	node=$(hostname -s)
	p1=$(free_port $((20000 + $$ % 10000 * 2)))
	p2=$(free_port $((p1 + 1)))
	cat >"$S/slurm.conf" <<EOF
# written by tests/integration/slurm.sh: one node (this machine), everything in $S
ClusterName=zbench-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$p1
SlurmdPort=$p2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
KillWait=10
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
	slurmctld -f "$S/slurm.conf" && slurmd -f "$S/slurm.conf" || return 1
	for _ in $(seq 1 60); do
		[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && return 0
		sleep 0.5
	done
	return 1
}

stop_slurm() {
	scancel --quiet --partition=test 2>/dev/null
	for _ in $(seq 1 40); do
		[ -z "$(squeue -h -t R,CG 2>/dev/null)" ] && break
		sleep 0.5
	done
	pids=
	for d in slurmd slurmctld munged; do
		[ -s "$S/$d.pid" ] && pids="$pids $(cat "$S/$d.pid")"
	done
	# shellcheck disable=SC2086 # a list of pids
	[ -n "$pids" ] && kill $pids 2>/dev/null
	# until they have exited (munged writes its seed file on the way out)
	for _ in $(seq 1 40); do
		alive=
		for p in $pids; do
			case $(ps -o stat= -p "$p" 2>/dev/null) in '' | Z*) ;; *) alive=yes ;; esac
		done
		[ -z "$alive" ] && return 0
		sleep 0.5
	done
	echo "slurm: a daemon did not stop:$pids"
}
trap stop_slurm EXIT

# state JOB: the job's state (an array: the states of its tasks, one per line)
state() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
exitcode() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p'; }
# wait_done JOB SECONDS: until the job (every task of an array) has ended
wait_done() {
	for _ in $(seq 1 "$(($2 * 2))"); do
		state "$1" | grep -qE 'PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUE' || return 0
		sleep 0.5
	done
	return 1
}
qemus() { pgrep -f "qemu-system.*$S/" | wc -l; }

start_slurm
check "Slurm started: one idle node ($(($(date +%s) - t_start)) s)" [ "$(sinfo -h -o %T)" = idle ]

# --- 1. the array: 4 cells in 2 tasks, one at a time ---------------------------------------
runs="$S/runs"
./zbench slurm -n 2 --max-at-once 1 -o "$runs" "$matrix" >"$S/submit.out" 2>"$S/submit.err"
rc=$?
sed 's/^/    /' "$S/submit.err"
check "zbench slurm submits (exit 0), printing the run directory" \
	[ "$rc" -eq 0 ] && [ "$(cat "$S/submit.out")" = "$runs" ]
img=$(sed -n 's/^zbench slurm: image job \([0-9]*\)$/\1/p' "$S/submit.err")
arr=$(sed -n 's/^zbench slurm: array job \([0-9]*\)$/\1/p' "$S/submit.err")
mrg=$(sed -n 's/^zbench slurm: merge job \([0-9]*\)$/\1/p' "$S/submit.err")
check "three jobs: image $img, array $arr, merge $mrg" [ -n "$img" -a -n "$arr" -a -n "$mrg" ]
check "the merge job waits for the array (afterany)" \
	sh -c "scontrol show job -o $mrg | grep -q 'Dependency=afterany:${arr}_\*'"

# Task 1 holds 3 of the 4 cells (cell ids mod 2): cancel it once one is recorded and the next
# one's VM runs.
sh1="$runs/shard-1"
mid=no
for _ in $(seq 1 900); do
	n=$(cat "$sh1/cells.jsonl" 2>/dev/null | wc -l)
	if [ "$n" -ge 1 ] && [ "$(pgrep -f "qemu-system.*$sh1/cells" | wc -l)" -ge 1 ]; then
		mid=yes
		break
	fi
	sleep 0.5
done
sleep 2
before=$(cat "$sh1/cells.jsonl" 2>/dev/null | wc -l)
scancel "${arr}_1"
check "task 1 cancelled in the middle of a cell ($before record(s) before)" \
	[ "$mid" = yes -a "$before" -ge 1 -a "$before" -le 2 ]
for _ in $(seq 1 120); do
	state "${arr}_1" | grep -qE 'RUNNING|COMPLETING' || break
	sleep 0.5
done
check "task 1 ended CANCELLED" [ "$(state "${arr}_1")" = CANCELLED ]
check "... with still $before record(s): the cell it was running left none" \
	[ "$(wc -l <"$sh1/cells.jsonl")" -eq "$before" ]
scontrol requeue "${arr}_1"
queued() { state "$1" | grep -qE 'PENDING|RUNNING'; }
check "scontrol requeue puts it back in the queue" queued "${arr}_1"

wait_done "$arr" 1200
wait_done "$mrg" 300
check "every task COMPLETED" [ "$(state "$arr" | sort -u)" = COMPLETED ]
check "the merge job COMPLETED, exit 0" [ "$(state "$mrg")" = COMPLETED -a "$(exitcode "$mrg")" = 0:0 ]
log1=$(ls "$runs"/slurm/task-"${arr}"_1.out)
check "task 1 ran twice, the second time resuming" \
	grep -q "task 1 of 2 on .*restart 1)" "$log1" && grep -q resum "$log1"
check "shard 1: every cell of its own once, resumed once" \
	[ "$(jq -r .cell "$sh1/cells.jsonl" | sort | uniq -d)" = "" ] &&
	[ "$(jq -r '.resumed | length' "$sh1/manifest.json")" = 1 ]
m="$runs/merged"
cells_want=$(./zbench matrix expand "$matrix" | jq -r .id | sort | tr '\n' ' ')
cells_got=$(jq -r .cell "$m/cells.jsonl" | sort | tr '\n' ' ')
check "merged: the matrix's 4 cells, each once" [ "$cells_got" = "$cells_want" ]
check "merged: 4 records, all ok, complete" \
	[ "$(jq -r .outcome "$m/cells.jsonl" | grep -c '^ok$')" -eq 4 ] &&
	[ "$(wc -l <"$m/cells.jsonl")" -eq 4 ] && [ "$(jq -r .status "$m/manifest.json")" = complete ]
check "merged from both shards" [ "$(jq '.merged_from | length' "$m/manifest.json")" -eq 2 ]
check "the merge job wrote the report" [ -s "$m/report.md" -a -s "$m/report.html" ]
./zbench report "$m" >/dev/null 2>&1
check "zbench report accepts the merged run" [ $? -eq 0 ]
check "no QEMU process left" [ "$(qemus)" -eq 0 ]
t_array=$(($(date +%s) - t_start))
# where the time went: each job's run time as Slurm counts it, the accelerator the cells had
for j in "$img" "${arr}_1" "${arr}_2" "$mrg"; do
	scontrol show job -o "$j" | sed -n 's/^JobId=\([0-9]*\) .*JobName=\([^ ]*\) .*RunTime=\([^ ]*\) .*/    job \1 \2 ran \3/p'
done
echo "    accel: $(jq -r .accel "$m/manifest.json"), cells: $(jq -r '"\(.boot) \(.wall_seconds | floor) s"' "$m/cells.jsonl" | paste -sd, -)"

# --- 2. what must fail -----------------------------------------------------------------------
# The task script of run 1, submitted by hand as an array of 3 for its 2 shards.
bad="$S/bad-count"
args=$(sed -n '2p' "$runs/slurm/sbatch.txt" | sed 's/.*job\.sh task //')
# shellcheck disable=SC2086 # the test's paths have no spaces (mktemp)
j=$(sbatch --parsable --array=1-3%1 --output="$S/bad-count-%a.out" "$runs/slurm/job.sh" task \
	$(echo "$args" | sed "s|$runs|$bad|"))
wait_done "$j" 120
check "an array of 3 (%1) for 2 shards: every task refuses (FAILED)" [ "$(state "$j" | sort -u)" = FAILED ]
check "... saying the sizes and the --array to use" \
	grep -q "this array has 3 tasks (1-3), the run has 2 shards: submit it with --array=1-2" \
	"$S/bad-count-1.out"
check "... and runs nothing" [ ! -e "$bad" ]

# A node without the image: its cache is empty (no image job, as with a cache per node).
mkdir "$S/empty-cache"
./zbench slurm -n 2 --max-at-once 1 --no-image-job --cache-dir "$S/empty-cache" \
	-o "$S/noimg" "$matrix" >/dev/null 2>"$S/noimg.err"
arr2=$(sed -n 's/^zbench slurm: array job \([0-9]*\)$/\1/p' "$S/noimg.err")
mrg2=$(sed -n 's/^zbench slurm: merge job \([0-9]*\)$/\1/p' "$S/noimg.err")
wait_done "$arr2" 120
wait_done "$mrg2" 120
check "a node without the image: both tasks FAILED" [ "$(state "$arr2" | sort -u)" = FAILED ]
check "... saying which node, image and cache" \
	grep -q "node $(hostname) has no image [0-9a-f]* of '.*' in '$S/empty-cache'" \
	"$S/noimg/slurm/task-${arr2}_1.out"
check "... no shard ran, and the merge job says so (FAILED)" \
	[ "$(state "$mrg2")" = FAILED ] && grep -q "no shard of 2 has a run" "$S"/noimg/slurm/merge-*.out
check "... and the image was not built there" [ -z "$(ls "$S/empty-cache")" ]

# Refused before anything is queued.
n_jobs=$(scontrol show job -o | grep -c JobId)
./zbench slurm -n 5 -o "$S/five" "$matrix" 2>"$S/five.err"
check "5 shards of 4 cells: refused (exit 2)" [ $? -eq 2 ] && grep -q "5 shards of 4 cells" "$S/five.err"
./zbench slurm -n 2 -o "$S/share" "$matrix" 2>"$S/share.err"
check "tasks that may share a node with unthrottled disks: refused" \
	[ $? -eq 2 ] && grep -q "may share a node.*not throttled" "$S/share.err"
./zbench slurm -n 2 --max-at-once 1 -o "$runs" "$matrix" 2>"$S/again.err"
check "an -o that exists: refused" [ $? -eq 2 ] && grep -q "exists" "$S/again.err"
check "... none of them queued a job" [ "$(scontrol show job -o | grep -c JobId)" -eq "$n_jobs" ]

echo "slurm: the array (4 cells, one task cancelled and requeued) in ${t_array} s," \
	"$(($(date +%s) - t_start)) s in all (load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "slurm: $passed passed, $failed failed"
stop_slurm
trap - EXIT
if [ "$failed" -eq 0 ]; then rm -rf "$S"; else echo "  kept: $S"; fi
[ "$failed" -eq 0 ]
