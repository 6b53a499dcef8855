set -euo pipefail
count=$(printf 'b\na\nb\n' | sort | uniq | wc -l)
echo "unique: $count"
missing=$(grep -c zzz <<< "abc" || true)
echo "missing=$missing"
