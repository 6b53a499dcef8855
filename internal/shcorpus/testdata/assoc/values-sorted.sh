declare -A m=([k1]=zeta [k2]=alpha [k3]=mid)
printf '%s\n' "${m[@]}" | sort
