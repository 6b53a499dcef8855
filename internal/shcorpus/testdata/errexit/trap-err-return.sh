set -E
trap 'echo "ERR at ${FUNCNAME[0]:-top}: $?"; ' ERR
check() { [ "$1" -gt 0 ] || return 7; echo "positive $1"; }
check 3
check 0
echo "status $?"
