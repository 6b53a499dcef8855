echo 'echo "sourced with $# args: $*"' > lib.sh
set -- outer
source ./lib.sh a b
echo "after: $*"
