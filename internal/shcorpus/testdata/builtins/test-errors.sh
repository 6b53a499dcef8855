[ 1 -eq x ]
echo "status $?"
[ a b ]
echo "status $?"
test
echo "status $?"
