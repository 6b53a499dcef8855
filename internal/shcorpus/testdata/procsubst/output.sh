echo hello > >(tr a-z A-Z > out.txt)
wait
cat out.txt
