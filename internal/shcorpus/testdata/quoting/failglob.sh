touch a.txt b.txt
shopt -s failglob
echo *.txt
echo *.none; echo "status $?"
for f in *.none; do echo "loop $f"; done; echo "for status $?"
echo "*.none" '*.none' \*.none
ls [xy].none; echo "bracket $?"
echo "after"
shopt -u failglob
echo *.none
shopt -s failglob
f() { echo in-f *.none; echo "f continues"; }
f; echo "after f $?"
