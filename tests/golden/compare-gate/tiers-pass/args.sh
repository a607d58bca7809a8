# 10 pairs, B within 1% of A and the disk bytes +0.1%: both gates pass (exit 0)
"$ZBENCH" compare --fail-if 'read_iops < -5%' --fail-if 'disk_write_bytes > 5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
