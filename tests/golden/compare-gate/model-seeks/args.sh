# on a modelled HDD B seeks 30% more per I/O (its allocation spreads), its timings the same within noise: the seek gate fails with no statistics (exit 3); the flush gate passes
"$ZBENCH" compare --fail-if 'model_seeks_per_io > 5%' --fail-if 'model_flushes_per_io > 5%' --json --junit out/junit.xml --summary out/summary.md a b -o out
