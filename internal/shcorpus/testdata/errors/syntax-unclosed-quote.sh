echo before
echo "oops
echo REACHED
