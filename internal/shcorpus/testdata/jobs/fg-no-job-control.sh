fg
echo "status $?"
