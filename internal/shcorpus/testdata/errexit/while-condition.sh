set -e
i=0
while [ $i -lt 3 ]; do
  i=$((i+1))
done
echo "i=$i"
until false; do break; done
echo end
