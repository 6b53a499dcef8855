let a=2+3 b=a*2
echo "$a $b"
let "c = a > b"
echo "c=$c status=$?"
