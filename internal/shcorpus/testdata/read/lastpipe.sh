shopt -s lastpipe
n=0
printf '1\n2\n' | while read -r x; do n=$((n+x)); done
echo "n=$n"
