s="Hello World"
[[ $s == *"lo W"* ]] && echo contains
[[ ${s,,} == hello* ]] && echo lower-ok
IFS= read -r -d '' whole <<'EOF2' || true
line1
line2
EOF2
printf '[%s]\n' "$whole"
printf 'a\0b\0' | { while IFS= read -r -d '' x; do echo "item $x"; done; }
mapfile -d , -t parts <<< "x,y,z"; printf '<%s>' "${parts[@]}"; echo
set -o noclobber; echo a > nc.txt; echo b > nc.txt 2>/dev/null || echo "clobber blocked"; echo c >| nc.txt; cat nc.txt; set +o noclobber
f() { local -a la=(1 2 3); echo "${#la[@]}"; }; f
echo "${s:6}" "${s::5}" "${s: -5:3}"
printf '%s\n' "${s// /_}"
num="042"; echo $((10#$num))
echo "$((0x1F))"
v=$(printf '%.3s' abcdef); echo "$v"
echo "${#s}"
x=abc; echo "${x^}" "${x^^[ab]}"
declare -u up; up=mixed; echo "$up"
arr=(); echo "len=${#arr[@]}"; [[ ${#arr[@]} -eq 0 ]] && echo empty-arr
unset nothing; echo "${nothing[@]:-dflt}"
echo "a" "b" > two.txt; read -r p q < two.txt; echo "$q$p"
