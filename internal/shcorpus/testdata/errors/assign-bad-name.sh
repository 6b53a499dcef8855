x-y=3
echo "status $?"
