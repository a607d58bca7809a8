# 3 pairs: no gate can be decided by the permutation test (exit 4): the tiers need 6 pairs
"$ZBENCH" compare --fail-if 'read_iops < -5%' --fail-if 'write_iops > 1%' --fail-if 'iops > 50%' --json --junit out/junit.xml --summary out/summary.md a b -o out
