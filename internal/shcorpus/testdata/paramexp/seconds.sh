echo "$SECONDS"
SECONDS=100
echo "$SECONDS"
(( SECONDS >= 100 )) && echo ok
