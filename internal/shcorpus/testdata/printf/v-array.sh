declare -a a
printf -v 'a[1]' '%s' elem
echo "${a[1]}"
declare -A m
printf -v 'm[key]' '%x' 255
echo "${m[key]}"
