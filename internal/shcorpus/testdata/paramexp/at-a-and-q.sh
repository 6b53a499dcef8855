x=value
arr=(a "b c")
echo "${x@A}"
echo "${arr[@]@Q}"
declare -i n=5
echo "${n@a}"
