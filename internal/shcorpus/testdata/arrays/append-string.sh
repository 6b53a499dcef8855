a=(one)
a[0]+=-more
a+=(two three)
echo "${a[@]}"
s=abc
s+=def
echo "$s"
