trap 'echo "exit trap, status $?"' EXIT
echo one
echo two >
echo REACHED
