while read -r l; do echo "line: $l"; done < <(echo out; echo err >&2)
