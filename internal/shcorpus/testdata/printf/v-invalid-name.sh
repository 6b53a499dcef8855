printf -v 1bad '%s' x
echo "status $?"
