set -euo pipefail
total=0
while read -r n; do
  total=$((total + n))
done < <(printf '4\n5\n6\n')
echo "total=$total"
