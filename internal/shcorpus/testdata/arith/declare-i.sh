declare -i n
n="3 + 4"
echo $n
n+=10
echo $n
n=abc
echo $n
