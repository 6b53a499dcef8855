cleanup() { echo "cleaning up, status $1"; }
trap 'cleanup $?' EXIT
f() { exit 9; }
f
echo REACHED
