readarray -t parts < <(echo "a,b,c" | tr , '\n')
echo "${parts[2]}${parts[0]}"
