x="a   b    c"
printf '[%s]' $x; echo
printf '[%s]' "$x"; echo
y=""
printf '[%s]' $y "$y"; echo
