a=1 b=two
arr=(x y z)
cat <<EOF
simple $a ${b}
arith $((a + 41))
cmd $(echo sub) `echo back`
array ${arr[1]} ${#arr[@]}
escaped \$a \`x\` \\ backslash-n:\n
quotes "double" 'single'
EOF
