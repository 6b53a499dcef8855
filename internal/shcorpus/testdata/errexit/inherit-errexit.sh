set -e
shopt -s inherit_errexit
x=$(echo start; false; echo REACHED)
echo "never: $x"
