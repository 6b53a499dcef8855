set -- top1 top2
f() { echo "in f: $# $*"; }
f a b c
echo "top: $# $*"
