echo 'x=from-lib; greet() { echo "hi $1"; }' > lib.sh
source ./lib.sh
echo "$x"
greet there
