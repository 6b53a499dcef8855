cat nope.txt
echo "status $?"
