set -e
count=0
count=$((count + 1))
echo "count=$count"
((count++))
echo "count=$count"
((count - 2)) && echo "nonzero"
echo "after && list"
