# B's read IOPS are +20% in each of 3 pairs: the t-test's rows say significant, but 3 pairs cannot
# reach p < 0.05 in the permutation test (2/8 at best), so both gates are undecided (exit 4)
"$ZBENCH" compare --fail-if 'read_iops > 10%' --fail-if 'write_iops < -5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
