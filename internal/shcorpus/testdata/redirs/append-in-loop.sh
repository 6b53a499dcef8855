for i in 1 2 3; do echo "entry $i" >> list.txt; done
wc -l < list.txt
tail -n 1 list.txt
