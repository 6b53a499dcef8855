true; echo $?
false; echo $?
:; echo $?
: ignored args $(echo evaluated >&2)
