IFS=, read -r a b c <<< ",mid,"
echo "[$a][$b][$c]"
