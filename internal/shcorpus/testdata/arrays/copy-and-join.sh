a=(x y z)
b=("${a[@]}")
b[0]=changed
echo "${a[0]} ${b[0]}"
join() { local IFS="$1"; shift; echo "$*"; }
join , "${a[@]}"
join - a b c
