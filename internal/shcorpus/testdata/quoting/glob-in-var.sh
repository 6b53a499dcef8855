touch f1 f2
p="f*"
echo $p
echo "$p"
set -f
echo $p
