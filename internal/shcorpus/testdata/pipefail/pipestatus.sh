true | false | (exit 5) | true
echo "${PIPESTATUS[@]}"
echo "${#PIPESTATUS[@]}"
