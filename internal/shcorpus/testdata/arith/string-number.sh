x=" 42 "
echo $((x + 1))
y=08
echo $((10#$y + 1))
