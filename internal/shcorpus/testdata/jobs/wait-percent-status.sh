(exit 6) &
wait %1
echo "status $?"
