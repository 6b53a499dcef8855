for i in 1 2 3; do echo "line $i"; done > out.txt
wc -l < out.txt
while read -r l; do echo "<$l>"; done < out.txt | tail -n 1
