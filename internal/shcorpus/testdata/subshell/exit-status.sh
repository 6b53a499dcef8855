( exit 3 ); echo $?
( true; false ); echo $?
