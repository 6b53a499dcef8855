printf 'a b\nc\n' > f
while IFS= read -r line; do echo "line: $line"; done < f
for w in $(< f); do echo "word: $w"; done
