# one repeat per cell: no paired test, so the gate cannot be judged and fails (exit 3)
"$ZBENCH" compare --fail-if 'write_iops < -5%' --junit out/junit.xml --summary out/summary.md a b -o out
