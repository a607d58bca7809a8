# one repeat per cell: no pair, so the gate is judged nowhere: undecided (exit 4)
"$ZBENCH" compare --fail-if 'write_iops < -5%' --junit out/junit.xml --summary out/summary.md a b -o out
