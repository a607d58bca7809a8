# 10 pairs spread +-30%: the test can tell neither a fall beyond 5% nor its absence (undecided, exit 4)
"$ZBENCH" compare --fail-if 'read_iops < -5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
