bash -c 'echo ok; ('
echo "status $?"
