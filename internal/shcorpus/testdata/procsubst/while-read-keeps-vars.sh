count=0
while read -r line; do
  count=$((count+1))
done < <(seq 5)
echo "count=$count"
