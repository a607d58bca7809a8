# no gate fails: read IOPS rose (the gate is on a fall), write IOPS +2% is not significant, iops (read+write) is below +50%
"$ZBENCH" compare --fail-if 'read_iops < -5%' --fail-if 'write_iops > 1%' --fail-if 'iops > 50%' --json --junit out/junit.xml --summary out/summary.md a b -o out
