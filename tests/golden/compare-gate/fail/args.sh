# B's read IOPS are +20% in every pair: the first gate fails; the second passes (write IOPS +2%, not significant)
"$ZBENCH" compare --fail-if 'read_iops > 10%' --fail-if 'write_iops < -5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
