set -o pipefail
if ! printf 'x\n' | grep -q y; then
  echo "pattern not found"
fi
printf 'a\nb\n' | grep b | tr b B
echo "status ${PIPESTATUS[*]}"
