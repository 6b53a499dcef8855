{ echo bg; } > bg.txt &
wait
cat bg.txt
