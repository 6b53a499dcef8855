ls missing-a missing-b
echo "status $?"
