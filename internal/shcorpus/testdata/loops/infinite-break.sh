n=0
while :; do n=$((n+1)); [ $n -ge 4 ] && break; done
echo $n
