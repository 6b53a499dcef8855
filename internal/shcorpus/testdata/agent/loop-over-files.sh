set -euo pipefail
mkdir -p src
for n in alpha beta gamma; do
  printf 'export const %s = "%s";\n' "$n" "$n" > "src/$n.ts"
done
for f in src/*.ts; do
  name=$(basename "$f" .ts)
  lines=$(wc -l < "$f")
  echo "$name: $lines line(s)"
done
