read -r a b c <<< "only-one"
echo "[$a][$b][$c]"
