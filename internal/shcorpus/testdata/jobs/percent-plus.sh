sleep 1 &
sleep 1 &
kill %+
kill %-
wait
echo "both gone"
