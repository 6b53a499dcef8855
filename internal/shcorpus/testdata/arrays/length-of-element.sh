a=(hello hi)
echo "${#a[0]} ${#a[1]} ${#a}"
