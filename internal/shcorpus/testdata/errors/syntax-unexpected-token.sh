echo before
eval 'echo )'
echo "status $?"
