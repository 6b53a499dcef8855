set -x
x="a b"; n=3
arr=($x "c d" 1)
arr+=(e)
for i in $x "lit"; do :; done
for j; do :; done
(( n > 2 )) && echo big
(( n++ ))
[[ $x == a* ]]
[[ -n $n && $n -gt 1 ]]
[[ ! -z "$x" ]]
[[ $x =~ ^a ]]
local_v=1
case $n in 4) echo four;; esac
while (( n < 5 )); do (( n++ )); done
