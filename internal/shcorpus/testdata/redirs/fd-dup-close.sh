{ echo to-3 >&3; } 3>&1
( exec 1>&-; echo closed 2>/dev/null ) ; echo "status $?"
