set -e
eval 'false'
echo REACHED
