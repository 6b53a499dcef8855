echo first second
echo "$_"
: last-arg
echo "$_"
