let "x = 0"; echo "$?"
let "x = 3"; echo "$?"
let "x++"; echo "$? $x"
