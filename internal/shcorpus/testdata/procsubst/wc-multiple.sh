wc -l <(seq 3) <(seq 5) | awk '{print $1}'
