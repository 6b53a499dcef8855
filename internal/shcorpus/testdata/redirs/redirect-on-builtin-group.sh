{ printf 'a\n'; printf 'b\n'; } > g.txt
while read -r l; do echo "$l"; done < g.txt > h.txt
cat h.txt
