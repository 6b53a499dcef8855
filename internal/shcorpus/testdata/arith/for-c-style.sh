for ((i = 0; i < 5; i += 2)); do echo "i=$i"; done
for ((j = 3; j > 0; j--)); do printf '%d ' $j; done
echo
