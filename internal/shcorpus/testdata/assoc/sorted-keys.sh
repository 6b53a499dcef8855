declare -A m=([c]=3 [a]=1 [b]=2)
for k in "${!m[@]}"; do echo "$k=${m[$k]}"; done | sort
