mkdir -p src && touch src/b.ts src/a.ts src/c.js
n=0
while read -r f; do
  n=$((n+1))
  echo "ts file: $f"
done < <(find src -name '*.ts' | sort)
echo "found $n"
