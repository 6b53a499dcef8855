set -u
declare -A m=([k]=v)
echo "${m[k]}"
echo "${m[nokey]}"
echo REACHED
