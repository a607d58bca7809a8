#!/bin/sh
# The files generated from the schema tables (builder/matrix/schema.c) and the command table
# (builder/cli/commands.c) by build/zbench-gen: the committed copies must equal fresh output, so
# they cannot drift. Then each is checked for what it claims: the JSON Schema accepts every
# matrix under matrices/ and tests/golden/matrix/ and refuses an unknown key, a matrix with a
# "$schema" key loads with the same cells, the man pages render, the completion scripts parse
# and offer the commands. `make generated` rewrites the committed copies.
# Prints "generated: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
GEN=${GEN:-build/zbench-gen}
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# KIND FILE: what build/zbench-gen KIND prints is committed as FILE
while read -r kind file; do
	check "$file is '$GEN $kind' (run 'make generated' after changing the tables)" \
		sh -c '"$1" "$2" >"$3" && diff -u "$4" "$3" >"$3.diff" || { head -20 "$3.diff"; false; }' \
		sh "$GEN" "$kind" "$tmp/$kind" "$file"
done <<'LIST'
schema docs/zbench-matrix.schema.json
man1 docs/zbench.1
man5 docs/zbench-matrix.5
bash contrib/completion/zbench.bash
zsh contrib/completion/_zbench
LIST

check "docs/seeds.md is 'zbench matrix ledger --markdown' of the ledgers (run 'make generated')" sh -c \
	'"$1" matrix ledger --markdown matrices/*.ledger.json >"$2" && diff -u docs/seeds.md "$2" | head -20 && cmp -s docs/seeds.md "$2"' \
	sh "$ZBENCH" "$tmp/seeds.md"

# spliced MARK FILE COMMAND...: FILE's lines between <!-- BEGIN MARK --> and <!-- END MARK -->
# are COMMAND's output (make generated's splice)
spliced() {
	mark=$1 file=$2
	shift 2
	"$@" >"$tmp/spliced.want" &&
		awk -v m="$mark" '$0 == "<!-- END " m " -->" {p=0} p {print} $0 == "<!-- BEGIN " m " -->" {p=1}' \
			"$file" >"$tmp/spliced.have" &&
		{ diff -u "$tmp/spliced.have" "$tmp/spliced.want" | head -20; cmp -s "$tmp/spliced.have" "$tmp/spliced.want"; }
}
check "docs/matrix.md's key reference is 'zbench matrix keys'" \
	spliced "zbench matrix keys" docs/matrix.md "$ZBENCH" matrix keys
check "docs/disks.md's model table is '$GEN disks' (run 'make generated')" \
	spliced "zbench-gen disks" docs/disks.md "$GEN" disks
check "docs/reports.md's metric table is '$GEN metrics' (run 'make generated')" \
	spliced "zbench-gen metrics" docs/reports.md "$GEN" metrics
printf '\n<!-- BEGIN zbench-gen disks -->\n| `gone` | a row no table has |\n<!-- END zbench-gen disks -->\n' >"$tmp/stale.md"
stale_fails() { ! spliced "zbench-gen disks" "$tmp/stale.md" "$GEN" disks >/dev/null; }
check "a doc whose generated span differs fails" stale_fails

# The JSON Schema, read by a validator other than ours (python3-jsonschema).
check "the JSON Schema accepts every matrix of matrices/ and tests/golden/matrix/" \
	python3 - docs/zbench-matrix.schema.json matrices/*.json tests/golden/matrix/*/matrix.json <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
bad = 0
for f in sys.argv[2:]:
    if f.endswith(".ledger.json"):
        continue
    for e in v.iter_errors(json.load(open(f))):
        print("    %s: %s: %s" % (f, "/".join(map(str, e.path)), e.message[:200]))
        bad += 1
sys.exit(1 if bad else 0)
PY
jq '.base.pool.bogus = 1' matrices/quick.json >"$tmp/unknown.json"
check "the JSON Schema refuses an unknown key (as zbench does)" sh -c \
	'! "$1" matrix check "$2" >/dev/null 2>&1 && ! python3 -c "
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" "$3" "$2" 2>/dev/null' \
	sh "$ZBENCH" "$tmp/unknown.json" docs/zbench-matrix.schema.json

jq '{"$schema": "../docs/zbench-matrix.schema.json"} + .' matrices/quick.json >"$tmp/with-schema.json"
check "a matrix with \"\$schema\" loads, with the same cells" sh -c \
	'"$1" matrix check "$2" | tail -n +2 >"$4.a" && "$1" matrix check "$3" | tail -n +2 >"$4.b" && cmp -s "$4.a" "$4.b"' \
	sh "$ZBENCH" matrices/quick.json "$tmp/with-schema.json" "$tmp/cells"
check "\"\$schema\" must be a string" sh -c \
	'jq --arg k "\$schema" ".[\$k] = 1" "$2" >"$3" && ! "$1" matrix check "$3" >/dev/null 2>&1' \
	sh "$ZBENCH" matrices/quick.json "$tmp/schema-int.json"

for page in docs/zbench.1 docs/zbench-matrix.5; do
	check "$page renders without groff warnings" sh -c \
		'out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$1" 2>&1) && [ -z "$out" ] || { echo "$out" | head -5; false; }' sh "$page"
done
check "zbench(1) names every command" sh -c \
	'for c in $("$1" --help | awk "/^commands:/ {f=1; next} f && !NF {exit} f {print \$1}"); do grep -q "^\\.SS $c\$" docs/zbench.1 || { echo "    missing $c"; exit 1; }; done' sh "$ZBENCH"
check "zbench-matrix(5) names every key of the base configuration" sh -c \
	'for k in vm.memory disks pool.vdevs workload timeouts.boot; do grep -qF "$k" docs/zbench-matrix.5 || exit 1; done'

check "bash completion parses" bash -n contrib/completion/zbench.bash
check "bash completion: commands, options, subcommands, matrix files" bash -c '
	. contrib/completion/zbench.bash
	c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _zbench; echo "${COMPREPLY[*]}"; }
	[ "$(c zbench rep)" = "replay report" ] || { echo "    commands: $(c zbench rep)"; exit 1; }
	case " $(c zbench run --sh) " in *" --shard "*) ;; *) echo "    run options: $(c zbench run --sh)"; exit 1;; esac
	case " $(c zbench image "") " in *" build "*" list "*) ;; *) echo "    image: $(c zbench image "")"; exit 1;; esac
	case " $(c zbench image list --) " in *" --json "*) ;; *) echo "    image list: $(c zbench image list --)"; exit 1;; esac
	case " $(c zbench image list --) " in *" --rebuild "*) echo "    image list offers build'"'"'s --rebuild"; exit 1;; esac
	case " $(c zbench history show --) " in *" --metric "*) ;; *) echo "    history show: $(c zbench history show --)"; exit 1;; esac
	case " $(c zbench run matrices/qu) " in *" matrices/quick.json "*) ;; *) echo "    files: $(c zbench run matrices/qu)"; exit 1;; esac'
if command -v zsh >/dev/null; then
	check "zsh completion parses" zsh -n contrib/completion/_zbench
fi
check "zsh completion lists every command" sh -c \
	'for c in $("$1" --help | awk "/^commands:/ {f=1; next} f && !NF {exit} f {print \$1}"); do grep -q "^[[:space:]]*.$c:" contrib/completion/_zbench || { echo "    missing $c"; exit 1; }; done' sh "$ZBENCH"

echo "generated: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
