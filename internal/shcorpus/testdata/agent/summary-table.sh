declare -A status=([build]=ok [lint]=failed [test]=ok)
for step in build lint test; do
  printf '%-6s %s\n' "$step" "${status[$step]}"
done
failed=0
for s in "${status[@]}"; do [ "$s" = ok ] || failed=$((failed+1)); done
echo "failed steps: $failed"
