a=(a b c)
echo "${a[-1]} ${a[-3]}"
a[-1]=Z
echo "${a[@]}"
