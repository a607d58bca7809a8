#!/bin/sh
# Builds (or finds cached) the image recipes given, for `make test`'s image lane: runs beside the
# tests that boot no VM, so its progress lines are prefixed with "image:" and its whole log is
# printed only when it fails.
#   tests/build-image.sh RECIPE...
set -u
cd "$(dirname "$0")/.."
log=$(mktemp /tmp/zbench-build-image.XXXXXX)
trap 'rm -f "$log"' EXIT
for r in "$@"; do
	t0=$(date +%s)
	# zbench's progress goes to stderr; a step's line ends when the step does
	if ! ./zbench image build "$r" >"$log" 2>&1; then
		sed 's/^/image: /' "$log"
		echo "image: building $r failed" >&2
		exit 1
	fi
	grep -E '^\[[0-9]+/[0-9]+\]' "$log" | sed 's/^/image: /'
	echo "image: $r ready in $(($(date +%s) - t0)) s ($(tail -n1 "$log"))"
done
