IFS=: 
line="a:b:c"
set -- $line
echo "$# $2"
IFS=' '
x="  spaced   out  "
set -- $x
echo "$#"
