mkdir -p p
printf '1\n2\n' > p/a.py; printf '1\n' > p/b.py; printf '1\n2\n3\n' > p/c.sh
for ext in py sh; do
  n=$(cat p/*.$ext | wc -l)
  echo "$ext: $n"
done
