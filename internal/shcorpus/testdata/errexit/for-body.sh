set -e
for f in a b c; do
  echo "$f"
  [ "$f" != b ]
done
echo REACHED
