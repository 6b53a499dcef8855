true &
[ -n "$!" ] && echo "\$! is set"
wait
