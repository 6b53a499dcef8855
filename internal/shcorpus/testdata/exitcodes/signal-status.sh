bash -c 'kill -TERM $$'
echo "status $?"
