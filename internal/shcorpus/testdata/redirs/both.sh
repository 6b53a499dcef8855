{ echo out; echo err >&2; } > all.txt 2>&1
cat all.txt
{ echo out2; echo err2 >&2; } &> all2.txt
cat all2.txt
{ echo out3; echo err3 >&2; } &>> all2.txt
cat all2.txt
