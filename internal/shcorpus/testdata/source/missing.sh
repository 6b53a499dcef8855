source ./nope.sh
echo "status $?"
