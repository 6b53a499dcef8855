( sleep 0.5; exit 3 ) &
( exit 4 ) &
wait -n
echo "first finished with $?"
wait -n
echo "second finished with $?"
