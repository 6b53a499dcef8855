printf 'x 1\ny 2\nz 3\n' > data.txt
sum=0
while read -r name n; do
  sum=$((sum + n))
  echo "$name"
done < data.txt
echo "sum=$sum"
