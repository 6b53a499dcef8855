cat <<EOF && echo "then ran"
body
EOF
cat <<EOF || echo "not printed"
second
EOF
