declare -A size=([README.md]=10 [src/main.go]=20 [a-b.c]=30 [with space]=40)
for k in README.md src/main.go a-b.c "with space"; do
  echo "$k=${size[$k]}"
done
echo "${size[README.md]} ${size[with space]}"
size[docs/x.md]=50
echo "${#size[@]} ${size[docs/x.md]}"
declare -A more
more+=([v1.2]=old [v1.3]=new)
printf '%s\n' "${!more[@]}" | sort
