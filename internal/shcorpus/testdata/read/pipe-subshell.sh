n=0
printf '1\n2\n' | while read -r x; do n=$((n+x)); done
echo "n=$n (pipeline body runs in a subshell)"
