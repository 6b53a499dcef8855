set -e
f() { return 5; }
f
echo REACHED
