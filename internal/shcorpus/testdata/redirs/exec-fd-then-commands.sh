exec 4>&1
tr a-z A-Z < /dev/null > f1; echo "a $?"
echo x | tr a-z A-Z; echo "b $?"
tr a-z A-Z < <(echo hi); echo "c $?"
ls f1 2> err.txt >&4; echo "d $?"
exec 4>&-
ls f1; echo "e $?"
exec 5>/dev/null
cat f1 < /dev/null; echo "f $?"
exec 5>&-
echo "g $?"
