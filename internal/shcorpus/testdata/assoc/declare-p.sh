declare -A m=([only]=one)
declare -p m
