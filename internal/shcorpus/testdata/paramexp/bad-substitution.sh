echo start
echo "${x!!}"
echo "after: bash continues"
