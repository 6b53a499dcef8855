exec 2>/dev/null
sleep 5 &
kill -s KILL %1
wait %1
echo "status $?"
