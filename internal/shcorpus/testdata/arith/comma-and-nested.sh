echo $(( a = 2, b = a + 3, a * b ))
echo $(( $(( 2 + 2 )) * 2 ))
