#!/bin/sh
# The guest binaries go into the image and so into its cache key: the same source must give the
# same bytes whatever directory it is built in, or a fresh clone (CI) rebuilds every image.
# Builds guest/zbench-agent and guest/zbench-engine from this checkout's tracked files in two
# directories of different names and lengths, and compares them with the ones here.
# Prints "reproducible: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/zbench-repro.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
for d in a "another-longer-directory-name"; do
	mkdir -p "$tmp/$d"
	git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$tmp/$d"
	make -C "$tmp/$d" -s -j2 guest/zbench-agent guest/zbench-engine >"$tmp/$d.log" 2>&1 ||
		{ echo "FAIL build in $tmp/$d:"; tail -5 "$tmp/$d.log"; failed=$((failed + 1)); }
done
for b in zbench-agent zbench-engine; do
	x=$(sha256sum <"$tmp/a/guest/$b" | cut -c1-64)
	y=$(sha256sum <"$tmp/another-longer-directory-name/guest/$b" | cut -c1-64)
	if [ -n "$x" ] && [ "$x" = "$y" ]; then
		passed=$((passed + 1))
		echo "  ok   guest/$b: the same bytes in two directories (${x%"${x#????????????}"})"
	else
		failed=$((failed + 1))
		echo "  FAIL guest/$b differs between two build directories ($x vs $y)"
	fi
done
echo "reproducible: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
