declare -A m=([apple]=1 [banana]=2 ["key with space"]=3)
echo "${!m[@]}"
declare -A f=([README.md]=1 [src/main.py]=2 [tests/test_main.py]=3)
echo "${!f[@]}"
declare -A n; for i in $(seq 1 20); do n[k$i]=$i; done; echo "${!n[@]}"
declare -A o; o[k12]=1; o[k10]=2; o[k11]=3; echo "${!o[@]}"; echo "${o[@]}"
unset 'o[k10]'; o[k10]=4; echo "${!o[@]}"
declare -A p=([k3]=a [k1]=b [k2]=c [k1]=d); echo "${!p[@]} / ${p[@]}"
p+=([k5]=e [k4]=f); echo "${!p[@]}"
for k in "${!p[@]}"; do printf '%s=%s ' "$k" "${p[$k]}"; done; echo
declare -p p
f() { local -A l=([b]=1 [a]=2 [c]=3); echo "${!l[@]}"; }; f
declare -A q; ((q[x]++)); ((q[y]+=2)); echo "${!q[@]} ${q[@]}"
declare -A r; r[one]=1; r[two]=2; r[three]=3; r[four]=4; echo "${!r[*]}"; echo "${r[@]@K}"
