x=expanded
cat <<"EOF"
$x ${x} $((1+1))
EOF
