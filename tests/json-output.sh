#!/bin/sh
# --json on `doctor` and `image list`: one JSON document on stdout in the documented shape
# (docs/results.md, "Machine-readable output"), the same exit status as the text form.
# Prints "json-output: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# js FILE [JQ-ARGS...] EXPR: FILE holds exactly one JSON document and EXPR is true of it (jq -e
# alone passes on an empty file)
js() {
	f=$1
	shift
	[ "$(jq -s length "$f" 2>/dev/null)" = 1 ] && jq -e "$@" "$f" >/dev/null
}

"$ZBENCH" doctor --json >"$tmp/doctor.json" 2>"$tmp/doctor.err"
drc=$?
"$ZBENCH" doctor >/dev/null 2>&1
check "doctor --json: the text form's exit status ($drc)" [ "$drc" -eq $? ]
check "doctor --json: {version, ok, checks: [{name, status, detail}]}" js "$tmp/doctor.json" '
	(keys == ["checks", "ok", "version"]) and (.version | type == "string") and
	(.ok | type == "boolean") and (.checks | length > 5) and
	all(.checks[]; (keys == ["detail", "name", "status"]) and
		(.status | IN("ok", "missing", "note")) and (.name | type == "string"))'
check "doctor --json: ok is false exactly when a check is missing" js "$tmp/doctor.json" \
	'.ok == ([.checks[] | select(.status == "missing")] | length == 0)'
check "doctor --json: nothing but the document on stdout" js "$tmp/doctor.json" .

# An image cache with one appliance, one cloud image and one entry without a manifest.
h1=$(printf 'a%.0s' $(seq 64)) h2=$(printf 'b%.0s' $(seq 64)) h3=$(printf 'c%.0s' $(seq 64))
mkdir -p "$tmp/cache/images/$h1" "$tmp/cache/images/$h2" "$tmp/cache/images/$h3"
cat >"$tmp/cache/images/$h1/manifest.json" <<'J'
{"recipe": {"name": "debian12-zfs"}, "built": "2026-12-01T10:00:00Z", "kernel_version": "6.1.0-41-cloud-amd64",
 "zfs_version": "2.1.11", "files": {"initramfs": {"size": 32852916, "entries": 232, "compression": "none"}}}
J
cat >"$tmp/cache/images/$h2/manifest.json" <<'J'
{"recipe": {"name": "cloud"}, "flavor": "cloud", "built": "2026-12-01T11:00:00Z", "kernel_version": "6.1.0",
 "zfs_version": "2.1.11", "files": {"disk.qcow2": {"size": 4718592}}}
J
check "image list --json: exit 0" sh -c '"$1" image list --json --cache-dir "$2" >"$3"' sh "$ZBENCH" "$tmp/cache" "$tmp/list.json"
check "image list --json: {cache, images: [{hash, name, flavor, built, kernel_version, openzfs, size, complete}]}" js "$tmp/list.json" --arg c "$tmp/cache/images" '
	(keys == ["cache", "images"]) and .cache == $c and (.images | length == 3) and
	all(.images[]; keys == ["built", "complete", "flavor", "hash", "kernel_version", "name", "openzfs", "size"])'
check "image list --json: the values, sorted by hash" js "$tmp/list.json" --arg h1 "$h1" --arg h3 "$h3" '
	.images[0] == {"hash": $h1, "name": "debian12-zfs", "flavor": "appliance", "built": "2026-12-01T10:00:00Z",
		"kernel_version": "6.1.0-41-cloud-amd64", "openzfs": "2.1.11", "size": 32852916, "complete": true} and
	.images[1].flavor == "cloud" and .images[1].size == 4718592 and
	.images[2] == {"hash": $h3, "name": null, "flavor": null, "built": null, "kernel_version": null,
		"openzfs": null, "size": null, "complete": false}'
"$ZBENCH" image list --json --cache-dir "$tmp/none" >"$tmp/none.json"
check "image list --json of a missing cache: exit 0" [ $? -eq 0 ]
check "image list --json of a missing cache: no images" js "$tmp/none.json" '.images == []'
check "image list --json of an unreadable cache: exit 2" sh -c \
	'"$1" image list --json --cache-dir /dev/null >/dev/null 2>&1; [ $? -eq 2 ]' sh "$ZBENCH"

echo "json-output: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
