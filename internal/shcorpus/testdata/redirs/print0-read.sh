mkdir d && touch "d/with space" d/plain
while IFS= read -r -d '' f; do echo "[$f]"; done < <(find d -type f -print0 | sort -z)
