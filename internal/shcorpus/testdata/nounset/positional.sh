set -u
f() { echo "$1"; }
f one
f
echo REACHED
