opts=(build test deploy)
i=1
for o in "${opts[@]}"; do printf '%d) %s\n' $i "$o"; i=$((i+1)); done
