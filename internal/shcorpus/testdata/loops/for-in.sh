for x in a "b c" d; do echo "[$x]"; done
for x; do echo "never"; done
set -- p q
for x; do echo "pos $x"; done
