#!/bin/sh
# Which recipe gets built is the command line's choice, never a file's (docs/security.md,
# "Recipes"). One resolver for run, replay and --resume: the repository first, then beside the
# matrix, never the current directory; a recipe path from a file (a matrix's image or images,
# a manifest's image.recipe or images[].recipe) is relative without '..'; a recipe that runs
# code when built (zfs_source, a mirror other than the host's) is built only when the command
# line named it (-i) or `zbench image build` made it; components and mirror carry no
# whitespace (they land in the root's apt sources). No VM boots; a build that should not start
# is aimed at a mirror that refuses connections and bounded by `timeout`.
# Prints "recipes: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/check.inc
ZBENCH=${ZBENCH:-$(pwd)/zbench}
repo=$(pwd)
t=$(mktemp -d /tmp/zbench-sec-recipes.XXXXXX)
chmod 755 "$t"
trap 'rm -rf "$t"' EXIT
export ZBENCH_CACHE_DIR="$t/cache"
unbuilt() { [ ! -d "$t/cache/roots" ] || [ -z "$(ls -A "$t/cache/roots")" ]; }

# a recipe that runs code when built: an OpenZFS source and a mirror of its own (unreachable)
jq '.mirror = "http://127.0.0.1:9/debian" | .zfs_source.patches = []' \
	images/debian12-zfs-src.json >"$t/code.json"
# MATRIX IMAGE: quick.json naming IMAGE
mx() { jq --arg i "$2" '.image = $i' matrices/quick.json >"$1"; }
# MANIFEST RECIPE [IMAGES_JSON]: a run manifest of quick.json naming RECIPE
man() {
	jq -n --slurpfile m matrices/quick.json --arg r "$2" --argjson i "${3:-null}" \
		'{zbench: "x", status: "running", matrix: {path: "m.json", sha256: "0", content: $m[0]},
		  image: {recipe: $r, hash: "0"}} + (if $i then {images: $i} else {} end)' >"$1"
}

# --- the matrix's image: relative, no '..' (the schema)
for p in /etc/zbench.json ../images/debian12-zfs.json images/../../x.json 'a
b.json'; do
	mx "$t/m.json" "$p"
	"$ZBENCH" matrix check "$t/m.json" >/dev/null 2>"$t/err"
	check "matrix \"image\" '$(echo "$p" | tr -d '\n')' refused by matrix check" \
		grep -q "relative path without\|expected the path of an image recipe" "$t/err"
done

# --- replay: the manifest's recipe, absolute or with '..', refused before anything is built
mkdir -p "$t/run1"
man "$t/run1/manifest.json" /etc/evil.json
timeout 60 "$ZBENCH" replay -o "$t/out1" "$t/run1/manifest.json" >/dev/null 2>"$t/err"
check "replay: an absolute image.recipe is refused, naming the manifest" \
	grep -q "manifest.json.*relative path without" "$t/err"
man "$t/run1/manifest.json" images/debian12-zfs.json '[{"recipe": "images/debian12-zfs.json", "side": "A"}, {"recipe": "../../x.json", "side": "B"}]'
timeout 60 "$ZBENCH" replay -o "$t/out2" "$t/run1/manifest.json" >/dev/null 2>"$t/err"
check "replay: an images[].recipe with '..' is refused" grep -q "relative path without" "$t/err"
check "...nothing built" unbuilt

# --- replay from inside a run directory that ships its own images/debian12-zfs.json: the
# repository's is the one resolved (run as nobody, so building stops at "needs root", naming it)
mkdir -p "$t/run2/images" && cp "$t/code.json" "$t/run2/images/debian12-zfs.json"
man "$t/run2/manifest.json" images/debian12-zfs.json
mkdir -p "$t/cache" && chown -R nobody "$t/cache" "$t/run2"
(cd "$t/run2" && timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$ZBENCH" replay -o "$t/run2/out" manifest.json >/dev/null 2>"$t/err")
check "replay inside a run directory takes the repository's recipe, not the copy beside it" \
	grep -q "$repo/images/debian12-zfs.json" "$t/err"
check "...and never the run directory's copy" sh -c "! grep -q 'zfs_source\|127.0.0.1' '$t/err'"
chown -R root "$t/cache"

# --- --resume: the same check on the manifest's images
mkdir -p "$t/run3"
man "$t/run3/manifest.json" images/debian12-zfs.json '[{"recipe": "images/debian12-zfs.json", "side": "A"}, {"recipe": "/tmp/x.json", "side": "B"}]'
: >"$t/run3/cells.jsonl"
timeout 60 "$ZBENCH" run --resume "$t/run3" >/dev/null 2>"$t/err"
check "--resume: an absolute images[].recipe is refused" grep -q "relative path without" "$t/err"

# --- consent: a recipe that runs code, named by a matrix beside it, is not built
mkdir -p "$t/study" && cp "$t/code.json" "$t/study/custom.json"
mx "$t/study/m.json" custom.json
timeout 120 "$ZBENCH" run -o "$t/out3" "$t/study/m.json" >/dev/null 2>"$t/err"
check "run: a matrix's recipe with zfs_source and its own mirror is not built (consent)" \
	grep -q "custom.json.*runs code when built" "$t/err"
check "...nothing built" unbuilt
man "$t/run1/manifest.json" custom.json
sed -i "s|\"path\": \"m.json\"|\"path\": \"$t/study/m.json\"|" "$t/run1/manifest.json"
timeout 120 "$ZBENCH" replay -o "$t/out4" "$t/run1/manifest.json" >/dev/null 2>"$t/err"
check "replay: the same recipe named by the manifest is not built either" \
	grep -q "custom.json.*runs code when built" "$t/err"
check "...nothing built" unbuilt
# named on the command line, the same recipe passes the consent check (and fails at its mirror)
timeout 120 "$ZBENCH" run -i "$t/study/custom.json" -o "$t/out5" "$t/study/m.json" >/dev/null 2>"$t/err"
check "run -i of the same recipe is the user's consent (no refusal for code)" \
	sh -c "! grep -q 'runs code when built' '$t/err'"

# --- components and mirror with whitespace: refused by the recipe check
for k in 'components = ["main\ndeb http://evil/ x main"]' 'components = ["main contrib"]' \
	'mirror = "http://h/debian bookworm main\ndeb http://evil/"' 'mirror = "http://h/ x"'; do
	jq ".$k" images/debian12-zfs.json >"$t/ws.json"
	"$ZBENCH" image path "$t/ws.json" >/dev/null 2>"$t/err"
	check "recipe .$(echo "$k" | tr "\n" " " | cut -c1-24)...: refused (whitespace)" grep -q "whitespace" "$t/err"
done

echo "recipes: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
