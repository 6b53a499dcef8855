echo -e "x\c"; echo "|"
echo -n; echo "|"
