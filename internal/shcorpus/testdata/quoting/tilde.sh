HOME=/home/tester
echo ~ ~/x "~" '~'
echo a=~/p
