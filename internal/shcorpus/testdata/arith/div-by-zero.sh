echo start
echo $((1 / 0))
echo "after: bash continues"
