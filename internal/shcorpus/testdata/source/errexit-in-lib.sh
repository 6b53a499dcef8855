set -e
printf 'echo lib start\nfalse\necho REACHED in lib\n' > lib.sh
source ./lib.sh
echo REACHED
