cmd='echo "evaluated $((2+3))"'
eval "$cmd"
var=name
eval "$var=dynamic"
echo "$name"
eval 'for i in 1 2; do echo $i; done'
