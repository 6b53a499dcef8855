set -euo pipefail
data=$(printf '3\n1\n2\n' | sort -n | head -n 2)
echo "$data"
grep -c x /dev/null | cat
echo REACHED
