i=0
while (( i < 3 )); do echo "$i"; ((i++)) || true; done
