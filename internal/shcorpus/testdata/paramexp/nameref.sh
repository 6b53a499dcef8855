declare -n ref=target
target=initial
echo "$ref"
ref=changed
echo "$target"
setvar() { local -n out=$1; out="set by function"; }
setvar result
echo "$result"
