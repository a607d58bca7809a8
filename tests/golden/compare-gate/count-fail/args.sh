# B flushes 20% more for the same bytes: the count gate fails with no statistics (exit 3); the bytes gate passes
"$ZBENCH" compare --fail-if 'disk_flushes > 5%' --fail-if 'disk_write_bytes > 5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
