printf '%d\n' abc
echo "status $?"
printf '%d\n' 12abc
echo "status $?"
