items=(one "two words" three)
out="["
for i in "${!items[@]}"; do
  [ "$i" -gt 0 ] && out+=", "
  out+="\"${items[$i]}\""
done
out+="]"
echo "$out"
