echo() { builtin echo "wrapped: $*"; }
echo hi
unset -f echo
echo plain
