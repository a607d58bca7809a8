#!/bin/sh
# Integration test: one real guest per failure class (tests/integration/faults.json) must end
# with the right outcome, within its own deadline, with its console tail in the record, and the
# cell after the failures must still run. Prints "faults: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-faults.XXXXXX)
. tests/check.inc
field() { # field CASE JQ-EXPR
	jq -r --arg s "case=$1" "select(.summary == \$s) | $2" "$out/run/cells.jsonl"
}

./zbench run -o "$out/run" tests/integration/faults.json >/dev/null
rc=$?
check "zbench run exits 1 (some cells failed)" [ "$rc" -eq 1 ]
check "seven records" [ "$(wc -l < "$out/run/cells.jsonl")" -eq 7 ]
check "silent agent: boot-fail" [ "$(field silent .outcome)" = boot-fail ]
check "silent agent: caught by the 30 s boot deadline, not the overall one" \
	[ "$(field silent '.wall_seconds < 60')" = true ]
check "kernel panic: panic" [ "$(field panic .outcome)" = panic ]
check "panic: the console tail shows it" [ "$(field panic '.console_tail | test("Kernel panic")')" = true ]
check "stalled workload: timeout" [ "$(field stall .outcome)" = timeout ]
check "stall: the detail says no progress" [ "$(field stall '.detail | test("no progress")')" = true ]
check "stall: blocked-task dump asked for and in the console" \
	[ "$(field stall '.console_tail | test("stack dump|blocked")')" = true ]
check "impossible pool: agent-error" [ "$(field badpool .outcome)" = agent-error ]
check "impossible pool: the detail names the property" \
	[ "$(field badpool '.detail | test("blake3")')" = true ]
check "unknown module parameter: agent-error" [ "$(field badparam .outcome)" = agent-error ]
check "unknown module parameter: the detail names it" \
	[ "$(field badparam '.detail | test("zbench_no_such_param")')" = true ]
check "memory hog: oom" [ "$(field oom .outcome)" = oom ]
check "every failed cell has its console tail" \
	[ "$(jq -r 'select(.outcome != "ok") | (.console_tail | length > 0)' "$out/run/cells.jsonl" | sort -u)" = true ]
check "the cell after the failures ran ok" [ "$(field fine .outcome)" = ok ]
check "no disk image left" [ -z "$(ls "$out"/run/cells/*/*.img 2>/dev/null)" ]

echo "faults: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  run directory kept: $out/run"; fi
[ "$failed" -eq 0 ]
