x=$(echo "(paren)"; echo ')')
echo "$x"
