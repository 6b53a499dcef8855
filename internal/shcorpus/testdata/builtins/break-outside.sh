break
echo "status $?"
