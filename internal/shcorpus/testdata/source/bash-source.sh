echo 'echo "${BASH_SOURCE[0]}"' > lib.sh
source ./lib.sh
echo "${BASH_SOURCE[0]}"
