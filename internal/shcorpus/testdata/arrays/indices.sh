a=([2]=x [5]=y)
echo "${!a[@]}"
a[9]=z
echo "${!a[@]} ${#a[@]}"
unset 'a[5]'
echo "${!a[@]}"
