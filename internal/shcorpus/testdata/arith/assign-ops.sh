x=5
(( x += 3 )); echo $x
(( x -= 1 )); echo $x
(( x *= 2 )); echo $x
(( x /= 3 )); echo $x
(( x %= 3 )); echo $x
(( x <<= 2 )); echo $x
