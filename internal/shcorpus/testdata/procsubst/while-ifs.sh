while IFS=, read -r name age; do
  echo "$name is $age"
done < <(printf 'ann,30\nbob,25\n')
