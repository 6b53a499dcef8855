sleep 1 &
sleep 1 &
jobs | wc -l
kill %1 %2
wait
echo done
