cat <<EOF
line
 EOF
EOF
