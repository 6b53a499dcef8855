return 2
echo "status $?"
