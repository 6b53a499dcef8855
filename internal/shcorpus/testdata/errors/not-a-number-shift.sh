shift abc
echo "status $?"
