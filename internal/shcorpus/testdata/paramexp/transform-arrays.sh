arr=(a "b c" "it's")
printf '[%s]\n' "${arr[@]@Q}"
printf '[%s]\n' "${arr[*]@Q}"
set -- one "two words"
printf '[%s]\n' "${@@Q}" "${1@Q}" "${@@A}"
empty=
echo "set-empty:${empty@Q} unset:${nosuch@Q} attrs-of-unset:${nosuch@a}."
declare -ri ro=7
echo "${ro@A} ${ro@a}"
declare -a list=(x $'tab\there')
echo "${list[@]@A}"
echo "${list[@]@K}"
printf '<%s>' "${list[@]@k}"; echo
echo "${list@a} ${list[1]@a}"
esc='col1\tcol2\x21\u00e9'
echo "${esc@E}"
ctl=$'line1\nline2'
echo "${ctl@Q}"
w=word; echo "${w@U} ${w@u} ${arr[@]@U}"
declare -l low=MiXeD; declare -u up=MiXeD
echo "$low $up ${low@a} ${up@a}"
declare -p low up
