IFS=: read -r user pass uid <<< "root:x:0:0:root:/root"
echo "$user $uid"
IFS=, read -r a b <<< "1,2,3,4"
echo "a=$a b=$b"
