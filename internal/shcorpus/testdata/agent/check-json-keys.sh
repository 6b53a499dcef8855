printf '{"a": 1,\n "b": 2}\n' > x.json
for k in a b c; do
  if grep -q "\"$k\":" x.json; then echo "$k present"; else echo "$k absent"; fi
done
