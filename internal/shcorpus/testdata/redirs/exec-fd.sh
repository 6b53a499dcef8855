exec 3> out.txt
echo one >&3
echo two >&3
exec 3>&-
cat out.txt
