bash -c 'exit 11'
echo "bash -c $?"
bash -c 'false'
echo "bash -c $?"
bash -c 'echo "$0 $1"' zero one
