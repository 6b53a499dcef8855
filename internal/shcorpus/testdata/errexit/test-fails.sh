set -e
[ -f missing.txt ]
echo REACHED
