declare -A n
((n[x]++))
((n[x]++))
((n[y]+=5))
echo "${n[x]} ${n[y]}"
