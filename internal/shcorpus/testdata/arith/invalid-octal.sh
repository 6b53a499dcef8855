y=08
echo $((y + 1))
echo "status $?"
