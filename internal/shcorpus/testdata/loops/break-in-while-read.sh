seq 10 | while read -r n; do
  [ "$n" -gt 3 ] && break
  echo "$n"
done
echo "done"
