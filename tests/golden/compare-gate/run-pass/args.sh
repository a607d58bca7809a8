# the same interleaved run, gated on a fall of read IOPS (they rose) and of write IOPS: 3 pairs,
# undecided (exit 4)
"$ZBENCH" compare --fail-if 'read_iops < -5%' --fail-if 'write_iops < -5%' --junit out/junit.xml --summary out/summary.md rundir -o out
