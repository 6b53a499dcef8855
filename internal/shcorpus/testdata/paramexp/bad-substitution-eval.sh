eval 'echo ${a b}'
echo "status $?"
