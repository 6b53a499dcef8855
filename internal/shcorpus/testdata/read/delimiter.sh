read -r -d ';' first <<< "one;two"
echo "$first"
printf 'a\0b\0' | while IFS= read -r -d '' item; do echo "item=$item"; done
