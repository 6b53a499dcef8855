x=v
cat <<E"O"F
$x
EOF
cat <<\EOF
$x \n
EOF
