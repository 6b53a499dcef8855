set -e
bash -c 'exit 42'
echo REACHED
