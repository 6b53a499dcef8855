f() { local -a x=(in function); echo "${x[*]}"; }
x=(global)
f
echo "${x[*]}"
