a=(pear apple fig)
mapfile -t sorted < <(printf '%s\n' "${a[@]}" | sort)
echo "${sorted[*]}"
