readonly k=1
unset k
echo "status $?"
