trap 'echo "error on line $LINENO"' ERR
echo ok
false
echo done
