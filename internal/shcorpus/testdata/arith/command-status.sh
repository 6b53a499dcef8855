(( 0 )); echo $?
(( 5 )); echo $?
(( x = 0 )); echo $?
if (( 3 > 2 )); then echo bigger; fi
