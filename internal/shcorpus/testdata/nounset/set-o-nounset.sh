set -o nounset
x=1
echo "$x"
unset x
echo "${x}"
echo REACHED
