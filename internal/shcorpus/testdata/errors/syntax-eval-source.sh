eval 'echo first
if then
echo REACHED'
echo "eval status $?"
printf 'echo in-lib\nfi\necho REACHED\n' > lib.sh
. ./lib.sh
echo "source status $?"
x=$(if then)
echo "unreached: bash stops at the syntax error"
