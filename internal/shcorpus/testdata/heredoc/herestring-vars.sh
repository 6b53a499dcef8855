x="a b"
cat <<< $x
cat <<< "$x  spaced"
read -r first rest <<< "$x c"
echo "$first|$rest"
