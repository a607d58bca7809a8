# one interleaved run (two images, the form of `zbench run -i A -i B` and of each bisect step):
# B's read IOPS are +20% in every pair of cell ashift=9, but with 3 pairs the gate is undecided (exit 4)
"$ZBENCH" compare --fail-if 'read_iops > 10%' --junit out/junit.xml --summary out/summary.md rundir -o out
