declare -A m=([a]=x)
m[a]+=y
m+=([b]=z)
echo "${m[a]} ${m[b]}"
