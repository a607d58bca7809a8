# side B (the same as A) against A in the same run, 10 pairs: within 1%, the same (passed, exit 0)
"$ZBENCH" compare --sides AB --fail-if 'write_iops < -5%' --json --junit out/junit.xml --summary out/summary.md ../sides-planted/rundir -o out
