echo 'source ./b.sh; echo a' > a.sh
echo 'echo b' > b.sh
source ./a.sh
