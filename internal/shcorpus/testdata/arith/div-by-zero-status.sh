( echo $((5 % 0)) )
echo "status $?"
