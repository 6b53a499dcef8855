x=3
echo "$(( x +* 2 ))" skipped; echo "same line: skipped too"
echo "next line runs, status $?"
echo $(( 2 ** ))
echo $(( 1 @ 2 ))
echo $(( 3 = 4 ))
echo $(( (1 + 2 ) * ))
echo "end"
