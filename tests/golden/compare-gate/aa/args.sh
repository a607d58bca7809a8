# the same run on both sides, 3 pairs: the gate is undecided (exit 4), never failed
"$ZBENCH" compare --fail-if 'write_iops < -5%' --junit out/junit.xml --summary out/summary.md a b -o out
