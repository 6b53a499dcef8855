read -r a b <<< "first second third"
echo "$a|$b"
tr a-z A-Z <<< 'here string'
x="multi
line"
wc -l <<< "$x"
cat <<< ''
echo end
