"$ZBENCH" compare --fail-if 'nosuch < -5%' a b -o out
"$ZBENCH" compare --fail-if 'read_iops < -5' a b -o out
"$ZBENCH" compare --fail-if 'read_iops = 5%' a b -o out
