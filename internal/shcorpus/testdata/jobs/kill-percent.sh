sleep 5 &
kill %1
wait %1
echo "status $?"
