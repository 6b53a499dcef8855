a=3 b=4
echo $((a*a + b*b))
c="a + b"
echo $((c * 2))
echo $(( $a$b ))
