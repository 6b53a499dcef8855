a=5
(( b = a > 3 ? a * 2 : 0 ))
echo "b=$b"
(( a > 10 )) || echo "not > 10"
