declare 1abc=2
echo "status $?"
