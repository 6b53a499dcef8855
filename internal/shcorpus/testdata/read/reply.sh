read <<< "  padded  "
echo "[$REPLY]"
IFS= read -r <<< "  kept  "
echo "[$REPLY]"
