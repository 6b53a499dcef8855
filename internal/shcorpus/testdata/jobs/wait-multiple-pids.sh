(exit 1) & p1=$!
(exit 2) & p2=$!
wait $p1; s1=$?
wait $p2; s2=$?
echo "$s1 $s2"
