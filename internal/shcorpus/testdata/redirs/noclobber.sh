set -o noclobber
echo first > f
echo second > f
echo "status $?"
echo forced >| f
cat f
