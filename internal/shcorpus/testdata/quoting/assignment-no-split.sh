x="a b   c"
y=$x
echo "$y"
z=*
echo "$z"
