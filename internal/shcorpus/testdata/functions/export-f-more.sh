greet() { echo "hi $1"; }
add() { echo $(( $1 + $2 )); }
export -f greet add
bash -c 'greet you; add 2 3'
env | grep -c '^BASH_FUNC_greet%%=' 
export -nf add
bash -c 'greet again; add 1 1 2>/dev/null || echo "add not exported"'
bash -c 'bash -c "greet nested"'
unset -f greet
bash -c 'greet gone' 2>/dev/null || echo "greet gone: $?"
export -f nosuch; echo "status $?"
