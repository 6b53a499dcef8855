printf 'l1\nl2\n' > in.txt
exec 3< in.txt
read -r a <&3
read -r -u 3 b
exec 3<&-
echo "$a $b"
