for p in "1 -lt 2" "2 -le 2" "3 -ge 4" "5 -ne 5" "-1 -lt 0"; do
  if [ $p ]; then echo "$p: true"; else echo "$p: false"; fi
done
