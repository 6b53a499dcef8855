name=
list="a b a"
cat <<EOF
default: ${name:-anon}
replace: ${list// /,}
length: ${#list}
upper: ${list^^}
EOF
