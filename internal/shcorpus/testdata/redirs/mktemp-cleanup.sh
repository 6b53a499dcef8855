tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf 'scratch\n' > "$tmp"
cat "$tmp"
[ -f "$tmp" ] && echo "temp exists"
