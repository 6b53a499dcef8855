for i in $(seq 1 3); do echo "n$i"; done
seq 5 -2 1 | tr '\n' ' '; echo
seq -s, 1 4
