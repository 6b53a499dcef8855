echo hello > >(tr a-z A-Z > out.txt)
wait
sleep 0.2
cat out.txt
