# side C (its disk 10% slower) against A, 10 pairs: the planted -10% is different (failed, exit 3)
"$ZBENCH" compare --sides AC --fail-if 'write_iops < -5%' --json --junit out/junit.xml --summary out/summary.md ../sides-planted/rundir -o out
