#!/bin/sh
# Builds (or finds cached) the image recipes given, for `make test`'s image lane: it runs beside
# the tests that boot no VM, so zbench's lines are prefixed with "image:" (each step's line when
# the step ends: a fresh machine's root build is about 8 minutes of them).
#   tests/build-image.sh RECIPE...
set -u
cd "$(dirname "$0")/.."
. tests/lane.inc
for r in "$@"; do
	t0=$(date +%s)
	lane_run image ./zbench image build "$r"
	if [ "$lane_rc" != 0 ]; then
		echo "image: building $r failed (exit status $lane_rc)" >&2
		exit 1
	fi
	echo "image: $r ready in $(($(date +%s) - t0)) s"
done
