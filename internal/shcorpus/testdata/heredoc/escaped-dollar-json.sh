cat > a.json <<EOF
{"price": "\$5", "path": "\$HOME/x", "tpl": "\${var}"}
EOF
cat a.json
