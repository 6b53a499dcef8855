sleep 1 &
disown
jobs | wc -l
echo done
