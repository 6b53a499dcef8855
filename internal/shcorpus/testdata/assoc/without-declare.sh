m[foo]=bar
m[baz]=qux
echo "${m[foo]} ${m[baz]} ${m[0]}"
