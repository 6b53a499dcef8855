echo 'y=dotted' > lib.sh
. ./lib.sh
echo "$y"
