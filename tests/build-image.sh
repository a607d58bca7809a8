#!/bin/sh
# Builds (or finds cached) the image recipes given, for `make test`'s image lane: it runs beside
# the tests that boot no VM, so zbench's lines are prefixed with "image:" (each step's line when
# the step ends: a fresh machine's root build is about 15 minutes of them).
#   tests/build-image.sh RECIPE...
set -u
cd "$(dirname "$0")/.."
rcfile=$(mktemp /tmp/zbench-build-image.XXXXXX)
trap 'rm -f "$rcfile"' EXIT
for r in "$@"; do
	t0=$(date +%s)
	{ ./zbench image build "$r" 2>&1; echo $? >"$rcfile"; } | sed -u 's/^/image: /'
	rc=$(cat "$rcfile")
	if [ "$rc" != 0 ]; then
		echo "image: building $r failed (exit status $rc)" >&2
		exit 1
	fi
	echo "image: $r ready in $(($(date +%s) - t0)) s"
done
