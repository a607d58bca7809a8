# on a modelled HDD B seeks as A does while its IOPS spread +-30%: the seek gate passes (exit 0), whatever the timing tier cannot yet say
"$ZBENCH" compare --fail-if 'model_seeks_per_io > 5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
