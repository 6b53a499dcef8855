sleep 10 &
pid=$!
kill "$pid"
wait "$pid"
echo "status $?"
