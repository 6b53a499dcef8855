s="a:b::c"
IFS=: read -r -a parts <<< "$s"
echo "${#parts[@]}"
printf '[%s]\n' "${parts[@]}"
