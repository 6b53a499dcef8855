a=("one two" three "")
printf '[%s]\n' "${a[@]}"
printf '[%s]\n' ${a[@]}
printf '<%s>\n' "${a[*]}"
IFS=,
echo "${a[*]}"
