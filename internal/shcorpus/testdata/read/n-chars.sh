read -r -n 3 part <<< "abcdef"
echo "$part"
read -r -N 4 exact <<< "ab
cdef"
printf '[%s]\n' "$exact"
