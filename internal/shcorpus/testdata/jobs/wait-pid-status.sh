( exit 7 ) &
pid=$!
wait $pid
echo "status $?"
