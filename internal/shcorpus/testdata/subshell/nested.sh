( ( ( echo deep ) ) )
echo $( echo $( echo nested ) )
