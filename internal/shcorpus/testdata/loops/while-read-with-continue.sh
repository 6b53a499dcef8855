printf '1\n\n2\n#x\n3\n' | while read -r l; do
  [ -z "$l" ] && continue
  [[ $l == \#* ]] && continue
  echo "n=$l"
done
