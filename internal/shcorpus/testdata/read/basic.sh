echo "hello world" | { read a b; echo "$b $a"; }
read -r x <<< 'back\slash'
echo "$x"
read y <<< 'back\slash'
echo "$y"
