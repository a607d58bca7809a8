# the same run on both sides: nothing changes, the gate passes
"$ZBENCH" compare --fail-if 'write_iops < -5%' --junit out/junit.xml --summary out/summary.md a b -o out
