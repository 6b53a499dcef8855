set -u
echo $((undefined_in_arith + 1))
echo REACHED
