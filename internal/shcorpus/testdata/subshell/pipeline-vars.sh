x=before
echo changed | read -r x
echo "$x"
