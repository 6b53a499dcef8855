set -e
ls /nonexistent
echo REACHED
