set -e
x=$(false)
echo REACHED
