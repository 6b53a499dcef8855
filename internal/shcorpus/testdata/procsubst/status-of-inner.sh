read -r x < <(echo val; exit 3)
echo "x=$x status=$?"
