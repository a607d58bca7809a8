# 10 pairs, B's read IOPS +20%: the first gate is different (failed, exit 3); write IOPS within 1%: the second is the same (passed)
"$ZBENCH" compare --fail-if 'read_iops > 10%' --fail-if 'write_iops < -5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
