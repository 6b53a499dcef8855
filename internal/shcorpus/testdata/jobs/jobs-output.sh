sleep 1 &
jobs
kill %1
wait
