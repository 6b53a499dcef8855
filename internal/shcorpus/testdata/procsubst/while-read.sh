while read -r x; do
  echo "got $x"
done < <(printf 'a\nb\nc\n')
