my_a=1 my_b=2 other=3
echo "${!my_@}"
