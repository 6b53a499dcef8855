printf '%q\n' "$IFS"
