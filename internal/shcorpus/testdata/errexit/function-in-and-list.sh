set -e
f() { false; echo "reached: errexit off inside an && list"; }
f && echo "f returned 0"
echo end
