#!/bin/sh
# Decompression bombs from an imported image or a root (docs/security.md, "Imported images"):
# the kernel's payload (xz, gzip, zstd, LZ4) and a module are decompressed with a limit, and
# files are downloaded from an image only after their size is checked. The bombs are built and
# fed to the real code by tests/unit/test_decompress.c (no libguestfs needed); this runs it.
# Prints "decompress: N passed, N failed" (the unit test's count).
set -u
cd "$(dirname "$0")/../.." || exit 1
bin=${DECOMPRESS_TEST:-build/tests/test_decompress}
[ -x "$bin" ] || make -s "$bin" >/dev/null || { echo "decompress: 0 passed, 1 failed"; exit 1; }
exec nice -n 10 "$bin"
