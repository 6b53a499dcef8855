set -e
let x=1
echo "x=$x"
let y=0
echo REACHED
