( exit 3 )
echo "subshell $?"
x=$(exit 5)
echo "cmdsubst $?"
