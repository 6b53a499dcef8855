f() { echo hi; }
declare -F f
declare -F | grep -c ' f$'
type -t f
unset -f f
type -t f || echo "f is gone"
