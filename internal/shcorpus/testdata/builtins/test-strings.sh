[ -z "" ] && echo empty
[ -n x ] && echo nonempty
[ abc = abc ] && echo equal
[ abc != abd ] && echo differ
[ 10 -gt 9 ] && echo "numeric gt"
[[ 10 > 9 ]] || echo "string 10 < 9"
[ a \< b ] && echo "a before b"
