cat < /dev/null
echo "empty read"
wc -c < /dev/null
