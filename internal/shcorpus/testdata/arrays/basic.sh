a=(one two three)
echo "${a[0]} ${a[2]}"
echo "${#a[@]}"
echo "${a[@]}"
a+=(four)
echo "${a[3]} ${#a[@]}"
