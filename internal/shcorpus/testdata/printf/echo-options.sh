echo -n "no newline"; echo
echo -e 'a\tb'
echo -E 'a\tb'
echo 'a\tb'
echo -- -n
echo -ne 'x\ny\n'
