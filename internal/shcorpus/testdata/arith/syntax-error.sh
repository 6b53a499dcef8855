echo $((1 +* 2))
echo "status $?"
