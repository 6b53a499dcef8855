x=$(false)
echo "status $?"
x=$(exit 9)
echo "status $?"
