echo "$0"
f() { echo "$FUNCNAME $# $1"; }
f arg
true; echo "$?"
false; echo "$?"
echo "$-" | grep -q h && echo "hashall on"
