a=(a b c d e)
echo "${a[@]:1:2}"
echo "${a[@]:3}"
echo "${a[@]: -2}"
echo "${a[@]:0:0}."
