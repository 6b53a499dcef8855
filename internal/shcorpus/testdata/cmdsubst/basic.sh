x=$(echo hello)
y=`echo world`
echo "$x $y"
echo "$(printf 'a\n\n\n')|"
