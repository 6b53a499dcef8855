./missing-program
echo "status $?"
