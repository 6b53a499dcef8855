run() { echo "+ $*"; "$@"; }
run printf '%s|' a "b c"
echo
run false
echo "status $?"
