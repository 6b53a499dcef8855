( sleep 0.1; echo first > first.txt ) &
( echo second > second.txt ) &
wait
cat first.txt second.txt
echo "all done"
