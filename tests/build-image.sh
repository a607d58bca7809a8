#!/bin/sh
# Builds (or finds cached) the image recipes given, for `make test`'s image lane: it runs beside
# the tests that boot no VM, so zbench's lines are prefixed with "image:" (each step's line when
# the step ends: a fresh machine's root build is about 8 minutes of them). An argument ending in
# .sh is a script that makes (or finds cached) a test fixture, run for that alone (its stdout is
# dropped; tests/integration/import-fixtures.sh).
#   tests/build-image.sh RECIPE|SCRIPT...
set -u
cd "$(dirname "$0")/.."
rcfile=$(mktemp /tmp/zbench-build-image.XXXXXX)
trap 'rm -f "$rcfile"' EXIT
for r in "$@"; do
	t0=$(date +%s)
	case $r in
	*.sh) { "$r" 2>&1 >/dev/null; echo $? >"$rcfile"; } | sed -u 's/^/image: /' ;;
	*) { ./zbench image build "$r" 2>&1; echo $? >"$rcfile"; } | sed -u 's/^/image: /' ;;
	esac
	rc=$(cat "$rcfile")
	if [ "$rc" != 0 ]; then
		echo "image: building $r failed (exit status $rc)" >&2
		exit 1
	fi
	echo "image: $r ready in $(($(date +%s) - t0)) s"
done
