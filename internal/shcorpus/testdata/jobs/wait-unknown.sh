wait 999999
echo "status $?"
